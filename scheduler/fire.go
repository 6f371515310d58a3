package scheduler

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/google/uuid"

	"stepwise/scheduler/expr"
	"stepwise/store"
)

// FireConfig configures the firing of schedules.
type FireConfig struct {
	// API serves the Step Functions API (awsjson) in-process: the
	// executions are started with its StartExecution.
	API http.Handler
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
}

// maxSlotsPerTick bounds the slots one schedule fires in one look.
const maxSlotsPerTick = 100

// Run fires the ENABLED schedules' slots until ctx ends.
func (s *Service) Run(ctx context.Context, cfg FireConfig) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Ready != nil {
		select {
		case <-cfg.Ready:
		case <-ctx.Done():
			return
		}
	}
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	for {
		if cfg.Leads == nil || cfg.Leads(ctx) {
			if err := s.FireDue(ctx, cfg); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("scheduler: firing schedules failed", "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// FireDue fires the slots of every ENABLED schedule that are due at
// cfg.Now(), and drops those older than their target's
// MaximumEventAgeInSeconds.
func (s *Service) FireDue(ctx context.Context, cfg FireConfig) error {
	s.fireMu.Lock()
	defer s.fireMu.Unlock()
	if s.lastErr == nil {
		s.lastErr = map[string]string{}
	}
	p := &store.ScheduleListParams{State: "ENABLED", Limit: 200}
	for {
		rows, err := s.exec.ScheduleList(ctx, p)
		if err != nil {
			return err
		}
		for _, row := range rows {
			if err := s.fireSchedule(ctx, cfg, row); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				arn := s.ScheduleArn(row.GroupName, row.Name)
				if s.lastErr[arn] != err.Error() { // once per cause, not every look
					s.cfg.Logger.Warn("scheduler: schedule not fired; retried until its slot is older than MaximumEventAgeInSeconds",
						"schedule_arn", arn, "error", err)
					s.lastErr[arn] = err.Error()
				}
			} else {
				delete(s.lastErr, s.ScheduleArn(row.GroupName, row.Name))
			}
		}
		if len(rows) < p.Limit {
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

func (s *Service) fireSchedule(ctx context.Context, cfg FireConfig, row *store.Schedule) error {
	sch, err := s.decode(row)
	if err != nil {
		return err
	}
	e, err := sch.Expr(row.CreatedAt)
	if err != nil {
		return err
	}
	now := cfg.Now()
	after := cursor(row)
	fired := false
	for i := 0; i < maxSlotsPerTick; i++ {
		slot, ok := e.Next(after)
		if !ok {
			break
		}
		if now.Before(slot.Add(flexDelay(sch, slot))) {
			break
		}
		if age := now.Sub(slot); age > sch.MaximumEventAge() {
			s.cfg.Logger.Warn("scheduler: slot dropped, older than the target's MaximumEventAgeInSeconds",
				"schedule_arn", sch.Arn, "slot", slot, "age", age)
		} else if err := s.start(ctx, cfg, sch, slot); err != nil {
			return err
		}
		if err := s.exec.ScheduleFired(ctx, row.GroupName, row.Name, slot); err != nil {
			return err
		}
		after, fired = slot, true
	}
	if _, more := e.Next(after); !more && sch.ActionAfterCompletion == "DELETE" && (fired || row.LastFired != nil) {
		if err := s.exec.ScheduleDelete(ctx, row.GroupName, row.Name); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		s.cfg.Logger.Info("scheduler: schedule completed and deleted (ActionAfterCompletion DELETE)", "schedule_arn", sch.Arn)
	}
	return nil
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
// input.
func contextAttributes(text string, sch *Schedule, slot time.Time) string {
	return strings.NewReplacer(
		"<aws.scheduler.scheduled-time>", slot.UTC().Format(time.RFC3339),
		"<aws.scheduler.execution-id>", ExecutionID(sch.Arn, slot),
		"<aws.scheduler.attempt-number>", "1",
		"<aws.scheduler.schedule-arn>", sch.Arn,
	).Replace(text)
}

// ExecutionName is the name of the execution a slot starts. A template
// (the universal target's Name) may use
//
//	<aws.scheduler.scheduled-time>   the slot in UTC, 20261124T000000Z
//	<stepwise.scheduled-date>        the slot's date in the schedule's zone, 20261124
//	<stepwise.scheduled-local-time>  the slot in the schedule's zone, 20261124T090000
//	<aws.scheduler.execution-id>     the slot's UUID
//
// Without a template the name is "<schedule name>-<local time>" (with
// "<group>." before it outside the group default), or the execution id
// when that is longer than 80 characters.
func ExecutionName(template string, sch *Schedule, slot time.Time) string {
	loc, err := expr.LoadTimezone(sch.ScheduleExpressionTimezone)
	if err != nil {
		loc = time.UTC
	}
	local := slot.In(loc)
	if template != "" {
		return strings.NewReplacer(
			"<aws.scheduler.scheduled-time>", slot.UTC().Format("20060102T150405Z"),
			"<stepwise.scheduled-date>", local.Format("20060102"),
			"<stepwise.scheduled-local-time>", local.Format("20060102T150405"),
			"<aws.scheduler.execution-id>", ExecutionID(sch.Arn, slot),
		).Replace(template)
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

// StartRequest is the StartExecution request a slot makes.
func StartRequest(sch *Schedule, slot time.Time) (map[string]any, error) {
	t := sch.Target
	req := map[string]any{}
	template := ""
	if t.Arn == UniversalStartExecution {
		if err := json.Unmarshal([]byte(*t.Input), &req); err != nil {
			return nil, err
		}
		if n, ok := req["Name"].(string); ok {
			template = n
		}
		if in, ok := req["Input"].(string); ok {
			req["Input"] = contextAttributes(in, sch, slot)
		}
	} else {
		req["StateMachineArn"] = t.Arn
		if t.Input != nil {
			req["Input"] = contextAttributes(*t.Input, sch, slot)
		}
	}
	req["Name"] = ExecutionName(template, sch, slot)
	// The API's JSON names its members in lower camel case.
	out := map[string]any{}
	for k, v := range req {
		if k != "" {
			k = strings.ToLower(k[:1]) + k[1:]
		}
		out[k] = v
	}
	return out, nil
}

// start starts the execution of a slot; an execution of that name that
// exists already means the slot fired before (exactly once).
func (s *Service) start(ctx context.Context, cfg FireConfig, sch *Schedule, slot time.Time) error {
	req, err := StartRequest(sch, slot)
	if err != nil {
		return err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	r.Header.Set("X-Amz-Target", "AWSStepFunctions.StartExecution")
	rec := httptest.NewRecorder()
	cfg.API.ServeHTTP(rec, r)
	if rec.Code == http.StatusOK {
		s.cfg.Logger.Info("scheduler: fired", "schedule_arn", sch.Arn, "slot", slot, "execution_name", req["name"])
		return nil
	}
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	if strings.HasSuffix(e.Type, "ExecutionAlreadyExists") {
		return nil
	}
	return errors.New("StartExecution: " + e.Type + ": " + e.Message)
}
