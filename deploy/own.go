package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A stack owns what it made, and only that.
//
// A kind that is about to create a named resource first looks for one of
// that name (claim). One that is there and that the stack has no record
// of fails the resource with AlreadyExistsError, as CloudFormation's
// create handlers fail with AlreadyExists, unless the deploy was asked to
// take it over (Options.Adopt): then it is the stack's own, recorded and
// deleted with it. Before any resource is made, every resource whose name
// is known before its turn is looked for the same way (preflight), so a
// deploy refused for one changes nothing.
//
// The intent to create is recorded before the create call (an intent:
// the logical id, the type, the name, the spec, state "creating"), so a
// deploy stopped between the call and its record (a server killed) leaves
// nothing unowned:
//
//	intent recorded ──create call──▶ made ──record written──▶ recorded
//	      │                            │
//	      │ stopped                    │ stopped
//	      ▼                            ▼
//	next deploy: not there,      next deploy: there, and the intent
//	created as any new one       says it is the stack's: taken as made
//
// A delete removes the intended resources that are there; a deploy
// removes those its template no longer names.
//
// An intent is matched by its name, so it is honoured (the resource
// taken, or deleted) only when it can be the intent's: never when
// another stack's record has it, nor when the service tells that it was
// made before the intent was recorded (its creation time earlier than
// the intent's, less intentSkew). Where the service tells no creation
// time (an SNS topic, a local function) the name and the other stacks'
// records decide.

// stateCreating is an intent's state: the create call may have been made.
const stateCreating = "creating"

// intent is a resource a deploy is about to create, recorded before the
// call.
type intent struct {
	LogicalID string `json:"logicalId"`
	// Name is what it is created under, as its kind's find looks it up
	// (a schedule's is GROUP/NAME).
	Name  string `json:"name"`
	State string `json:"state"`
	// At is when the intent was recorded (zero in a record of an
	// earlier version).
	At time.Time `json:"at,omitzero"`
	Record
}

// intentSkew is how much earlier than its intent a resource may tell it
// was made and still be the intent's: the clocks of this server and of
// the AWS endpoint may differ a little.
const intentSkew = 5 * time.Second

// AlreadyExistsError is a resource the deploy would create that is there
// already, made by hand or by another stack: the stack does not take what
// it did not make unless asked to (--adopt).
type AlreadyExistsError struct {
	Name string
	// Stack is the other stack that has it, "" when none does.
	Stack string
}

func (e *AlreadyExistsError) Error() string {
	if e.Stack != "" {
		return fmt.Sprintf("%s already exists (HandlerErrorCode: AlreadyExists): it is stack %s's", e.Name, e.Stack)
	}
	return fmt.Sprintf("%s already exists (HandlerErrorCode: AlreadyExists); deploy with --adopt to take it over", e.Name)
}

// A finder looks a resource up by the name it is created under.
type finder interface {
	// nameOf is the name apply would create r under.
	nameOf(x *run, r *resource) (string, error)
	// find returns the resource of that name as a record (its Physical
	// and Attrs, and its created time when the service tells it), nil
	// when it is not there.
	find(ctx context.Context, x *run, name string) (*Record, error)
}

// family is what a type makes: SAM's types make what the CloudFormation
// types they stand for make.
func family(typ string) string {
	switch typ {
	case samStateMachine:
		return "AWS::StepFunctions::StateMachine"
	case samSimpleTbl:
		return dynamoTable
	case samFunction:
		return lambdaFunction
	}
	return typ
}

// ownedAs returns what this stack has of the resource found under that
// type and name: the record of the last deploy that has it under another
// logical id (its physical id the same), or an intent of a deploy that
// stopped (its name the same) that can have made it (intentHas). Nil
// when the stack has no record of it.
func (x *run) ownedAs(ctx context.Context, typ, name string, found *Record) (*Record, error) {
	fam := family(typ)
	if x.prev != nil && found.Physical != "" {
		for _, id := range x.prev.Order {
			if rec := x.prev.Resources[id]; rec != nil && !rec.Skipped && family(rec.Type) == fam && rec.Physical == found.Physical {
				return rec, nil
			}
		}
	}
	for _, it := range x.pending {
		if family(it.Type) == fam && it.Name == name {
			why, err := x.intentHas(ctx, it, found)
			if err != nil {
				return nil, err
			}
			if why == "" {
				return &it.Record, nil
			}
		}
	}
	return nil, nil
}

// intentHas says why the resource found under an intent's name is not
// the one the intent's create made, "" when it can be: another stack's
// record has it, or it was made before the intent was recorded.
func (x *run) intentHas(ctx context.Context, it *intent, found *Record) (string, error) {
	if !it.At.IsZero() && !found.created.IsZero() && found.created.Before(it.At.Add(-intentSkew)) {
		return fmt.Sprintf("it was made at %s, before the deploy that stopped meant to make it (%s)",
			found.created.UTC().Format(time.RFC3339), it.At.UTC().Format(time.RFC3339)), nil
	}
	other, err := x.otherStack(ctx, it.Type, found.Physical)
	if err != nil {
		return "", fmt.Errorf("%s: %w", it.Name, err)
	}
	if other != "" {
		return "it is stack " + other + "'s", nil
	}
	return "", nil
}

// claim is what a kind does before it creates resource r under name:
// found is the resource of that name that is there now (nil when none
// is), made the record the create would give (Physical as known before
// the call, Spec). With none there, the intent is recorded and claim
// returns nil: create it. With one there that this stack has a record
// of, or that the deploy takes over (Options.Adopt), claim returns what
// the stack knows of it (its Spec, empty when nothing): bring it to the
// template's. Otherwise it returns an AlreadyExistsError.
func (x *run) claim(ctx context.Context, r *resource, name string, found, made *Record) (*Record, error) {
	if found == nil {
		x.settle(r.Type, name)
		it := &intent{LogicalID: r.ID, Name: name, State: stateCreating, At: time.Now().UTC(),
			Record: Record{Type: r.Type, Physical: made.Physical, Spec: made.Spec, Function: made.Function}}
		x.rec.Creating = append(slices.DeleteFunc(x.rec.Creating, func(o *intent) bool { return o.LogicalID == r.ID }), it)
		if err := x.checkpoint(ctx, x.merged()); err != nil {
			return nil, err
		}
		return nil, nil
	}
	own, err := x.ownedAs(ctx, r.Type, name, found)
	if err != nil {
		return nil, err
	}
	if own != nil {
		if x.settle(r.Type, name) {
			x.note(r.ID, "made by a deploy that stopped before recording it")
		}
		return own, nil
	}
	other, err := x.whose(ctx, r.Type, name, found)
	if err != nil {
		return nil, err
	}
	if other != "" || !x.opts.Adopt {
		return nil, &AlreadyExistsError{Name: name, Stack: other}
	}
	x.adopted[r.ID] = true
	x.settle(r.Type, name)
	return &Record{Physical: found.Physical}, nil
}

// settle drops the intents of the last deploy for the resource of that
// type and name: it is this deploy's to make or take. It says whether
// there was one.
func (x *run) settle(typ, name string) bool {
	n := len(x.pending)
	x.pending = slices.DeleteFunc(x.pending, func(it *intent) bool { return family(it.Type) == family(typ) && it.Name == name })
	return len(x.pending) < n
}

// note adds a note to the change a resource is reported with.
func (x *run) note(id, text string) {
	if x.notes == nil {
		x.notes = map[string]string{}
	}
	x.notes[id] = text
}

// whose names the other stack whose record has the resource found under
// name, "" when none has (it is no stack's); an error when that cannot be
// told.
func (x *run) whose(ctx context.Context, typ, name string, found *Record) (string, error) {
	other, err := x.otherStack(ctx, typ, found.Physical)
	if err != nil {
		return "", fmt.Errorf("%s already exists, and whose it is cannot be told: %w", name, err)
	}
	return other, nil
}

// otherStack names the other stack deployed here whose record has the
// resource of that type and Ref value, "" when none has. A record that
// cannot be read is an error: what it holds is not known, so nothing is
// taken on the strength of it. The other stacks' records are read once a
// deploy (othersOwn).
func (x *run) otherStack(ctx context.Context, typ, physical string) (string, error) {
	if x.others == nil && x.othersErr == nil {
		x.others, x.othersErr = x.othersOwn(context.WithoutCancel(ctx))
	}
	if x.othersErr != nil {
		return "", x.othersErr
	}
	return x.others[family(typ)+"\x00"+physical], nil
}

// othersOwn is what the other stacks deployed here own: the stack of
// each resource, by its type's family and Ref value.
func (x *run) othersOwn(ctx context.Context) (map[string]string, error) {
	stacks, err := x.d.Records.ListStacks(ctx)
	if err != nil {
		return nil, fmt.Errorf("the stacks deployed here cannot be listed: %w", err)
	}
	own := map[string]string{}
	for _, s := range stacks {
		if s == x.opts.StackName {
			continue
		}
		rec, err := x.d.readRecord(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("stack %s's record cannot be read: %w", s, err)
		}
		if rec == nil {
			continue
		}
		for _, r := range rec.Resources {
			if r != nil && !r.Skipped {
				key := family(r.Type) + "\x00" + r.Physical
				if _, ok := own[key]; !ok {
					own[key] = s
				}
			}
		}
	}
	return own, nil
}

// removeIntent deletes the resource an intent names, when it is there
// and can be the intent's (intentHas: one that is not is left, with a
// warning). It says whether the intent is settled: false when it cannot
// be looked up (no AWS endpoint is set).
func (x *run) removeIntent(ctx context.Context, it *intent) (bool, error) {
	k, _ := kinds[it.Type].(finder)
	if k == nil {
		return true, nil
	}
	if isAtEndpoint(it.Type) && x.d.AWS == nil {
		x.warn("%s (%s) %s may have been made by a deploy that stopped: no AWS endpoint is set to look for it at", it.LogicalID, it.Type, it.Name)
		return false, nil
	}
	found, err := k.find(ctx, x, it.Name)
	if err != nil || found == nil {
		return err == nil, err
	}
	why, err := x.intentHas(ctx, it, found)
	if err != nil {
		return false, &ResourceError{LogicalID: it.LogicalID, Type: it.Type, Err: err}
	}
	if why != "" {
		x.warn("%s (%s) %s is left as it is: a deploy that stopped meant to make it, but %s", it.LogicalID, it.Type, it.Name, why)
		return true, nil
	}
	rec := it.Record
	rec.Physical, rec.Attrs = found.Physical, found.Attrs
	if err := kinds[it.Type].remove(ctx, x, it.LogicalID, &rec); err != nil {
		return false, &ResourceError{LogicalID: it.LogicalID, Type: it.Type, Err: err}
	}
	x.report.Changes = append(x.report.Changes, Change{LogicalID: it.LogicalID, Type: it.Type, Physical: rec.Physical, Action: Deleted,
		Note: "made by a deploy that stopped before recording it"})
	return true, nil
}

// removePending deletes what the last deploy's unsettled intents made:
// resources this deploy's template no longer names under those names.
func (x *run) removePending(ctx context.Context) error {
	for _, it := range slices.Backward(slices.Clone(x.pending)) {
		if x.recordedAs(it) {
			x.settle(it.Type, it.Name)
			continue
		}
		done, err := x.removeIntent(ctx, it)
		if err != nil {
			return err
		}
		if !done {
			continue
		}
		x.settle(it.Type, it.Name)
		if x.stack != nil { // (a delete writes its record at its end)
			if err := x.checkpoint(ctx, x.merged()); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordedAs says whether this deploy recorded the resource an intent
// names (its Ref value the same): it is not removed.
func (x *run) recordedAs(it *intent) bool {
	for _, rec := range x.rec.Resources {
		if rec != nil && family(rec.Type) == family(it.Type) && it.Physical != "" && rec.Physical == it.Physical {
			return true
		}
	}
	return false
}

// preflightRefs resolves a resource's properties before anything is
// made: a Ref or Fn::GetAtt to a resource gives unresolved, and a name
// that holds it is not looked for until its turn.
type preflightRefs struct{ x *run }

const unresolved = "\x00unresolved\x00"

func (preflightRefs) Ref(string) (string, error)         { return unresolved, nil }
func (preflightRefs) GetAtt(string, string) (any, error) { return unresolved, nil }
func (p preflightRefs) ImportValue(name string) (string, error) {
	return p.x.ImportValue(name)
}

// preflight looks, before anything of the deploy is made, for each
// resource whose name is known already: one there that the stack has no
// record of fails the deploy (every one found is named).
func (x *run) preflight(ctx context.Context) error {
	if x.opts.Adopt {
		return nil // taken over as each comes
	}
	quietRun := *x
	quietRun.report = &Report{}
	t := x.stack.Template()
	var errs []error
	for _, id := range x.stack.Order {
		def := t.Resources[id]
		k, ok := kinds[def.Type].(finder)
		if !ok || (isAtEndpoint(def.Type) && x.d.AWS == nil) {
			continue
		}
		if prev := x.prevOf(id); prev != nil && !prev.Skipped && family(prev.Type) == family(def.Type) {
			// Made by the stack: a new name is looked for at its turn.
			continue
		}
		props, err := x.stack.Properties(id, preflightRefs{x})
		if err != nil {
			continue // told at its turn
		}
		r := &resource{ID: id, Type: def.Type, Props: props, Def: def}
		name, err := k.nameOf(&quietRun, r)
		if err != nil || name == "" || strings.Contains(name, unresolved) {
			continue
		}
		found, err := k.find(ctx, x, name)
		if err != nil || found == nil {
			continue
		}
		own, err := x.ownedAs(ctx, def.Type, name, found)
		if err == nil && own != nil {
			continue
		}
		if err == nil {
			var other string
			if other, err = x.whose(ctx, def.Type, name, found); err == nil {
				err = &AlreadyExistsError{Name: name, Stack: other}
			}
		}
		errs = append(errs, &ResourceError{LogicalID: id, Type: def.Type, Err: err})
	}
	return errors.Join(errs...)
}

// prevOf is the last deploy's record of a logical id, nil when none.
func (x *run) prevOf(id string) *Record {
	if x.prev == nil {
		return nil
	}
	return x.prev.Resources[id]
}

// oldSpec decodes the spec the stack knows a taken-over resource by into
// v; it says whether there was one.
func oldSpec(own *Record, v any) bool {
	return own != nil && len(own.Spec) > 0 && json.Unmarshal(own.Spec, v) == nil
}
