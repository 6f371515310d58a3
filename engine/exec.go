package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// liveExecution is a RUNNING execution held in memory. Its mutex orders the
// steps of the execution; gone means it was dropped from the engine (ended,
// or its state may no longer match the store) and must be looked up again.
type liveExecution struct {
	mu     sync.Mutex
	arn    string
	x      *interp.Execution
	row    store.Execution
	seq    int64                          // the replay log's last seq
	timers map[string]time.Time           // pending timers → when (interpreter time)
	tasks  map[string]*interp.TaskRequest // dispatched tasks without a result
	// released holds the started activity tasks whose hand-out was undone
	// (TaskReleased): queued for a worker again (see PollActivity).
	released map[string]bool
	// started holds the activity tasks a worker holds (TaskStarted, not
	// released): in a cluster, the others are kept in the store's queue
	// (see sweepQueue).
	started map[string]bool
	gone    bool
	// stop is set by StopExecution before it waits for the execution's
	// lock: a step in flight stops the execution where it is instead of
	// running its evaluations to their end.
	stop atomic.Pointer[interp.Interruption]
}

// task is the Task of one of l's task requests.
func (l *liveExecution) task(id string, r *interp.TaskRequest) *task.Task {
	return &task.Task{ExecutionArn: l.arn, ID: id, Request: r, StateMachineArn: l.row.StateMachineArn, TestCase: l.row.TestCase}
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

// errEnded is returned by get for an execution that is not running.
type errEnded struct{ row *store.Execution }

func (e *errEnded) Error() string { return "execution " + e.row.Arn + " is " + string(e.row.Status) }

// StartExecution creates the execution and commits its first step.
func (e *Engine) StartExecution(ctx context.Context, p *StartParams) (*store.Execution, error) {
	if err := e.beginStep(); err != nil {
		return nil, err
	}
	defer e.endStep()
	now := e.now()
	e.remember(p.StateMachine.Arn, p.StateMachine.RevisionID, p.Machine)
	x, row, err := e.newExecution(p, now)
	if err != nil {
		return nil, err
	}
	events, cmds, err := x.Start(now)
	if err != nil {
		return nil, errStopped // only the engine stopping abandons a start
	}
	l := &liveExecution{arn: row.Arn, x: x, row: *row, timers: map[string]time.Time{}, tasks: map[string]*interp.TaskRequest{}}
	e.watch(l)
	if err := e.throttle(ctx, l, events); err != nil {
		return nil, err
	}
	w, next := e.stepWrite(l, now, nil, events, cmds)
	if err := e.commit(ctx, l.arn, w); err != nil {
		return nil, err
	}
	l.row = next
	e.observe(&l.row, "", nil, events, nil)
	if x.Status == history.StatusRunning {
		e.mu.Lock()
		e.live[l.arn] = l
		e.mu.Unlock()
	}
	l.mu.Lock()
	e.after(l, nil, cmds)
	out := l.row
	l.mu.Unlock()
	return &out, nil
}

// newExecution makes the interpreter's execution and the row of a new
// execution started at now.
func (e *Engine) newExecution(p *StartParams, now time.Time) (*interp.Execution, *store.Execution, error) {
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
		Policies:        p.Policies.Text(),
	}
	opts := e.options()
	opts.Policies = p.Policies
	x := interp.New(p.Machine, e.info(row), input, opts)
	x.InputText = p.Input
	return x, row, nil
}

// StopExecution aborts a running execution. A step in flight, however
// long its evaluations would run, stops the execution where it is; the
// stop then finds it ended.
func (e *Engine) StopExecution(ctx context.Context, arn, errName, cause string) (*store.Execution, error) {
	e.mu.Lock()
	l := e.live[arn]
	e.mu.Unlock()
	if l != nil {
		stop := &interp.Interruption{Stop: true, Error: errName, Cause: cause}
		l.stop.Store(stop)
		// A stop that failed before it took the execution's lock
		// leaves no request behind for later steps.
		defer l.stop.CompareAndSwap(stop, nil)
	}
	return e.apply(ctx, arn, interp.Event{Kind: interp.Stop, Error: errName, Cause: cause})
}

// RedriveWindow is how long after it ended an execution can be redriven.
const RedriveWindow = 14 * 24 * time.Hour

// Redrivable is the rule of what can be redriven: a FAILED, TIMED_OUT or
// ABORTED execution that ended at most RedriveWindow before now. It
// returns nil, or a *NotRedrivableError saying why not.
func Redrivable(row *store.Execution, now time.Time) error {
	switch {
	case row.Status == history.StatusRunning || row.Status == history.StatusSucceeded:
		return &NotRedrivableError{Arn: row.Arn, Status: row.Status}
	case row.StopDate != nil && now.Sub(*row.StopDate) > RedriveWindow:
		return &NotRedrivableError{Arn: row.Arn, Expired: true}
	}
	return nil
}

// RedriveExecution restarts a FAILED, TIMED_OUT or ABORTED execution from
// where it stopped.
func (e *Engine) RedriveExecution(ctx context.Context, arn string) (*store.Execution, error) {
	if err := e.beginStep(); err != nil {
		return nil, err
	}
	defer e.endStep()
	row, err := e.store.Executor().ExecutionGet(ctx, arn)
	if err != nil {
		return nil, err
	}
	if err := Redrivable(row, e.now()); err != nil {
		return nil, err
	}
	if e.cl != nil {
		// The node that redrives an execution runs it.
		claimed, err := e.cl.Store().ExecutionClaimOne(ctx, e.cl.Fence(), arn)
		if err != nil {
			return nil, err
		}
		if !claimed {
			return nil, &NotRedrivableError{Arn: arn, Status: history.StatusRunning}
		}
	}
	l := &liveExecution{arn: arn}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := e.fill(ctx, l, true); err != nil {
		return nil, err
	}
	out, _, err := e.stepLocked(ctx, l, interp.Event{Kind: interp.Redrive})
	if err != nil {
		return nil, err
	}
	if !l.gone && l.x.Status == history.StatusRunning {
		e.mu.Lock()
		if e.live[arn] == nil {
			e.live[arn] = l
		}
		e.mu.Unlock()
	}
	return out, nil
}

// apply runs one step of execution arn with an outside event and returns
// the execution's row after it. An event for an execution that has ended
// changes nothing.
func (e *Engine) apply(ctx context.Context, arn string, ev interp.Event) (*store.Execution, error) {
	row, _, err := e.step(ctx, arn, ev)
	return row, err
}

// applyEvent is apply for callers that need to know whether the execution
// took the event: false when it has ended or no longer waits for it.
func (e *Engine) applyEvent(ctx context.Context, arn string, ev interp.Event) (bool, error) {
	_, applied, err := e.step(ctx, arn, ev)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return applied, err
}

func (e *Engine) step(ctx context.Context, arn string, ev interp.Event) (*store.Execution, bool, error) {
	return e.stepVia(ctx, arn, ev, true)
}

// stepVia is step; in a cluster, an execution another node owns takes the
// step there when forward is set (and it is errMoved otherwise).
func (e *Engine) stepVia(ctx context.Context, arn string, ev interp.Event, forward bool) (*store.Execution, bool, error) {
	if err := e.beginStep(); err != nil {
		return nil, false, err
	}
	defer e.endStep()
	for try := range maxReroutes {
		if try > 0 && (e.cl == nil && try == 3 || e.cl != nil && !e.rerouteWait(try)) {
			break
		}
		l, err := e.get(ctx, arn)
		var ended *errEnded
		if errors.As(err, &ended) {
			return ended.row, false, nil
		}
		var elsewhere *ownedElsewhere
		if errors.As(err, &elsewhere) {
			if !forward {
				return nil, false, errMoved
			}
			applied, err := e.remoteStep(ctx, elsewhere.node, arn, ev, ctx.Value(sendKey{}) != nil)
			if errors.Is(err, errMoved) {
				// The owner died or let go: the next owner, or this
				// node once it claimed the orphan, takes the step.
				continue
			}
			if err != nil {
				return nil, false, err
			}
			var row *store.Execution
			if ev.Kind == interp.Stop {
				if row, err = e.store.Executor().ExecutionGet(ctx, arn); err != nil {
					return nil, false, err
				}
			}
			return row, applied, nil
		}
		if err != nil {
			return nil, false, err
		}
		l.mu.Lock()
		if ev.Kind == interp.Stop {
			l.stop.Store(nil) // the stop is this step now
		}
		if l.gone {
			l.mu.Unlock()
			continue
		}
		row, applied, err := e.stepLocked(ctx, l, ev)
		l.mu.Unlock()
		return row, applied, err
	}
	return nil, false, fmt.Errorf("execution %s: could not be loaded", arn)
}

// stepLocked runs one step; l.mu is held. applied is false when the
// execution did not take the event.
func (e *Engine) stepLocked(ctx context.Context, l *liveExecution, ev interp.Event) (*store.Execution, bool, error) {
	now := e.now()
	if now.Before(l.row.StartDate) {
		now = l.row.StartDate
	}
	events, cmds, err := l.x.Step(ev, now)
	if errors.Is(err, interp.ErrInterrupted) {
		// The engine is stopping; the step was abandoned half-way and
		// the execution resumes from the store on the next start.
		e.drop(l)
		return nil, false, errStopped
	}
	if errors.Is(err, interp.ErrNotRedrivable) {
		return nil, false, &NotRedrivableError{Arn: l.arn}
	}
	if errors.Is(err, interp.ErrNotRunning) {
		out := l.row
		return &out, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(events) == 0 && len(cmds) == 0 && ev.Kind != interp.TaskHeartbeat {
		out := l.row
		return &out, false, nil // an event for a task or timer no longer awaited
	}
	if len(events) == 0 && len(cmds) == 0 {
		out := l.row // a heartbeat of a task without HeartbeatSeconds
		return &out, l.tasks[ev.ID] != nil, nil
	}
	if err := e.commitLocked(ctx, l, now, ev, events, cmds); err != nil {
		return nil, false, err
	}
	out := l.row
	return &out, true, nil
}

// commitLocked commits a step the interpreter took (its event, the events
// and commands it returned) and carries out its commands; l.mu is held.
func (e *Engine) commitLocked(ctx context.Context, l *liveExecution, now time.Time, ev interp.Event, events []*history.Event, cmds []interp.Command) error {
	if err := e.throttle(ctx, l, events); err != nil {
		e.drop(l) // the in-memory state is ahead of the store
		return err
	}
	w, next := e.stepWrite(l, now, &ev, events, cmds)
	if err := e.commit(ctx, l.arn, w); err != nil {
		// The in-memory state is ahead of the store: drop it, the next
		// event reloads the execution from the store.
		e.drop(l)
		if errors.Is(err, store.ErrFenced) {
			e.fenced()
		}
		return err
	}
	previous := l.row.Status
	l.row = next
	l.seq++
	switch ev.Kind {
	case interp.TaskStarted:
		if l.started == nil {
			l.started = map[string]bool{}
		}
		l.started[ev.ID] = true
	case interp.TaskReleased, interp.TaskSucceeded, interp.TaskFailed:
		delete(l.started, ev.ID)
	}
	e.observe(&l.row, previous, &ev, events, l.tasks[ev.ID])
	e.after(l, &ev, cmds)
	return nil
}

// stepWrite builds the store work of a step and the execution row it leaves.
// ev is nil for the start, which inserts the execution.
func (e *Engine) stepWrite(l *liveExecution, now time.Time, ev *interp.Event, events []*history.Event, cmds []interp.Command) (*store.Step, store.Execution) {
	x := l.x
	next := l.row
	next.Status = x.Status
	next.RedriveCount = x.Info.RedriveCount
	if ev != nil && ev.Kind == interp.Redrive {
		redriven := now
		next.RedriveDate = &redriven
		next.StopDate, next.Output, next.Error, next.Cause = nil, nil, nil, nil
	}
	if x.Status != history.StatusRunning {
		setEnd(&next, x, now)
	}
	// A step that leaves the execution RUNNING as it was only appends to
	// its history and replay log; the others write its row.
	rowChanged := ev == nil || ev.Kind == interp.Redrive || next.Status != l.row.Status ||
		next.RedriveCount != l.row.RedriveCount
	if rowChanged {
		next.LastEventID = x.LastEventID()
		next.Version++
	}

	evRows := make([]*store.Event, len(events))
	size := 0
	for _, he := range events {
		size += he.JSONSizeHint()
	}
	buf := make([]byte, 0, size) // one buffer for the step's events, sized once
	for i, he := range events {
		start := len(buf)
		buf = he.AppendJSON(buf)
		evRows[i] = &store.Event{ExecutionArn: l.arn, ID: he.ID, Type: he.Type, Timestamp: he.Timestamp, Body: buf[start:len(buf):len(buf)]}
	}
	// Tasks are not stored: the replay log determines them (see fill).
	var addTimers []*store.Timer
	var delTimers, delTasks []string
	for _, c := range cmds {
		switch c.Kind {
		case interp.StartTimer:
			addTimers = append(addTimers, &store.Timer{ExecutionArn: l.arn, ID: c.ID, FireAt: c.At})
		case interp.CancelTimer:
			delTimers = append(delTimers, c.ID)
		}
	}
	// The replay log holds the step's event and the evaluations it cut
	// short; a start has no event, and an entry of its own (seq 0) only
	// when it cut an evaluation short.
	var input *store.Input
	en := stepEntry(x, ev)
	if ev != nil {
		input = &store.Input{ExecutionArn: l.arn, Seq: l.seq + 1, At: now, Body: encodeEntry(en)}
		if ev.Kind == interp.TimerFired {
			delTimers = append(delTimers, ev.ID)
		}
	} else if len(en.Marks) > 0 || len(en.Missing) > 0 {
		input = &store.Input{ExecutionArn: l.arn, Seq: 0, At: now, Body: encodeEntry(en)}
	}
	if x.Status != history.StatusRunning {
		for id := range l.timers {
			delTimers = append(delTimers, id)
		}
		// Task rows were written by earlier versions: an execution's
		// last step removes those of the tasks it still had.
		for id := range l.tasks {
			delTasks = append(delTasks, id)
		}
		// Nothing the step itself armed outlives the execution.
		for _, t := range addTimers {
			delTimers = append(delTimers, t.ID)
		}
		addTimers = nil
	}
	step := &store.Step{Input: input, Events: evRows, DeleteTimers: delTimers, AddTimers: addTimers, DeleteTasks: delTasks}
	if e.cl != nil {
		fence := e.cl.Fence()
		step.Fence = &fence
	}
	if e.cfg.StatusNotice != nil && !isExpressArn(l.arn) {
		step.Outbox = statusNotices(e.cfg.StatusNotice, l.row.Status, &next, ev, now)
	}
	switch {
	case ev == nil:
		row := next
		step.Insert = &row
	case rowChanged:
		step.Update = &store.ExecutionUpdateParams{
			Arn: l.arn, ExpectedVersion: l.row.Version, Status: next.Status,
			Output: next.Output, Error: next.Error, Cause: next.Cause, StopDate: next.StopDate,
			LastEventID: next.LastEventID, RedriveCount: next.RedriveCount, RedriveDate: next.RedriveDate,
		}
	}
	return step, next
}

// setEnd records how x ended in its row: status, stop date, and output or
// error and cause.
func setEnd(row *store.Execution, x *interp.Execution, stop time.Time) {
	row.Status = x.Status
	row.StopDate = &stop
	if x.Status == history.StatusSucceeded {
		out := jsonvalue.String(x.Output)
		row.Output = &out
	}
	if fl := x.Failure; fl != nil {
		if fl.Name != "" {
			row.Error = &fl.Name
		}
		if fl.HasCause && fl.Cause != "" {
			// As the end event shows it (no empty cause).
			row.Cause = &fl.Cause
		}
	}
}

// after carries out a committed step's commands; l.mu is held.
func (e *Engine) after(l *liveExecution, ev *interp.Event, cmds []interp.Command) {
	if ev != nil {
		switch ev.Kind {
		case interp.TimerFired:
			delete(l.timers, ev.ID)
		case interp.TaskSucceeded, interp.TaskFailed:
			delete(l.tasks, ev.ID)
			e.work.taskEnded(l.arn, ev.ID)
		}
	}
	running := l.x.Status == history.StatusRunning
	for _, c := range cmds {
		switch c.Kind {
		case interp.StartTimer:
			if running {
				l.timers[c.ID] = c.At
				e.timers.add(l.arn, c.ID, c.At)
			}
		case interp.CancelTimer:
			delete(l.timers, c.ID)
			e.timers.remove(l.arn, c.ID)
		case interp.RunTask:
			if running {
				l.tasks[c.ID] = c.Task
				e.work.taskRunning(l.arn, c.ID)
				e.dispatch(&l.row, c.ID, c.Task, nil, false)
			}
		case interp.CancelTask:
			delete(l.tasks, c.ID)
			e.work.taskEnded(l.arn, c.ID)
			e.cfg.Tasks.Cancel(l.arn, c.ID)
			e.gates.release(l.arn, c.ID)
		}
	}
	if !running {
		row := l.row
		e.childEnded(&row)
		for id := range l.timers {
			e.timers.remove(l.arn, id)
		}
		for id := range l.tasks {
			e.work.taskEnded(l.arn, id)
			e.cfg.Tasks.Cancel(l.arn, id)
			e.gates.release(l.arn, id)
		}
		l.timers, l.tasks = map[string]time.Time{}, map[string]*interp.TaskRequest{}
		e.drop(l)
	}
}

// fire is called by the timer queue; done is called once the timer's step
// is over.
func (e *Engine) fire(arn, id string, done func()) {
	if arn == "" {
		e.fireAlarm(id, done)
		return
	}
	go func() {
		defer done()
		if _, err := e.apply(e.ctx, arn, interp.Event{Kind: interp.TimerFired, ID: id}); err != nil && !errors.Is(err, errStopped) {
			e.log.ErrorContext(e.ctx, "engine: timer step failed", "execution_arn", arn, "timer_id", id, "error", err)
		}
	}()
}

// dispatch hands a task to the task runner; its result becomes a step.
// The token calls of a .waitForTaskToken task are held back until the
// runner's first result is applied (or the task is cancelled). submitted
// is the service's answer the task's TaskSubmitted recorded before a
// restart (nil when none); resumed says the task is dispatched again
// after a restart or a takeover (Task.Resumed).
func (e *Engine) dispatch(row *store.Execution, id string, req *interp.TaskRequest, submitted any, resumed bool) {
	arn := row.Arn
	if isCallback(req) {
		e.gates.hold(arn, id)
	}
	tk := &task.Task{ExecutionArn: arn, ID: id, Request: req, StateMachineArn: row.StateMachineArn, TestCase: row.TestCase, Submitted: submitted, Resumed: resumed,
		ExecutionStart: row.StartDate.Truncate(time.Millisecond)}
	if e.cfg.TaskTrace != nil {
		tk.TraceParent = e.cfg.TaskTrace(row, req)
	}
	// The TaskStarted step of a request being sent, applied before the
	// task's result (which waits for it) so the history keeps its order.
	var (
		startMu sync.Mutex
		started chan struct{}
	)
	tk.Started = func() {
		startMu.Lock()
		defer startMu.Unlock()
		if started != nil {
			return
		}
		started = make(chan struct{})
		go func(ch chan struct{}) {
			defer close(ch)
			if _, err := e.apply(e.ctx, arn, interp.Event{Kind: interp.TaskStarted, ID: id}); err != nil && !errors.Is(err, errStopped) {
				e.log.ErrorContext(e.ctx, "engine: task started step failed", "execution_arn", arn, "task_id", id, "error", err)
			}
		}(started)
	}
	startedStep := func() chan struct{} {
		startMu.Lock()
		defer startMu.Unlock()
		return started
	}
	e.cfg.Tasks.Run(e.ctx, tk, func(r task.Result) {
		if r.Waiting {
			e.gates.release(arn, id)
			return
		}
		ev := interp.Event{Kind: interp.TaskSucceeded, ID: id, Output: r.Output}
		switch {
		case r.Failure != nil:
			ev = interp.Event{Kind: interp.TaskFailed, ID: id, Error: r.Failure.Name, Cause: r.Failure.Cause}
		case r.Submitted:
			ev.Kind = interp.TaskSubmitted
		}
		if !r.Submitted {
			e.work.taskAnswered(arn, id)
		}
		go func() {
			if ch := startedStep(); ch != nil {
				<-ch
			}
			_, err := e.apply(e.ctx, arn, ev)
			if r.Recorded != nil {
				r.Recorded(err)
			}
			e.gates.release(arn, id)
			if err != nil && !errors.Is(err, errStopped) {
				e.log.ErrorContext(e.ctx, "engine: task result step failed", "execution_arn", arn, "task_id", id, "error", err)
			}
		}()
	})
}
