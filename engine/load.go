package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"stepwise/engine/start"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// The load stage: the execution a step is for. A new one for a start
// (newLive); otherwise the one in memory, or a RUNNING execution not in
// memory rebuilt from the store by replaying its log (fill), its timers
// re-armed and its unfinished tasks dispatched again. In a cluster, an
// execution is loaded only by the node that owns it (own, cluster.go).

// newLive makes the live execution of a new one started at now; it joins
// the live executions once its start is committed.
func (e *Engine) newLive(p *start.Params, now time.Time) (*liveExecution, error) {
	x, row, err := e.newExecution(p, now)
	if err != nil {
		return nil, err
	}
	l := &liveExecution{arn: row.Arn, x: x, row: *row, timers: map[string]time.Time{}, tasks: map[string]*interp.TaskRequest{}}
	e.watch(l)
	return l, nil
}

// newExecution makes the interpreter's execution and the row of a new
// execution started at now.
func (e *Engine) newExecution(p *start.Params, now time.Time) (*interp.Execution, *store.Execution, error) {
	input := p.InputValue
	if !p.InputParsed {
		var err error
		if input, err = jsonvalue.ParseString(p.Input); err != nil {
			return nil, nil, &InvalidInputError{Err: err}
		}
	}
	row := &store.Execution{
		Arn:             p.ExecutionArn,
		StateMachineArn: p.StateMachine.Arn,
		RevisionID:      p.StateMachine.RevisionID,
		Name:            p.Name,
		Status:          history.StatusRunning,
		Input:           p.Input,
		StartDate:       now,
		RoleArn:         p.StateMachine.RoleArn,
		TraceHeader:     p.TraceHeader,
		TestCase:        p.TestCase,
		VersionArn:      p.VersionArn,
		AliasArn:        p.AliasArn,
		MapRunArn:       p.MapRunArn,
		Policies:        policiesText(p),
	}
	opts := e.options()
	opts.Policies = p.Policies
	x := interp.New(p.Machine, e.info(row), input, opts)
	x.InputText = p.Input
	return x, row, nil
}

// watch makes l's interpreter cut its steps short when the engine stops
// (abandoned) or a stop is asked for (stopped where the step is), and
// time its evaluations with the wall clock.
func (e *Engine) watch(l *liveExecution) {
	l.x.Opts.Clock = e.cfg.EvalClock
	l.x.Opts.Interrupt = func() *interp.Interruption {
		if e.halting.Load() {
			return abandon
		}
		return l.stop.Load()
	}
}

// get returns the live execution, loading it from the store when needed.
func (e *Engine) get(ctx context.Context, arn string) (*liveExecution, error) {
	e.mu.Lock()
	if l := e.live[arn]; l != nil {
		e.mu.Unlock()
		return l, nil
	}
	if e.cl != nil {
		// Only the owner runs an execution.
		e.mu.Unlock()
		if err := e.own(ctx, arn); err != nil {
			return nil, err
		}
		e.mu.Lock()
		if l := e.live[arn]; l != nil {
			e.mu.Unlock()
			return l, nil
		}
	}
	l := &liveExecution{arn: arn}
	l.mu.Lock()
	e.live[arn] = l
	e.mu.Unlock()
	err := e.fill(ctx, l, false)
	if err != nil {
		e.drop(l)
	}
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return l, nil
}

// drop removes l from the live executions.
func (e *Engine) drop(l *liveExecution) {
	l.gone = true
	e.mu.Lock()
	if e.live[l.arn] == l {
		delete(e.live, l.arn)
	}
	e.mu.Unlock()
}

// load makes a stored execution live (used on start).
func (e *Engine) load(ctx context.Context, arn string) (*liveExecution, error) {
	l, err := e.get(ctx, arn)
	var ended *errEnded
	if errors.As(err, &ended) {
		return nil, nil
	}
	return l, err
}

// fill rebuilds l from the store by replaying its log, then re-arms its
// timers and dispatches its unfinished tasks again. An execution that has
// ended is an *errEnded unless ended is true. l.mu is held.
func (e *Engine) fill(ctx context.Context, l *liveExecution, ended bool) error {
	ex := e.store.Executor()
	row, err := ex.ExecutionGet(ctx, l.arn)
	if err != nil {
		return err
	}
	if row.Status != history.StatusRunning && !ended {
		return &errEnded{row: row}
	}
	m, err := e.machine(ctx, row.StateMachineArn, row.RevisionID)
	if err != nil {
		return err
	}
	input, err := jsonvalue.ParseString(row.Input)
	if err != nil {
		return fmt.Errorf("execution %s: stored input: %w", l.arn, err)
	}
	// The replay runs without a clock: the evaluations that ran out of
	// time, or that a stop cut short, end where the log says they did.
	// The activities found missing are those the log names.
	opts := e.options()
	opts.Clock, opts.ActivityExists = nil, nil
	if opts.Policies, err = interp.ParsePolicies(row.Policies); err != nil {
		return fmt.Errorf("execution %s: stored policies: %w", l.arn, err)
	}
	x := interp.New(m, e.info(row), input, opts)
	x.InputText = row.Input
	inputs, err := ex.InputList(ctx, l.arn)
	if err != nil {
		return err
	}
	if len(inputs) > 0 && inputs[0].Seq == 0 {
		en, err := decodeEntry(inputs[0].Body)
		if err != nil {
			return fmt.Errorf("execution %s: replay log entry 0: %w", l.arn, err)
		}
		en.replay(x)
		inputs = inputs[1:]
	}
	// The tasks without a result are those the replayed steps ran and
	// neither cancelled nor got a result for, in the order they ran.
	var pending pendingTasks
	_, cmds, err := x.Start(row.StartDate)
	if err != nil {
		return fmt.Errorf("execution %s: replay of its start: %w", l.arn, err)
	}
	pending.track(x, nil, cmds)
	held := map[string]bool{}      // activity tasks started: true while a worker holds one, false once released
	submitted := map[string]bool{} // callbacks whose request was made: not made again
	jobs := map[string]any{}       // the services' answers recorded in TaskSubmitted
	for _, in := range inputs {
		en, err := decodeEntry(in.Body)
		if err != nil {
			return fmt.Errorf("execution %s: replay log entry %d: %w", l.arn, in.Seq, err)
		}
		en.replay(x)
		ev := en.Event
		switch ev.Kind {
		case interp.TaskStarted:
			held[ev.ID] = true
		case interp.TaskReleased:
			held[ev.ID] = false
		case interp.TaskSubmitted:
			submitted[ev.ID] = true
			jobs[ev.ID] = ev.Output
		case interp.RerunKind:
			if ev.Rerun != nil && ev.Rerun.Definition != "" {
				if ev.Rerun.Machine, err = rerunMachine(ev.Rerun.Definition); err != nil {
					return fmt.Errorf("execution %s: replay log entry %d: %w", l.arn, in.Seq, err)
				}
			}
		}
		_, cmds, err := x.Step(ev, in.At)
		if err != nil {
			return fmt.Errorf("execution %s: replay of entry %d: %w", l.arn, in.Seq, err)
		}
		pending.track(x, &ev, cmds)
		// The activity tasks the step handed out as it scheduled them.
		for _, h := range en.Started {
			held[h.ID] = true
			started := h.startedEvent()
			_, cmds, err := x.Step(started, in.At)
			if err != nil {
				return fmt.Errorf("execution %s: replay of entry %d's hand-out of task %s: %w", l.arn, in.Seq, h.ID, err)
			}
			pending.track(x, &started, cmds)
		}
	}
	// The row's last event id is only written with the row (see
	// store.Step): the history's last event is the one to match.
	last, err := ex.EventList(ctx, &store.EventListParams{ExecutionArn: l.arn, Reverse: true, Limit: 1})
	if err != nil {
		return err
	}
	var lastID int64
	if len(last) > 0 {
		lastID = last[0].ID
	}
	if x.LastEventID() != lastID || x.Status != row.Status {
		return fmt.Errorf("execution %s: replay diverged from the store (event %d, status %s; stored %d, %s)",
			l.arn, x.LastEventID(), x.Status, lastID, row.Status)
	}
	timers, err := ex.TimerListForExecution(ctx, l.arn)
	if err != nil {
		return err
	}
	l.x, l.row, l.seq = x, *row, 0
	if n := len(inputs); n > 0 {
		l.seq = inputs[n-1].Seq
	}
	e.watch(l)
	l.timers, l.tasks, l.released, l.started = map[string]time.Time{}, map[string]*interp.TaskRequest{}, nil, nil
	// Execution time does not run backwards: the clock is at least at the
	// last step (a virtual clock starts again from real time on a restart).
	latest := row.StartDate
	if n := len(inputs); n > 0 && inputs[n-1].At.After(latest) {
		latest = inputs[n-1].At
	}
	e.clock.advance(latest)
	for _, t := range timers {
		l.timers[t.ID] = t.FireAt
		e.timers.add(l.arn, t.ID, t.FireAt)
	}
	for _, id := range pending.order {
		r := pending.tasks[id]
		if r == nil || l.tasks[id] != nil {
			continue
		}
		l.tasks[id] = r
		e.work.taskRunning(l.arn, id)
		if h, started := held[id]; started && interp.IsActivity(r.Resource) {
			if h {
				if l.started == nil {
					l.started = map[string]bool{}
				}
				l.started[id] = true
				continue // its worker holds the token and will answer
			}
			if l.released == nil {
				l.released = map[string]bool{}
			}
			l.released[id] = true // its worker never got it: queued again
		}
		if submitted[id] && isCallback(r) {
			continue // the request carrying its token was made
		}
		// A .sync job whose start was recorded is followed, not
		// started again.
		e.dispatch(&l.row, id, r, jobs[id], true)
	}
	return nil
}

// pendingTasks follows the tasks of an execution being replayed: those
// its steps ran and that neither were cancelled nor got a result.
type pendingTasks struct {
	tasks map[string]*interp.TaskRequest
	order []string // ids in the order they ran
}

// track applies a replayed step: ev (nil for the start) and the commands
// it returned.
func (p *pendingTasks) track(x *interp.Execution, ev *interp.Event, cmds []interp.Command) {
	if p.tasks == nil {
		p.tasks = map[string]*interp.TaskRequest{}
	}
	if ev != nil && (ev.Kind == interp.TaskSucceeded || ev.Kind == interp.TaskFailed) {
		delete(p.tasks, ev.ID)
	}
	for _, c := range cmds {
		switch c.Kind {
		case interp.RunTask:
			p.tasks[c.ID] = c.Task
			p.order = append(p.order, c.ID)
		case interp.CancelTask:
			delete(p.tasks, c.ID)
		}
	}
	if x.Status != history.StatusRunning {
		clear(p.tasks)
		p.order = p.order[:0]
	}
}
