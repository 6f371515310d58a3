package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"stepwise/console"
	"stepwise/scheduler"
)

// consoleSchedules is the console's access to the Scheduler API, in
// process: the schedules' list and pages, and their Enable and Disable
// buttons, which change a schedule as UpdateSchedule does.
type consoleSchedules struct{ sched *scheduler.Service }

var _ console.Scheduler = consoleSchedules{}

// list is the schedules' page: each with its next 3 runs.
func (c consoleSchedules) list(ctx context.Context) ([]console.ScheduleView, error) {
	list, err := c.sched.Overview(ctx, 3)
	if err != nil {
		return nil, err
	}
	out := make([]console.ScheduleView, len(list))
	for i, o := range list {
		out[i] = scheduleView(o)
		if o.Target == scheduler.UniversalStartExecution {
			// The list links the state machine the request names.
			if sc, err := c.sched.GetSchedule(ctx, o.Group, o.Name); err == nil {
				out[i].Target, _ = executionsOf(sc)
			}
		}
	}
	return out, nil
}

// planned is tonight's page's list: the schedules' firings in [from, to).
func (c consoleSchedules) planned(ctx context.Context, from, to time.Time) ([]console.PlannedRun, error) {
	list, err := c.sched.Planned(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]console.PlannedRun, len(list))
	for i, p := range list {
		out[i] = console.PlannedRun{Group: p.Group, Name: p.Name, At: p.At, StateMachine: p.StateMachine, Execution: p.Execution}
	}
	return out, nil
}

// notes are the scheduler's differences from AWS as the console words them.
func notes(ds []scheduler.Difference) []console.Note {
	out := make([]console.Note, len(ds))
	for i, d := range ds {
		out[i] = console.Note{Kind: d.Kind, Calendar: d.Calendar, Rule: d.Rule, Detail: d.Detail}
	}
	return out
}

func scheduleView(o scheduler.Overview) console.ScheduleView {
	return console.ScheduleView{Arn: o.Arn, Group: o.Group, Name: o.Name, State: o.State, Expression: o.Expression,
		Timezone: o.Timezone, Target: o.Target, LastFired: o.LastFired, Next: o.Next, Calendar: o.Calendar, NotAWS: notes(o.NotAWS),
		Held: o.Held, Skipped: o.Skipped}
}

// Schedule is a schedule's page: GetSchedule, and its overview with its
// next 10 runs.
func (c consoleSchedules) Schedule(ctx context.Context, group, name string) (*console.ScheduleDetail, error) {
	sc, err := c.get(ctx, group, name)
	if err != nil {
		return nil, err
	}
	list, err := c.sched.Overview(ctx, 10)
	if err != nil {
		return nil, err
	}
	d := &console.ScheduleDetail{ScheduleView: console.ScheduleView{Arn: sc.Arn, Group: sc.GroupName, Name: sc.Name, State: sc.State,
		Expression: sc.ScheduleExpression, Timezone: sc.ScheduleExpressionTimezone}, ActionAfterCompletion: sc.ActionAfterCompletion}
	for _, o := range list {
		if o.Group == sc.GroupName && o.Name == sc.Name {
			d.ScheduleView = scheduleView(o)
		}
	}
	if sc.Description != nil {
		d.Description = *sc.Description
	}
	if sc.StartDate != nil {
		d.StartDate = &sc.StartDate.Time
	}
	if sc.EndDate != nil {
		d.EndDate = &sc.EndDate.Time
	}
	if w := sc.FlexibleTimeWindow; w != nil {
		d.FlexibleMode = w.Mode
		if w.MaximumWindowInMinutes != nil {
			d.FlexibleMinutes = *w.MaximumWindowInMinutes
		}
	}
	if sc.CreationDate != nil {
		d.Created = sc.CreationDate.Time
	}
	if sc.LastModificationDate != nil {
		d.LastModified = sc.LastModificationDate.Time
	}
	d.MaxEventAgeSeconds = int(sc.MaximumEventAge().Seconds())
	d.MaxRetryAttempts = sc.MaximumRetryAttempts()
	if t := sc.Target; t != nil {
		if t.DeadLetterConfig != nil && t.DeadLetterConfig.Arn != nil {
			d.DeadLetterArn = *t.DeadLetterConfig.Arn
		}
		if t.Input != nil {
			d.Input = *t.Input
		}
		d.StateMachine, d.ExecutionPrefix = executionsOf(sc)
	}
	return d, nil
}

// executionsOf is the state machine a schedule starts and the prefix of
// the names it gives its executions (scheduler.ExecutionName): its
// template's text before the first placeholder, or by default
// "[<group>.]<name>-".
func executionsOf(sc *scheduler.Schedule) (stateMachine, prefix string) {
	t := sc.Target
	if t.Arn != scheduler.UniversalStartExecution {
		if !strings.Contains(t.Arn, ":states:") {
			return "", ""
		}
		stateMachine = t.Arn
	} else {
		var req struct{ StateMachineArn, Name string }
		if t.Input == nil || json.Unmarshal([]byte(*t.Input), &req) != nil {
			return "", ""
		}
		if req.Name != "" {
			prefix, _, _ = strings.Cut(req.Name, "<")
			return req.StateMachineArn, prefix
		}
		stateMachine = req.StateMachineArn
	}
	prefix = sc.Name + "-"
	if sc.GroupName != scheduler.DefaultGroup {
		prefix = sc.GroupName + "." + prefix
	}
	return stateMachine, prefix
}

// SetScheduleState enables or disables a schedule: GetSchedule, then
// UpdateSchedule with its settings and the new state.
func (c consoleSchedules) SetScheduleState(ctx context.Context, group, name, state string) error {
	sc, err := c.get(ctx, group, name)
	if err != nil {
		return err
	}
	sc.State = state
	_, err = c.sched.UpdateSchedule(ctx, sc)
	return notFound(err)
}

// HoldNext holds a schedule's next run, or takes the hold back.
func (c consoleSchedules) HoldNext(ctx context.Context, group, name string, hold bool) error {
	var err error
	if hold {
		_, err = c.sched.HoldNext(ctx, group, name)
	} else {
		_, err = c.sched.ReleaseHold(ctx, group, name)
	}
	return notFound(err)
}

func (c consoleSchedules) get(ctx context.Context, group, name string) (*scheduler.Schedule, error) {
	sc, err := c.sched.GetSchedule(ctx, group, name)
	return sc, notFound(err)
}

// notFound is console.ErrNoSchedule for the Scheduler API's
// ResourceNotFoundException, and err otherwise.
func notFound(err error) error {
	var e *scheduler.Error
	if errors.As(err, &e) && e.Code == "ResourceNotFoundException" {
		return console.ErrNoSchedule
	}
	return err
}

// fileTriggers is the schedules page's section of file-arrival
// triggers: each with its last 5 files started.
func (c consoleSchedules) fileTriggers(ctx context.Context) ([]console.FileTriggerView, error) {
	list, err := c.sched.ListFileTriggers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]console.FileTriggerView, len(list))
	for i, t := range list {
		files, err := c.sched.ListFileArrivals(ctx, t.Name)
		if err != nil {
			return nil, err
		}
		out[i] = console.FileTriggerView{Name: t.Name, Watched: t.Watched(), Pattern: t.Pattern, StateMachineArn: t.StateMachineArn, State: t.State}
		for _, f := range files[:min(len(files), 5)] {
			out[i].Started = append(out[i].Started, console.FileStartView{File: f.Key, ExecutionArn: f.ExecutionArn, StartedAt: f.StartedAt.Time})
		}
	}
	return out, nil
}
