package scheduler

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"stepwise/scheduler/expr"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Starter starts the executions of the slots: the server's
// StartExecution, in process (which starts through the engine's Starter,
// the one way in). A start it refuses fails with an *sfnapi.Error, whose
// code and message a slot's dead-letter event carries; an execution of
// the slot's name that exists already (ExecutionAlreadyExists) means the
// slot fired before.
type Starter interface {
	StartExecution(ctx context.Context, r *StartExecution) error
}

// StarterFunc is a function as a Starter.
type StarterFunc func(ctx context.Context, r *StartExecution) error

// StartExecution calls f.
func (f StarterFunc) StartExecution(ctx context.Context, r *StartExecution) error { return f(ctx, r) }

// StartExecution is the StartExecution request of a slot: its members as
// the API takes them (nil for a member not given).
type StartExecution struct {
	StateMachineArn          string
	Name, Input, TraceHeader *string
}

// FireConfig configures the firing of schedules.
type FireConfig struct {
	// Starter starts the executions.
	Starter Starter
	// Now is the clock slots are compared with (the engine's execution
	// time, so that time skipping applies); time.Now when nil.
	Now func() time.Time
	// Leads says whether this node fires (the leader of a cluster); nil
	// for always.
	Leads func(ctx context.Context) bool
	// Ready, when set, is closed once the engine has resumed.
	Ready <-chan struct{}
	// Interval is the real time between two looks at the schedules
	// (default 1 s).
	Interval time.Duration
	// Alarm, when set, arms the engine's alarm for the next time a look
	// has something to do (a slot due, a retry), in execution time: fire
	// then looks at once, when the clock reaches it. A skipping clock
	// never jumps to the alarm for its own sake, but stops at it on the
	// way to an execution's timer (or an advance's goal), so each slot
	// passed fires at its own time, in order. A zero at disarms it.
	Alarm func(at time.Time, fire func(ctx context.Context))
	// Targets delivers the slots of the schedules whose target is not a
	// state machine (a function, a queue, a topic, a bus, a universal
	// target); nil skips them with a warning.
	Targets Targets
	// DeadLetter sends a dead-letter event to an SQS queue (a target's
	// DeadLetterConfig); nil logs the event and drops it.
	DeadLetter func(ctx context.Context, m *DeadLetter) error
}

// DeadLetter is the message a slot whose target could not be invoked
// sends to its schedule's dead-letter queue, as EventBridge Scheduler
// sends it: the target's input as the body, the failure in attributes.
type DeadLetter struct {
	QueueArn   string
	Body       string
	Attributes []MessageAttribute
}

// MessageAttribute is an SQS message attribute.
type MessageAttribute struct {
	Name     string
	DataType string // String or Number
	Value    string
}

// The conditions that end a slot's retries (the EXHAUSTED_RETRY_CONDITION
// attribute of its dead-letter event).
const (
	ExhaustedRetryAttempts = "MaximumRetryAttempts"
	ExhaustedEventAge      = "MaximumEventAgeInSeconds"
)

// retryDelay is the wait in execution time before retry n (1, 2, ...) of
// a slot: exponential from a second, at most a minute. AWS documents an
// exponential back-off without its figures.
func retryDelay(n int) time.Duration {
	if n > 7 {
		return time.Minute
	}
	return min(time.Second<<(n-1), time.Minute)
}

// retry is a slot whose start failed: the attempts made, when to try
// again, and the last failure. exhausted is set once its retries are over
// and its dead-letter event is still to send.
type retry struct {
	slot      time.Time
	attempts  int
	next      time.Time
	err       *sfnapi.Error
	exhausted string
}

// maxSlotsPerTick bounds the slots one schedule fires in one look.
const maxSlotsPerTick = 100

// Start fires the ENABLED schedules' slots, on a goroutine of its own,
// until ctx ends, and returns a channel closed when it has stopped. Look
// works as soon as Start returns.
func (s *Service) Start(ctx context.Context, cfg FireConfig) (done <-chan struct{}) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	// Look works from the start, waiting as the loop does for the engine to
	// be ready: an advance of the clock just after a start looks first.
	ready := func(ctx context.Context) bool {
		if cfg.Ready == nil {
			return true
		}
		select {
		case <-cfg.Ready:
			return true
		case <-ctx.Done():
			return false
		}
	}
	look := func(ctx context.Context) {
		if !ready(ctx) {
			return
		}
		if cfg.Leads == nil || cfg.Leads(ctx) {
			if err := s.FireDue(ctx, cfg); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("scheduler: firing schedules failed", "error", err)
			}
			// Each trigger's failure is logged by PollFiles.
			_ = s.PollFiles(ctx, cfg)
		}
	}
	alarm := cfg.Alarm
	if alarm != nil {
		cfg.Alarm = func(at time.Time, _ func(context.Context)) {
			alarm(at, func(context.Context) {
				if ctx.Err() == nil {
					look(ctx)
				}
			})
		}
	}
	s.lookMu.Lock()
	s.look = look
	s.lookMu.Unlock()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer func() {
			s.lookMu.Lock()
			s.look = nil
			s.lookMu.Unlock()
		}()
		if alarm != nil {
			defer alarm(time.Time{}, nil)
		}
		if !ready(ctx) {
			return
		}
		t := time.NewTicker(cfg.Interval)
		defer t.Stop()
		for {
			look(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return stopped
}

// Look looks at the schedules at once, as Start's loop does every Interval: it
// fires what is due and arms the alarm for what comes next, so that a
// schedule made a moment ago has its alarm armed before the clock is
// advanced past its slot. It does nothing before Start or after its
// loop stopped.
func (s *Service) Look(ctx context.Context) {
	s.lookMu.Lock()
	look := s.look
	s.lookMu.Unlock()
	if look != nil {
		look(ctx)
	}
}

// FireDue fires the slots of every ENABLED schedule that are due at
// cfg.Now(), retries those whose start failed (and sends their
// dead-letter events once the retries are over), drops those older than
// their target's MaximumEventAgeInSeconds, and arms cfg.Alarm for the
// next thing to do.
func (s *Service) FireDue(ctx context.Context, cfg FireConfig) error {
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	if s.lastErr == nil {
		s.lastErr = map[string]string{}
	}
	if s.retries == nil {
		s.retries = map[string]*retry{}
	}
	var next time.Time // the next time a look has something to do
	defer func() {
		if cfg.Alarm != nil {
			cfg.Alarm(next, nil)
		}
	}()
	seen := map[string]bool{}       // the ENABLED schedules
	groupTags := map[string][]Tag{} // read once a look
	p := &store.ScheduleListParams{State: "ENABLED", Limit: 200}
	for {
		rows, err := s.exec.ScheduleList(ctx, p)
		if err != nil {
			return err
		}
		for _, row := range rows {
			seen[s.ScheduleArn(row.GroupName, row.Name)] = true
			att, err := s.calendarOf(ctx, groupTags, row.GroupName, row.Name)
			var at time.Time
			if err == nil {
				at, err = s.fireSchedule(ctx, cfg, row, att)
			}
			if !at.IsZero() && (next.IsZero() || at.Before(next)) {
				next = at
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				arn := s.ScheduleArn(row.GroupName, row.Name)
				if s.lastErr[arn] != err.Error() { // once per cause, not every look
					s.cfg.Logger.Warn("scheduler: schedule not fired", "schedule_arn", arn, "error", err)
					s.lastErr[arn] = err.Error()
				}
			} else if arn := s.ScheduleArn(row.GroupName, row.Name); s.retries[arn] == nil {
				delete(s.lastErr, arn) // not while its slot waits for a retry
			}
		}
		if len(rows) < p.Limit {
			for arn := range s.retries {
				if !seen[arn] { // deleted, or no longer ENABLED
					delete(s.retries, arn)
				}
			}
			return nil
		}
		last := rows[len(rows)-1]
		p.AfterGroup, p.AfterName = last.GroupName, last.Name
	}
}

// cursor is the time after which a schedule's slots are still to fire:
// its last fired slot, but never before its last change (a schedule
// enabled again does not fire what it missed while disabled) less the
// minute of precision (a rate's first slot is its creation's minute).
func cursor(row *store.Schedule) time.Time {
	c := row.UpdatedAt.Truncate(time.Minute).Add(-time.Nanosecond)
	if row.LastFired != nil && !row.LastFired.Before(c) {
		c = *row.LastFired
	}
	return c
}

// fireSchedule fires a schedule's due slots, in order, and returns the
// next time it has something to do (zero: nothing more). A slot whose
// start fails is retried as its target's RetryPolicy says, the slots after
// it waiting; once its retries are exhausted its dead-letter event goes to
// the target's DeadLetterConfig, and the schedule moves on.
//
// With a calendar (att), a slot fires when its calendar says (fireAt);
// one that does not fire (skipped, or folded into the firing before it:
// a firing time not after that one's) is recorded as done once its own
// time has come. The cursor stays a slot, so a restart looks at the same
// slots and moves them the same way.
func (s *Service) fireSchedule(ctx context.Context, cfg FireConfig, row *store.Schedule, att *Attachment) (time.Time, error) {
	sch, err := s.decode(row)
	if err != nil {
		return time.Time{}, err
	}
	e, err := sch.Expr(row.CreatedAt)
	if err != nil {
		return time.Time{}, err
	}
	var cal *Calendar
	if att != nil {
		cal = att.Calendar
	}
	loc := sch.location()
	now := cfg.Now()
	after := cursor(row)
	prev := after // the firing of the cursor's slot
	if row.LastFired != nil && after.Equal(*row.LastFired) {
		if at, ok := att.fireAt(after, loc); ok {
			prev = at
		}
	}
	held, isHeld, err := s.held(ctx, sch.Arn)
	if err != nil {
		return time.Time{}, err
	}
	if isHeld && !held.After(after) {
		// A hold whose slot is behind: skipped, its record cut short by a
		// stop, or left behind by a change of the schedule.
		if row.LastFired != nil && held.Equal(*row.LastFired) {
			if err := s.skipHeld(ctx, sch.Arn, prev); err != nil {
				return time.Time{}, err
			}
		} else if err := s.exec.TagDelete(ctx, sch.Arn, []string{HoldTag}); err != nil {
			return time.Time{}, err
		}
		isHeld = false
	}
	fired, tried := false, false
	var pending time.Time // the first slot looked past, not fired and not yet recorded
	for i := 0; i < maxSlotsPerTick; i++ {
		slot, ok := e.Next(after)
		if !ok {
			break
		}
		at, fires := att.fireAt(slot, loc)
		if !fires || !at.After(prev) {
			if now.Before(slot) {
				if pending.IsZero() {
					pending = slot
				}
				after = slot // looked past, recorded once its time has come
				continue
			}
			s.cfg.Logger.Debug("scheduler: slot not fired, by its calendar", "schedule_arn", sch.Arn, "slot", slot,
				"calendar", att.String(), "folded", fires)
			if err := s.exec.ScheduleFired(ctx, row.GroupName, row.Name, slot); err != nil {
				return time.Time{}, err
			}
			after, fired = slot, true
			continue
		}
		if due := at.Add(flexDelay(sch, at)); now.Before(due) {
			return due, nil
		}
		if isHeld && slot.Equal(held) {
			// Held: recorded as fired, then as skipped (a stop between
			// the two is caught up above).
			s.cfg.Logger.Info("scheduler: slot skipped, held", "schedule_arn", sch.Arn, "slot", at)
			delete(s.retries, sch.Arn)
			if err := s.exec.ScheduleFired(ctx, row.GroupName, row.Name, slot); err != nil {
				return time.Time{}, err
			}
			if err := s.skipHeld(ctx, sch.Arn, at); err != nil {
				return time.Time{}, err
			}
			isHeld = false
			after, prev, fired, tried = slot, at, true, true
			continue
		}
		r := s.retries[sch.Arn]
		first := !tried // the first slot that fires: the attempts stored are its
		tried = true
		if r != nil && !r.slot.Equal(slot) {
			r = nil // a slot of before: fired since, on another node
		}
		if r == nil && first && row.Attempts > 0 && row.AttemptedAt != nil {
			// Attempts made before a restart, or on another node.
			r = &retry{slot: slot, attempts: row.Attempts, next: row.AttemptedAt.Add(retryDelay(row.Attempts))}
			s.retries[sch.Arn] = r
		}
		age := now.Sub(at)
		switch {
		case r == nil && age > sch.MaximumEventAge():
			s.cfg.Logger.Warn("scheduler: slot dropped, older than the target's MaximumEventAgeInSeconds",
				"schedule_arn", sch.Arn, "slot", at, "age", age)
		case r != nil && r.exhausted == "" && now.Before(r.next):
			return r.next, nil
		default:
			if r == nil || r.exhausted == "" {
				if r, err = s.attempt(ctx, cfg, row, sch, firing{slot, at, cal}, r, now); err != nil {
					return time.Time{}, err
				}
			}
			if r != nil {
				if r.exhausted == "" {
					return r.next, r.err
				}
				if err := s.deadLetter(ctx, cfg, sch, firing{slot, at, cal}, r); err != nil {
					return now.Add(retryDelay(1)), err
				}
			}
		}
		delete(s.retries, sch.Arn)
		if err := s.exec.ScheduleFired(ctx, row.GroupName, row.Name, slot); err != nil {
			return time.Time{}, err
		}
		after, prev, fired = slot, at, true
	}
	next, more := e.Next(after)
	if !more && pending.IsZero() && sch.ActionAfterCompletion == "DELETE" && (fired || row.LastFired != nil) {
		if err := s.exec.ScheduleDelete(ctx, row.GroupName, row.Name); err != nil && !errors.Is(err, store.ErrNotFound) {
			return time.Time{}, err
		}
		s.cfg.Logger.Info("scheduler: schedule completed and deleted (ActionAfterCompletion DELETE)", "schedule_arn", sch.Arn)
		return time.Time{}, nil
	}
	if !more {
		return pending, nil
	}
	at, ok := att.fireAt(next, loc)
	if !ok || !at.After(prev) {
		at = next
	} else {
		at = at.Add(flexDelay(sch, at))
	}
	if !pending.IsZero() && pending.Before(at) {
		return pending, nil
	}
	return at, nil
}

// firing is a slot and when it fires (moved by its calendar, whose
// business days its placeholders count).
type firing struct {
	slot, at time.Time
	cal      *Calendar
}

// attempt starts a slot's execution, attempt r.attempts+1, and returns
// nil when it started, or the slot's retry: due again later, or
// exhausted. The failed attempts are stored with the schedule. An error
// is the store's or the context's.
func (s *Service) attempt(ctx context.Context, cfg FireConfig, row *store.Schedule, sch *Schedule, f firing, r *retry, now time.Time) (*retry, error) {
	if r == nil {
		r = &retry{slot: f.slot}
	}
	var err error
	if kind, _, _, _ := TargetKind(sch.Target.Arn); kind == TargetStateMachine {
		err = s.start(ctx, cfg, sch, f, r.attempts+1)
	} else {
		err = s.deliver(ctx, cfg, sch, f, r.attempts+1)
	}
	if err == nil {
		return nil, nil
	}
	var se *sfnapi.Error
	var nr *NotReachedError
	switch {
	case errors.As(err, &nr):
		s.cfg.Logger.Warn("scheduler: slot skipped, its target is not reached here", "schedule_arn", sch.Arn, "slot", f.at, "reason", nr.Reason)
		return nil, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &se):
	case TargetKindOf(sch) != TargetStateMachine:
		code, msg := errorCode(err)
		se = sfnapi.NewError(code, "%s", msg)
	default:
		return nil, err
	}
	r.attempts++
	r.err = se
	if err := s.exec.ScheduleAttempted(ctx, row.GroupName, row.Name, r.attempts, now); err != nil {
		return nil, err
	}
	retries := r.attempts - 1
	r.next = now.Add(retryDelay(r.attempts))
	switch {
	case retries >= sch.MaximumRetryAttempts():
		r.exhausted = ExhaustedRetryAttempts
	case r.next.Sub(f.at) > sch.MaximumEventAge():
		r.exhausted = ExhaustedEventAge
	}
	s.retries[sch.Arn] = r
	s.cfg.Logger.Info("scheduler: start failed", "schedule_arn", sch.Arn, "slot", f.at, "attempt", r.attempts,
		"error", se, "exhausted", r.exhausted)
	return r, nil
}

// deadLetter sends a slot's dead-letter event, once its retries are
// exhausted, to the target's DeadLetterConfig; without one the event is
// logged and dropped.
func (s *Service) deadLetter(ctx context.Context, cfg FireConfig, sch *Schedule, f firing, r *retry) error {
	slot := f.at
	dlq := ""
	if sch.Target.DeadLetterConfig != nil && sch.Target.DeadLetterConfig.Arn != nil {
		dlq = *sch.Target.DeadLetterConfig.Arn
	}
	if dlq == "" || cfg.DeadLetter == nil {
		s.cfg.Logger.Warn("scheduler: slot dropped, its start failed and its retries are exhausted",
			"schedule_arn", sch.Arn, "slot", slot, "exhausted", r.exhausted, "retry_attempts", r.attempts-1, "error", r.err)
		return nil
	}
	m := DeadLetterEvent(sch, slot, f.cal, dlq, r.err.Code, r.err.Message, r.exhausted, r.attempts-1)
	if err := cfg.DeadLetter(ctx, m); err != nil {
		return fmt.Errorf("send the dead-letter event of slot %s to %s: %w", slot.Format(time.RFC3339), dlq, err)
	}
	s.cfg.Logger.Warn("scheduler: slot sent to the dead-letter queue, its start failed and its retries are exhausted",
		"schedule_arn", sch.Arn, "slot", slot, "queue_arn", dlq, "exhausted", r.exhausted, "retry_attempts", r.attempts-1, "error", r.err)
	return nil
}

// DeadLetterEvent is the dead-letter event of a slot: the target's input
// (its context attributes filled in) as the body, and the attributes
// EventBridge Scheduler sets (slot: when it fired, business days counted
// on cal).
func DeadLetterEvent(sch *Schedule, slot time.Time, cal *Calendar, queueArn, code, message, exhausted string, retries int) *DeadLetter {
	body := "{}" // an execution started without an input gets {}
	if sch.Target.Input != nil {
		body = contextAttributes(*sch.Target.Input, sch, slot, retries+1, cal)
	}
	str := func(name, v string) MessageAttribute {
		return MessageAttribute{Name: name, DataType: "String", Value: v}
	}
	// A target's Input is at most 8192 characters: never truncated.
	return &DeadLetter{QueueArn: queueArn, Body: body, Attributes: []MessageAttribute{
		str("ERROR_CODE", code),
		str("ERROR_MESSAGE", message),
		str("EXECUTION_ID", ExecutionID(sch.Arn, slot)),
		str("EXHAUSTED_RETRY_CONDITION", exhausted),
		str("IS_PAYLOAD_TRUNCATED", "false"),
		str("RETRY_ATTEMPTS", strconv.Itoa(retries)),
		str("SCHEDULED_TIME", slot.UTC().Format(time.RFC3339)),
		str("SCHEDULE_ARN", sch.Arn),
		str("GROUP_ARN", groupArnOf(sch.Arn)),
		str("TARGET_ARN", sch.Target.Arn),
	}}
}

// groupArnOf is the ARN of a schedule's group, from the schedule's ARN
// (…:schedule/<group>/<name>).
func groupArnOf(scheduleArn string) string {
	prefix, rest, ok := strings.Cut(scheduleArn, ":schedule/")
	if !ok {
		return ""
	}
	group, _, _ := strings.Cut(rest, "/")
	return prefix + ":schedule-group/" + group
}

// flexDelay is where in its FlexibleTimeWindow a slot fires: a delay
// below MaximumWindowInMinutes, in whole seconds, derived from the
// schedule's ARN and the slot, so every node and every restart picks the
// same.
func flexDelay(sch *Schedule, slot time.Time) time.Duration {
	w := sch.FlexibleTimeWindow
	if w == nil || w.Mode != "FLEXIBLE" || w.MaximumWindowInMinutes == nil {
		return 0
	}
	h := fnv.New64a()
	io.WriteString(h, sch.Arn)
	binary.Write(h, binary.BigEndian, slot.UnixMilli())
	return time.Duration(h.Sum64()%uint64(*w.MaximumWindowInMinutes*60)) * time.Second
}

// ExecutionID is the <aws.scheduler.execution-id> of a slot: a UUID
// derived from the schedule's ARN and the slot.
func ExecutionID(scheduleArn string, slot time.Time) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(scheduleArn+"#"+slot.UTC().Format(time.RFC3339))).String()
}

// contextAttributes substitutes the context attributes in a target's
// input, and Stepwise's placeholders (template.go; business days on
// cal).
func contextAttributes(text string, sch *Schedule, slot time.Time, attempt int, cal *Calendar) string {
	text = strings.NewReplacer(
		"<aws.scheduler.scheduled-time>", slot.UTC().Format(time.RFC3339),
		"<aws.scheduler.execution-id>", ExecutionID(sch.Arn, slot),
		"<aws.scheduler.attempt-number>", strconv.Itoa(attempt),
		"<aws.scheduler.schedule-arn>", sch.Arn,
	).Replace(text)
	return expandPlaceholders(text, slot.In(sch.location()), cal)
}

// location is the schedule's time zone (UTC when it does not load).
func (s *Schedule) location() *time.Location {
	loc, err := expr.LoadTimezone(s.ScheduleExpressionTimezone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// ExecutionName is the name of the execution a slot starts (slot: when
// it fires, moved by its calendar). A template (the universal target's
// Name) may use
//
//	<aws.scheduler.scheduled-time>   the slot in UTC, 20261124T000000Z
//	<stepwise.scheduled-date>        the slot's date in the schedule's zone, 20261124
//	<stepwise.scheduled-local-time>  the slot in the schedule's zone, 20261124T090000
//	<aws.scheduler.execution-id>     the slot's UUID
//
// and the stepwise ones with a format and an offset (template.go), whose
// business days are cal's. Without a template the name is "<schedule
// name>-<local time>" (with "<group>." before it outside the group
// default), or the execution id when that is longer than 80 characters.
func ExecutionName(template string, sch *Schedule, slot time.Time, cal *Calendar) string {
	local := slot.In(sch.location())
	if template != "" {
		return expandPlaceholders(strings.NewReplacer(
			"<aws.scheduler.scheduled-time>", slot.UTC().Format("20060102T150405Z"),
			"<aws.scheduler.execution-id>", ExecutionID(sch.Arn, slot),
		).Replace(template), local, cal)
	}
	name := sch.Name + "-" + local.Format("20060102T150405")
	if sch.GroupName != DefaultGroup {
		name = sch.GroupName + "." + name
	}
	if len(name) > 80 {
		return ExecutionID(sch.Arn, slot)
	}
	return name
}

// StartRequest is the StartExecution request of a slot's attempt (1, 2,
// ...), business days counted on cal. The universal target's Input is the
// request, its members named in any case (as the API reads them); one
// that is not a string is refused as the API refuses it
// (SerializationException).
func StartRequest(sch *Schedule, slot time.Time, attempt int, cal *Calendar) (*StartExecution, error) {
	t := sch.Target
	r := &StartExecution{}
	template := ""
	if t.Arn == UniversalStartExecution {
		var req map[string]any
		if err := json.Unmarshal([]byte(*t.Input), &req); err != nil {
			return nil, err
		}
		if n, ok := req["Name"].(string); ok {
			template = n
		}
		if in, ok := req["Input"].(string); ok {
			req["Input"] = contextAttributes(in, sch, slot, attempt, cal)
		}
		// In a fixed order, so that of several members of the wrong type
		// the same one is named each time.
		for _, k := range slices.Sorted(maps.Keys(req)) {
			v := req[k]
			var err error
			switch {
			case strings.EqualFold(k, "stateMachineArn"):
				var arn *string
				if arn, err = member("stateMachineArn", v); arn != nil {
					r.StateMachineArn = *arn
				}
			case strings.EqualFold(k, "input"):
				r.Input, err = member("input", v)
			case strings.EqualFold(k, "traceHeader"):
				r.TraceHeader, err = member("traceHeader", v)
			}
			if err != nil {
				return nil, err
			}
		}
	} else {
		r.StateMachineArn = t.Arn
		if t.Input != nil {
			in := contextAttributes(*t.Input, sch, slot, attempt, cal)
			r.Input = &in
		}
	}
	name := ExecutionName(template, sch, slot, cal)
	r.Name = &name
	return r, nil
}

// member is a string member of a request (nil for null), or the API's
// refusal of a value of another type.
func member(name string, v any) (*string, error) {
	var what string
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		return &t, nil
	case map[string]any:
		return nil, sfnapi.NewError(sfnapi.CodeSerialization, "Start of structure or map found where not expected. (member %s)", name)
	case []any:
		return nil, sfnapi.NewError(sfnapi.CodeSerialization, "Start of list found where not expected. (member %s)", name)
	case bool:
		what = "BOOLEAN_VALUE"
	default:
		what = "NUMBER_VALUE"
	}
	return nil, sfnapi.NewError(sfnapi.CodeSerialization, "%s can not be converted to a String (member %s)", what, name)
}

// start starts the execution of a slot; an execution of that name that
// exists already means the slot fired before (exactly once). A refusal
// is an *sfnapi.Error: the Starter's, or InternalFailure for a start
// that failed otherwise.
func (s *Service) start(ctx context.Context, cfg FireConfig, sch *Schedule, f firing, attempt int) error {
	slot := f.at
	req, err := StartRequest(sch, slot, attempt, f.cal)
	if err != nil {
		return err
	}
	err = cfg.Starter.StartExecution(ctx, req)
	if err == nil {
		s.cfg.Logger.Info("scheduler: fired", "schedule_arn", sch.Arn, "slot", slot, "execution_name", *req.Name)
		return nil
	}
	var refused *sfnapi.Error
	if errors.As(err, &refused) && refused.Code == sfnapi.CodeExecutionAlreadyExists {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if refused == nil {
		s.cfg.Logger.Warn("scheduler: start failed inside the server", "schedule_arn", sch.Arn, "slot", slot, "error", err)
		refused = sfnapi.NewError(sfnapi.CodeInternalFailure, "An internal error occurred")
	}
	return refused
}
