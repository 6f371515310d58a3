package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"stepwise/deploy/cfn"
	"stepwise/scheduler"
)

// Stepwise::Trigger::FileArrival, a file-arrival trigger on the server's
// scheduler in process: its properties are the file-trigger API's (Name,
// Folder or Bucket and Prefix, Pattern, StateMachineArn, PollSeconds,
// StableSeconds, State); its Ref is its name. A changed trigger is put
// again (the files it started stay recorded), a new Name replaces it.
// A SAM state machine's event of Type FileArrival is such a trigger of
// logical id <StateMachine><Event>, targeting the state machine.
type fileTriggerKind struct{}

const fileTriggerType = "Stepwise::Trigger::FileArrival"

func init() { register(fileTriggerKind{}, fileTriggerType) }

// triggerOf reads a trigger's properties, its name given its default.
func (x *run) triggerOf(r *resource) (*scheduler.FileTrigger, error) {
	var t scheduler.FileTrigger
	if err := propsOf(r).decodeInto("", &t); err != nil {
		return nil, err
	}
	if t.CreationDate != nil || t.LastModificationDate != nil {
		return nil, fmt.Errorf("Properties: CreationDate and LastModificationDate are not properties")
	}
	if t.Name == "" {
		t.Name = x.name(r.ID, 40)
	}
	return &t, nil
}

func (fileTriggerKind) nameOf(x *run, r *resource) (string, error) {
	t, err := x.triggerOf(r)
	if err != nil {
		return "", err
	}
	return t.Name, nil
}

func (fileTriggerKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	if x.d.Scheduler == nil {
		return nil, "", errNoScheduler
	}
	t, err := x.triggerOf(r)
	if err != nil {
		return nil, "", err
	}
	spec := specOf(t)
	sched := x.d.Scheduler
	var old scheduler.FileTrigger
	exists := false
	if prev != nil {
		_ = json.Unmarshal(prev.Spec, &old)
		_, err := sched.GetFileTrigger(ctx, old.Name)
		switch {
		case err == nil:
			exists = true
		case !isSchedulerCode(err, "ResourceNotFoundException"):
			return nil, "", err
		}
	}
	rec := &Record{Physical: t.Name, Spec: spec}
	put := func() error {
		in := *t // the service fills in its defaults
		return sched.PutFileTrigger(ctx, &in)
	}
	dropOld := func() error {
		if err := sched.DeleteFileTrigger(ctx, old.Name); err != nil && !isSchedulerCode(err, "ResourceNotFoundException") {
			return err
		}
		return nil
	}
	if exists && old.Name == t.Name {
		if sameSpec(prev, spec) {
			return rec, Unchanged, nil
		}
		if err := put(); err != nil {
			return nil, "", err
		}
		return rec, Updated, nil
	}
	found, err := fileTriggerKind{}.find(ctx, x, t.Name)
	if err != nil {
		return nil, "", err
	}
	own, err := x.claim(ctx, r, t.Name, found, rec)
	if err != nil {
		return nil, "", err
	}
	if own != nil {
		// There already, and the stack's: brought to the template's.
		action := Updated
		if bytes.Equal(own.Spec, spec) {
			action = Unchanged
		} else if err := put(); err != nil {
			return nil, "", err
		}
		if exists {
			if err := dropOld(); err != nil {
				return nil, "", err
			}
			action = Replaced
		}
		return rec, action, nil
	}
	if err := put(); err != nil {
		return nil, "", err
	}
	if exists { // renamed: the old one goes
		if err := dropOld(); err != nil {
			return nil, "", err
		}
		return rec, Replaced, nil
	}
	return rec, Created, nil
}

func (fileTriggerKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	if x.d.Scheduler == nil {
		return nil, errNoScheduler
	}
	t, err := x.d.Scheduler.GetFileTrigger(ctx, name)
	switch {
	case isSchedulerCode(err, "ResourceNotFoundException"):
		return nil, nil
	case err != nil:
		return nil, err
	}
	rec := &Record{Physical: name}
	if t.CreationDate != nil {
		rec.created = t.CreationDate.Time
	}
	return rec, nil
}

func (fileTriggerKind) remove(ctx context.Context, x *run, _ string, rec *Record) error {
	if x.d.Scheduler == nil {
		return errNoScheduler
	}
	err := x.d.Scheduler.DeleteFileTrigger(ctx, rec.Physical)
	if isSchedulerCode(err, "ResourceNotFoundException") {
		return nil
	}
	return err
}

// eventTriggers makes the file-arrival triggers of a SAM state machine's
// Events of type FileArrival, each targeting the state machine (smArn),
// as resources of the stack's record of logical id <StateMachine><Event>
// and type Stepwise::Trigger::FileArrival.
func (x *run) eventTriggers(ctx context.Context, r *resource, smArn string) error {
	events, ok, err := propsOf(r).obj("Events")
	if err != nil || !ok {
		return err
	}
	for _, name := range sortedKeys(events.m) {
		ev, ok, err := events.obj(name)
		if err != nil {
			return err
		}
		if !ok {
			return events.errorf(name, "an event is {Type, Properties}")
		}
		if typ, err := ev.str("Type"); err != nil {
			return err
		} else if typ != "FileArrival" {
			continue
		}
		props, _, err := ev.obj("Properties")
		if err != nil {
			return err
		}
		tp := map[string]any{}
		for k, v := range props.m {
			tp[k] = cfn.CopyValue(v)
		}
		if _, given := tp["StateMachineArn"]; given {
			return props.errorf("StateMachineArn", "a FileArrival event starts its own state machine; StateMachineArn is not one of its properties")
		}
		tp["StateMachineArn"] = smArn
		id := r.ID + name
		if _, given := tp["Name"]; !given {
			tp["Name"] = x.name(id, 40)
		}
		if err := x.applyGeneratedAs(ctx, r, id, fileTriggerType, fileTriggerKind{}, tp); err != nil {
			return err
		}
	}
	return nil
}
