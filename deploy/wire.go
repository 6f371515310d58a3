package deploy

import (
	"context"
	"errors"
	"fmt"

	"stepwise/wiring"
)

// Event sources
//
// What a template says triggers what — a function's or a state
// machine's SAM Events, an AWS::Lambda::EventSourceMapping, an
// AWS::Events::Rule's targets, an API's routes — becomes wiring.Wires
// kept on the record of the resource that declares them (Record.Wires).
// After every deploy, delete and at a server's start the stack's wires
// go to Deployer.Wiring, which delivers their events (package wiring):
// the record is what runs, so a server started again runs what was
// deployed before.
//
// The readers of SAM event types register in eventReaders (one file per
// family: wire_queue.go, wire_rule.go, wire_api.go, ...); an event type
// no reader knows is warned of and not delivered.

// Wiring is where a stack's wires go: the server's wiring.Host.
type Wiring interface {
	// SetWires makes wires the stack's event sources (none: removes
	// them). An error says which do not run, and why; they stay listed.
	SetWires(ctx context.Context, stack string, wires []wiring.Wire) error
}

// eventReader turns a SAM event of its type, of resource id's event
// name, into a wire whose events go to target. props are the event's
// Properties.
type eventReader func(x *run, r *resource, name string, props resProps, target wiring.Target) (wiring.Wire, error)

// eventReaders are the readers by SAM event type (SQS, SNS, S3,
// EventBridgeRule, Api, ...).
var eventReaders = map[string]eventReader{}

func registerEvent(typ string, read eventReader) {
	if _, dup := eventReaders[typ]; dup {
		panic("deploy: two readers of events of type " + typ)
	}
	eventReaders[typ] = read
}

// eventWires reads a SAM resource's Events into wires to target,
// skipping with a warning those whose type is in skip (handled
// elsewhere) or that no reader knows.
func (x *run) eventWires(r *resource, target wiring.Target, skip ...string) ([]wiring.Wire, error) {
	events, ok, err := propsOf(r).obj("Events")
	if err != nil || !ok {
		return nil, err
	}
	var wires []wiring.Wire
	for _, name := range sortedKeys(events.m) {
		ev, ok, err := events.obj(name)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, events.errorf(name, "an event is {Type, Properties}")
		}
		typ, err := ev.str("Type")
		if err != nil {
			return nil, err
		}
		if contains(skip, typ) {
			continue
		}
		read := eventReaders[typ]
		if read == nil {
			x.warn("%s (%s): event %s of type %s is not delivered here", r.ID, r.Type, name, typ)
			continue
		}
		props, _, err := ev.obj("Properties")
		if err != nil {
			return nil, err
		}
		if props.m == nil {
			props = resProps{m: map[string]any{}, at: ev.path("Properties")}
		}
		w, err := read(x, r, name, props, target)
		if err != nil {
			return nil, err
		}
		if w.ID == "" {
			w.ID = r.ID + "/" + name
		}
		wires = append(wires, w)
	}
	return wires, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// stackWires are the wires of a stack's record, in its order.
func stackWires(rec *stackRecord) []wiring.Wire {
	var wires []wiring.Wire
	for _, id := range rec.Order {
		if r := rec.Resources[id]; r != nil {
			wires = append(wires, r.Wires...)
		}
	}
	return wires
}

// setWires hands the stack's wires to Wiring; those that do not run are
// warned of (the deploy stands).
func (x *run) setWires(ctx context.Context, rec *stackRecord) {
	if x.d.Wiring == nil {
		if n := len(stackWires(rec)); n > 0 {
			x.warn("%d event sources are not delivered: this server does not run them", n)
		}
		return
	}
	if err := x.d.Wiring.SetWires(context.WithoutCancel(ctx), rec.Name, stackWires(rec)); err != nil {
		var nr *wiring.NotRunningError
		if errors.As(err, &nr) {
			for _, p := range nr.Problems {
				x.warn("event source %s", p)
			}
			return
		}
		x.warn("event sources: %v", err)
	}
}

// restoreWires hands every stack's wires to Wiring, at a server's
// start.
func (d *Deployer) restoreWires(ctx context.Context, name string, rec *stackRecord) error {
	if d.Wiring == nil {
		return nil
	}
	err := d.Wiring.SetWires(ctx, name, stackWires(rec))
	var nr *wiring.NotRunningError
	if errors.As(err, &nr) {
		if d.Log != nil {
			for _, p := range nr.Problems {
				d.Log.Warn("event source does not run", "stack", name, "problem", p)
			}
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("stack %s, event sources: %w", name, err)
	}
	return nil
}

// functionTarget is the target a function's events go to.
func (x *run) functionTarget(name string) wiring.Target {
	return wiring.Target{Type: wiring.ToFunction, Name: name, ARN: x.functionArn(name)}
}
