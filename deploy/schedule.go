package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode"

	"stepwise/deploy/cfn"
	"stepwise/scheduler"
	"stepwise/wiring"
)

// AWS::Scheduler::ScheduleGroup and AWS::Scheduler::Schedule, on the
// server's scheduler in process. A group's Ref is its name; Fn::GetAtt
// gives Arn, CreationDate, LastModificationDate and State; new Tags are
// put on it, a new Name replaces it. A schedule's properties are the
// Scheduler API's own; its Ref is its name, Fn::GetAtt gives Arn; a
// changed schedule is updated in place, a new Name or GroupName
// replaces it.
type (
	scheduleGroupKind struct{}
	scheduleKind      struct{}
)

const (
	scheduleGroup = "AWS::Scheduler::ScheduleGroup"
	scheduleType  = "AWS::Scheduler::Schedule"
)

func init() {
	register(scheduleGroupKind{}, scheduleGroup)
	register(scheduleKind{}, scheduleType)
	// A SAM state machine's Events become schedules (sam.go's hooks).
	samEvents, samEventsRemove = applySAMEvents, removeSAMEvents
}

// errNoScheduler is a schedule deployed to a server without one.
var errNoScheduler = errors.New("this server has no scheduler to run schedules on")

// isSchedulerCode says whether err is the scheduler's error of that code.
func isSchedulerCode(err error, code string) bool {
	var e *scheduler.Error
	return errors.As(err, &e) && e.Code == code
}

type scheduleGroupSpec struct {
	Name string            `json:"name"`
	Tags map[string]string `json:"tags,omitempty"`
}

func (scheduleGroupKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	if x.d.Scheduler == nil {
		return nil, "", errNoScheduler
	}
	name, err := scheduleGroupKind{}.nameOf(x, r)
	if err != nil {
		return nil, "", err
	}
	tags, err := tagsOf(r.Props["Tags"])
	if err != nil {
		return nil, "", fmt.Errorf("Properties.%w", err)
	}
	spec := scheduleGroupSpec{Name: name, Tags: tags}
	sched := x.d.Scheduler
	var old scheduleGroupSpec
	exists := false
	if prev != nil {
		_ = json.Unmarshal(prev.Spec, &old)
		_, err := sched.GetScheduleGroup(ctx, old.Name)
		switch {
		case err == nil:
			exists = true
		case !isSchedulerCode(err, "ResourceNotFoundException"):
			return nil, "", err
		}
	}
	record := func(a Action) (*Record, Action, error) {
		g, err := sched.GetScheduleGroup(ctx, name)
		if err != nil {
			return nil, "", err
		}
		return &Record{Physical: name, Spec: specOf(spec), Attrs: map[string]any{
			"Arn": g.Arn, "State": g.State,
			"CreationDate":         g.CreationDate.Format(time.RFC3339Nano),
			"LastModificationDate": g.LastModificationDate.Format(time.RFC3339Nano),
		}}, a, nil
	}
	if exists && old.Name == name {
		if sameSpec(prev, specOf(spec)) {
			return record(Unchanged)
		}
		if err := syncSchedulerTags(ctx, sched, sched.GroupArn(name), old.Tags, tags); err != nil {
			return nil, "", err
		}
		return record(Updated)
	}
	found, err := scheduleGroupKind{}.find(ctx, x, name)
	if err != nil {
		return nil, "", err
	}
	own, err := x.claim(ctx, r, name, found, &Record{Physical: name, Spec: specOf(spec)})
	if err != nil {
		return nil, "", err
	}
	if own != nil {
		// There already, and the stack's: brought to the template's.
		var was scheduleGroupSpec
		oldSpec(own, &was)
		if err := syncSchedulerTags(ctx, sched, sched.GroupArn(name), was.Tags, tags); err != nil {
			return nil, "", err
		}
		action := Updated
		if bytes.Equal(own.Spec, specOf(spec)) {
			action = Unchanged
		}
		if exists {
			if err := sched.DeleteScheduleGroup(ctx, old.Name); err != nil && !isSchedulerCode(err, "ResourceNotFoundException") {
				return nil, "", err
			}
			action = Replaced
		}
		return record(action)
	}
	var st []scheduler.Tag
	for _, k := range sortedKeys(tags) {
		st = append(st, scheduler.Tag{Key: k, Value: tags[k]})
	}
	if _, err := sched.CreateScheduleGroup(ctx, name, "", st); err != nil {
		return nil, "", err
	}
	if exists { // renamed: the old one goes, with its schedules
		if err := sched.DeleteScheduleGroup(ctx, old.Name); err != nil && !isSchedulerCode(err, "ResourceNotFoundException") {
			return nil, "", err
		}
		return record(Replaced)
	}
	return record(Created)
}

func (scheduleGroupKind) nameOf(x *run, r *resource) (string, error) {
	name, err := propsOf(r).str("Name")
	return cmpOr(name, x.name(r.ID, 64)), err
}

func (scheduleGroupKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	if x.d.Scheduler == nil {
		return nil, errNoScheduler
	}
	g, err := x.d.Scheduler.GetScheduleGroup(ctx, name)
	switch {
	case isSchedulerCode(err, "ResourceNotFoundException"):
		return nil, nil
	case err != nil:
		return nil, err
	}
	rec := &Record{Physical: name}
	if g.CreationDate != nil {
		rec.created = g.CreationDate.Time
	}
	return rec, nil
}

func (scheduleGroupKind) remove(ctx context.Context, x *run, _ string, rec *Record) error {
	if x.d.Scheduler == nil {
		return errNoScheduler
	}
	err := x.d.Scheduler.DeleteScheduleGroup(ctx, rec.Physical)
	if isSchedulerCode(err, "ResourceNotFoundException") {
		return nil
	}
	return err
}

// syncSchedulerTags brings a schedule group's tags from old to new.
func syncSchedulerTags(ctx context.Context, sched *scheduler.Service, arn string, old, new map[string]string) error {
	gone, changed := tagChanges(old, new)
	if len(gone) > 0 {
		if err := sched.UntagResource(ctx, arn, gone); err != nil {
			return err
		}
	}
	if len(changed) > 0 {
		var st []scheduler.Tag
		for _, k := range sortedKeys(changed) {
			st = append(st, scheduler.Tag{Key: k, Value: changed[k]})
		}
		if err := sched.TagResource(ctx, arn, st); err != nil {
			return err
		}
	}
	return nil
}

func (scheduleKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	if x.d.Scheduler == nil {
		return nil, "", errNoScheduler
	}
	s, err := x.scheduleOf(r)
	if err != nil {
		return nil, "", err
	}
	if s.Target != nil {
		if _, _, _, why := scheduler.TargetKind(s.Target.Arn); why != "" {
			// Made as AWS makes it; it does not fire here.
			x.warn("%s (%s): %s", r.ID, r.Type, why)
		}
	}
	spec := specOf(s)
	sched := x.d.Scheduler
	var old scheduler.Schedule
	exists := false
	if prev != nil {
		_ = json.Unmarshal(prev.Spec, &old)
		_, err := sched.GetSchedule(ctx, old.GroupName, old.Name)
		switch {
		case err == nil:
			exists = true
		case !isSchedulerCode(err, "ResourceNotFoundException"):
			return nil, "", err
		}
	}
	rec := &Record{Physical: s.Name, Attrs: map[string]any{"Arn": sched.ScheduleArn(s.GroupName, s.Name)}, Spec: spec}
	in := *s // the service fills in its defaults
	if exists && old.Name == s.Name && old.GroupName == s.GroupName {
		if sameSpec(prev, spec) {
			return rec, Unchanged, nil
		}
		if _, err := sched.UpdateSchedule(ctx, &in); err != nil {
			return nil, "", err
		}
		return rec, Updated, nil
	}
	key := s.GroupName + "/" + s.Name
	found, err := scheduleKind{}.find(ctx, x, key)
	if err != nil {
		return nil, "", err
	}
	own, err := x.claim(ctx, r, key, found, rec)
	if err != nil {
		return nil, "", err
	}
	if own != nil {
		// There already, and the stack's: brought to the template's.
		action := Updated
		if bytes.Equal(own.Spec, spec) {
			action = Unchanged
		} else if _, err := sched.UpdateSchedule(ctx, &in); err != nil {
			return nil, "", err
		}
		if exists {
			if err := sched.DeleteSchedule(ctx, old.GroupName, old.Name); err != nil && !isSchedulerCode(err, "ResourceNotFoundException") {
				return nil, "", err
			}
			action = Replaced
		}
		return rec, action, nil
	}
	if _, err := sched.CreateSchedule(ctx, &in); err != nil {
		return nil, "", err
	}
	if exists { // renamed or moved: the old one goes
		if err := sched.DeleteSchedule(ctx, old.GroupName, old.Name); err != nil && !isSchedulerCode(err, "ResourceNotFoundException") {
			return nil, "", err
		}
		return rec, Replaced, nil
	}
	return rec, Created, nil
}

// scheduleOf reads a schedule's properties, its name and group given
// their defaults.
func (x *run) scheduleOf(r *resource) (*scheduler.Schedule, error) {
	var s scheduler.Schedule
	if err := propsOf(r).decodeInto("", &s); err != nil {
		return nil, err
	}
	if s.Name == "" {
		s.Name = x.name(r.ID, 64)
	}
	if s.GroupName == "" {
		s.GroupName = scheduler.DefaultGroup
	}
	return &s, nil
}

// A schedule's name, for its intent and find, is GROUP/NAME.
func (scheduleKind) nameOf(x *run, r *resource) (string, error) {
	s, err := x.scheduleOf(r)
	if err != nil {
		return "", err
	}
	return s.GroupName + "/" + s.Name, nil
}

func (scheduleKind) find(ctx context.Context, x *run, key string) (*Record, error) {
	if x.d.Scheduler == nil {
		return nil, errNoScheduler
	}
	group, name, _ := strings.Cut(key, "/")
	s, err := x.d.Scheduler.GetSchedule(ctx, group, name)
	switch {
	case isSchedulerCode(err, "ResourceNotFoundException"):
		return nil, nil
	case err != nil:
		return nil, err
	}
	rec := &Record{Physical: name, Attrs: map[string]any{"Arn": x.d.Scheduler.ScheduleArn(group, name)}}
	if s.CreationDate != nil {
		rec.created = s.CreationDate.Time
	}
	return rec, nil
}

func (scheduleKind) remove(ctx context.Context, x *run, _ string, rec *Record) error {
	if x.d.Scheduler == nil {
		return errNoScheduler
	}
	var s scheduler.Schedule
	_ = json.Unmarshal(rec.Spec, &s)
	if s.Name == "" {
		s.Name = rec.Physical
	}
	err := x.d.Scheduler.DeleteSchedule(ctx, s.GroupName, s.Name)
	if isSchedulerCode(err, "ResourceNotFoundException") {
		return nil
	}
	return err
}

// applySAMEvents makes the schedules of an AWS::Serverless::StateMachine's
// Events of type Schedule and ScheduleV2 (eventSchedules), each
// targeting the state machine (smArn). It is called on every deploy of
// the state machine, changed or not. The other event types are wires
// (eventWires).
func applySAMEvents(ctx context.Context, x *run, r *resource, smArn string, _ *Record) ([]wiring.Wire, error) {
	if err := x.eventSchedules(ctx, r, smArn); err != nil {
		return nil, err
	}
	if err := x.eventTriggers(ctx, r, smArn); err != nil {
		return nil, err
	}
	return x.eventWires(r, wiring.Target{Type: wiring.ToStateMachine, ARN: smArn, Name: r.ID}, "Schedule", "ScheduleV2", "FileArrival")
}

// eventSchedules makes the schedules of a SAM resource's (a state
// machine's, a function's) Events of type Schedule and ScheduleV2, each
// targeting targetArn, as SAM makes an AWS::Scheduler::Schedule (or, for
// Schedule, a rule) of logical id <Resource><Event>. Each is a resource
// of the stack's record under that logical id, of type
// AWS::Scheduler::Schedule: a second deploy finds it there, and a
// schedule whose event (or resource) left the template is deleted with
// the resources that left it.
func (x *run) eventSchedules(ctx context.Context, r *resource, targetArn string) error {
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
		typ, err := ev.str("Type")
		if err != nil {
			return err
		}
		props, _, err := ev.obj("Properties")
		if err != nil {
			return err
		}
		if props.m == nil {
			props = resProps{m: map[string]any{}, at: ev.path("Properties")}
		}
		id := r.ID + name
		var sp map[string]any
		switch typ {
		case "Schedule":
			sp, err = x.scheduleEvent(id, props, targetArn)
		case "ScheduleV2":
			sp, err = x.scheduleV2Event(id, props, targetArn)
		default: // a wire
			continue
		}
		if err != nil {
			return err
		}
		if err := x.applyGenerated(ctx, r, id, sp); err != nil {
			return err
		}
	}
	return nil
}

// removeSAMEvents has nothing to do: the events' schedules are the
// stack's own resources, deleted as any other.
func removeSAMEvents(context.Context, *run, string, *Record) error { return nil }

// applyGenerated makes the schedule of logical id id that an event of
// sm (a state machine, a function, a rule) generates, and records it.
func (x *run) applyGenerated(ctx context.Context, sm *resource, id string, props map[string]any) error {
	return x.applyGeneratedAs(ctx, sm, id, scheduleType, scheduleKind{}, props)
}

// applyGeneratedAs makes the resource of type typ (a schedule, a
// file-arrival trigger) and logical id id that an event of sm generates,
// and records it.
func (x *run) applyGeneratedAs(ctx context.Context, sm *resource, id, typ string, k kind, props map[string]any) error {
	what := "schedule"
	if typ == fileTriggerType {
		what = "file-arrival trigger"
	}
	if x.stack != nil {
		if _, clash := x.stack.Template().Resources[id]; clash {
			return fmt.Errorf("Properties.Events: the %s of event %s is %s, a resource the template has already", what, id[len(sm.ID):], id)
		}
	}
	var prev *Record
	if x.prev != nil {
		prev = x.prev.Resources[id]
	}
	if prev != nil && prev.Type != typ {
		if err := x.removeOne(ctx, id, prev); err != nil {
			return err
		}
		prev = nil
	}
	r := &resource{ID: id, Type: typ, Props: props, Def: cfn.Resource{Type: typ, Properties: props, DeletionPolicy: sm.Def.DeletionPolicy}}
	rec, action, err := k.apply(ctx, x, r, prev)
	if err != nil {
		return fmt.Errorf("Properties.Events, the %s %s: %w", what, id, err)
	}
	x.made(id)
	action, note := x.reported(id, action)
	rec.Type = typ
	rec.Retain = sm.Def.DeletionPolicy == "Retain"
	x.rec.Resources[id] = rec
	x.rec.Order = append(x.rec.Order, id)
	x.report.Changes = append(x.report.Changes, Change{LogicalID: id, Type: typ, Physical: rec.Physical, Action: action, Note: note})
	return nil
}

// eventRole is the role a generated schedule names: SAM makes one,
// <StateMachine><Event>Role.
func (x *run) eventRole(id string) string {
	return "arn:" + x.partition() + ":iam::" + x.account() + ":role/" + x.name(id+"Role", 64)
}

// scheduleEvent turns a Schedule event (an EventBridge rule in SAM)
// into a schedule's properties.
func (x *run) scheduleEvent(id string, p resProps, smArn string) (map[string]any, error) {
	expr, err := p.str("Schedule")
	if err != nil {
		return nil, err
	}
	if expr == "" {
		return nil, p.errorf("Schedule", "a Schedule event needs its Schedule (rate(...) or cron(...))")
	}
	name, err := p.str("Name")
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = x.name(id, 64)
	}
	state := "ENABLED"
	if s, err := p.str("State"); err != nil {
		return nil, err
	} else if s == "DISABLED" {
		state = "DISABLED"
	}
	if enabled, err := p.flag("Enabled", true); err != nil {
		return nil, err
	} else if !enabled {
		state = "DISABLED"
	}
	out := map[string]any{"Name": name, "ScheduleExpression": expr, "State": state, "FlexibleTimeWindow": map[string]any{"Mode": "OFF"}}
	if d, err := p.str("Description"); err != nil {
		return nil, err
	} else if d != "" {
		out["Description"] = d
	}
	target, err := x.eventTarget(p, smArn, x.eventRole(id))
	if err != nil {
		return nil, err
	}
	out["Target"] = target
	return out, nil
}

// scheduleV2Event turns a ScheduleV2 event into a schedule's
// properties, as SAM does: Name defaults to the logical id (unless
// OmitName), FlexibleTimeWindow to OFF.
func (x *run) scheduleV2Event(id string, p resProps, smArn string) (map[string]any, error) {
	out := map[string]any{}
	for _, k := range []string{"ScheduleExpression", "ScheduleExpressionTimezone", "State", "GroupName", "Description", "StartDate", "EndDate", "KmsKeyArn"} {
		s, err := p.str(k)
		if err != nil {
			return nil, err
		}
		if s != "" {
			out[k] = s
		}
	}
	if out["ScheduleExpression"] == nil {
		return nil, p.errorf("ScheduleExpression", "a ScheduleV2 event needs its ScheduleExpression")
	}
	name, err := p.str("Name")
	if err != nil {
		return nil, err
	}
	omit, err := p.flag("OmitName", false)
	if err != nil {
		return nil, err
	}
	switch {
	case omit && name != "":
		return nil, p.errorf("Name", "Name cannot be set when OmitName is True")
	case omit:
		name = x.name(id, 64)
	case name == "":
		name = id
	}
	out["Name"] = name
	out["FlexibleTimeWindow"] = map[string]any{"Mode": "OFF"}
	if w, ok := p.m["FlexibleTimeWindow"]; ok {
		out["FlexibleTimeWindow"] = w
	}
	role, err := p.str("RoleArn")
	if err != nil {
		return nil, err
	}
	if role == "" {
		role = x.eventRole(id)
	}
	target, err := x.eventTarget(p, smArn, role)
	if err != nil {
		return nil, err
	}
	out["Target"] = target
	return out, nil
}

// eventTarget is a generated schedule's target: the state machine, with
// the event's Input, RetryPolicy and DeadLetterConfig (its Arn; a queue
// SAM would make is not made here).
func (x *run) eventTarget(p resProps, smArn, role string) (map[string]any, error) {
	t := map[string]any{"Arn": smArn, "RoleArn": role}
	if in, err := p.str("Input"); err != nil {
		return nil, err
	} else if in != "" {
		t["Input"] = in
	}
	if rp, ok := p.m["RetryPolicy"]; ok {
		t["RetryPolicy"] = rp
	}
	if dlq, ok, err := p.obj("DeadLetterConfig"); err != nil {
		return nil, err
	} else if ok {
		arn, err := dlq.str("Arn")
		if err != nil {
			return nil, err
		}
		if arn == "" {
			return nil, dlq.errorf("Arn", "a dead-letter queue is given by its Arn here (SAM's generated queue is not made)")
		}
		t["DeadLetterConfig"] = map[string]any{"Arn": arn}
	}
	return t, nil
}

// scheduledRule makes the schedules of an AWS::Events::Rule that has a
// ScheduleExpression and no EventPattern: one per target (a state
// machine, a function, a queue, a topic, a bus), of logical id
// <Rule><Target Id>, recorded as eventSchedules records a SAM event's.
// A target's Input is the schedule's input; without one the target gets
// the rule's Scheduled Event, as EventBridge sends it. handled is false
// for a rule of another form (an EventPattern), left to the rule's kind
// for its wires; the rule's own record is the caller's.
func (x *run) scheduledRule(ctx context.Context, r *resource) (handled bool, err error) {
	p := propsOf(r)
	expr, err := p.str("ScheduleExpression")
	if err != nil || expr == "" || p.has("EventPattern") {
		return false, err
	}
	if x.d.Scheduler == nil {
		return true, errNoScheduler
	}
	name, err := p.str("Name")
	if err != nil {
		return true, err
	}
	ruleArn := x.guessArn("AWS::Events::Rule", cmpOr(name, x.name(r.ID, 64)))
	state := "ENABLED"
	if s, err := p.str("State"); err != nil {
		return true, err
	} else if s == "DISABLED" {
		state = "DISABLED"
	}
	targets, _ := r.Props["Targets"].([]any)
	if r.Props["Targets"] != nil && targets == nil {
		return true, p.errorf("Targets", "a list of targets")
	}
	for i, raw := range targets {
		m, ok := raw.(map[string]any)
		at := p.path("Targets") + "[" + strconv.Itoa(i) + "]"
		if !ok {
			return true, fmt.Errorf("%s: a target is {Id, Arn, ...}", at)
		}
		t := resProps{m: m, at: at}
		id, err := t.str("Id")
		if err != nil {
			return true, err
		}
		arn, err := t.str("Arn")
		if err != nil {
			return true, err
		}
		if id == "" || arn == "" {
			return true, fmt.Errorf("%s: a target needs its Id and Arn", at)
		}
		for _, k := range []string{"InputPath", "InputTransformer"} {
			if t.has(k) {
				x.warn("%s (%s): target %s: %s is not applied here; the target gets the Scheduled Event", r.ID, r.Type, id, k)
			}
		}
		sid := r.ID + scheduleIDPart(id)
		if _, ok := m["Input"]; !ok {
			m = maps.Clone(m)
			m["Input"] = x.scheduledEvent(ruleArn)
			t.m = m
		}
		role, err := t.str("RoleArn")
		if err != nil {
			return true, err
		}
		target, err := x.eventTarget(t, arn, cmpOr(role, x.eventRole(sid)))
		if err != nil {
			return true, err
		}
		if sqs, ok, err := t.obj("SqsParameters"); err != nil {
			return true, err
		} else if ok {
			target["SqsParameters"] = sqs.m
		}
		if kind, _, _, _ := scheduler.TargetKind(arn); kind == scheduler.TargetBus {
			target["EventBridgeParameters"] = map[string]any{"DetailType": "Scheduled Event", "Source": "aws.events"}
		}
		sp := map[string]any{"Name": x.name(sid, 64), "ScheduleExpression": expr, "State": state,
			"FlexibleTimeWindow": map[string]any{"Mode": "OFF"}, "Target": target}
		if d, err := p.str("Description"); err != nil {
			return true, err
		} else if d != "" {
			sp["Description"] = d
		}
		if err := x.applyGenerated(ctx, r, sid, sp); err != nil {
			return true, err
		}
	}
	return true, nil
}

// scheduleIDPart is a rule target's Id as a part of a logical id: its
// letters and digits.
func scheduleIDPart(id string) string {
	var b strings.Builder
	for _, c := range id {
		if c < 128 && (unicode.IsLetter(c) || unicode.IsDigit(c)) {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// scheduledEvent is the Scheduled Event a rule's schedule sends, with the
// scheduler's placeholders of the firing's time and id.
func (x *run) scheduledEvent(ruleArn string) string {
	b, _ := json.Marshal(map[string]any{"version": "0", "id": "<aws.scheduler.execution-id>", "detail-type": "Scheduled Event",
		"source": "aws.events", "account": x.account(), "time": "<aws.scheduler.scheduled-time>", "region": x.region(),
		"resources": []string{ruleArn}, "detail": map[string]any{}})
	return string(b)
}
