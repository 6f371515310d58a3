package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/store"
)

// The step loop. Every step of an execution goes through the same stages,
// in this order, each in a file of its own (see doc.go):
//
//	load       load.go       the execution: a new one, the one in memory, or rebuilt from the store
//	own        own.go        the step is taken here under the execution's lock, or by the node that owns it
//	interpret  interpret.go  the interpreter takes the event: history events and commands
//	throttle   throttle.go   the transition quota holds the step back
//	write      write.go      the store work of the step and the row it leaves
//	commit     commit.go     the step made durable, in a transaction shared with others
//	observe    observe.go    the observer told of the committed step
//	effects    effects.go    the commands carried out: timers armed, tasks dispatched
//
// The functions below call the stages in that order; a stage calls only
// helpers below it, never a stage before it. Its entry points are the
// outside events: a start, a stop, a redrive, a timer, a task's result.

// liveExecution is a RUNNING execution held in memory. Its mutex orders the
// steps of the execution; gone means it was dropped from the engine (ended,
// or its state may no longer match the store) and must be looked up again.
type liveExecution struct {
	mu  sync.Mutex
	arn string
	x   *interp.Execution
	row store.Execution
	// rowID is the store's id of the execution's row, once a committed
	// step told it (store.Step.ExecutionID); 0 before.
	rowID  int64
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
	// direct holds the pollers the step being taken claimed for the
	// activity tasks it schedules, by task id (see claimPollers): given
	// their tasks once the step is committed.
	direct map[string]claimed
	gone   bool
	// stop is set by StopExecution before it waits for the execution's
	// lock: a step in flight stops the execution where it is instead of
	// running its evaluations to their end.
	stop atomic.Pointer[interp.Interruption]
}

// task is the Task of one of l's task requests.
func (l *liveExecution) task(id string, r *interp.TaskRequest) *task.Task {
	return &task.Task{ExecutionArn: l.arn, ID: id, Request: r, StateMachineArn: l.row.StateMachineArn, TestCase: l.row.TestCase}
}

// errEnded is returned by get for an execution that is not running.
type errEnded struct{ row *store.Execution }

func (e *errEnded) Error() string { return "execution " + e.row.Arn + " is " + string(e.row.Status) }

// StartExecution creates the execution and commits its first step: the
// stages of a step, with a new execution for load and nothing to own.
func (e *Engine) StartExecution(ctx context.Context, p *start.Params) (*store.Execution, error) {
	if err := e.beginStep(); err != nil {
		return nil, err
	}
	defer e.endStep()
	now := e.now()
	e.remember(p.StateMachine.Arn, p.StateMachine.RevisionID, p.Machine)
	l, err := e.newLive(p, now)
	if err != nil {
		return nil, err
	}
	events, cmds, err := l.x.Start(now)
	if err != nil {
		return nil, errStopped // only the engine stopping abandons a start
	}
	if err := e.throttle(ctx, l, events); err != nil {
		return nil, err
	}
	w, next := e.stepWrite(l, now, nil, nil, events, cmds)
	if err := e.commitStep(ctx, l, nil, w, &next); err != nil {
		return nil, err
	}
	e.observe(&l.row, "", nil, events, nil)
	running := l.x.Status == history.StatusRunning
	if running {
		e.mu.Lock()
		e.live[l.arn] = l
		e.mu.Unlock()
		e.waitingStarted(l.arn, p.Policies)
	}
	l.mu.Lock()
	e.after(l, nil, cmds)
	if !running {
		e.drop(l)
	}
	out := l.row
	l.mu.Unlock()
	return &out, nil
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

// stepVia is step, the step loop: load the execution, own the step (here
// under the execution's lock, or on the node that owns it), then the
// stages of stepLocked. In a cluster, an execution another node owns
// takes the step there when forward is set (and it is errMoved
// otherwise).
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
			row, applied, err := e.stepElsewhere(ctx, elsewhere.node, arn, ev)
			if errors.Is(err, errMoved) {
				// The owner died or let go: the next owner, or this
				// node once it claimed the orphan, takes the step.
				continue
			}
			return row, applied, err
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

// maxReroutes bounds the times a request is sent again to an execution's
// owner (see rerouteWait): about 30 s, long enough for a node that is
// stopping to release its executions, or a dead one's lease to run out.
const maxReroutes = 130

// rerouteWait waits before a request is sent again to an execution's
// owner, a little longer each time; false when the engine stops.
func (e *Engine) rerouteWait(try int) bool {
	select {
	case <-time.After(min(time.Duration(try)*20*time.Millisecond, 250*time.Millisecond)):
		return true
	case <-e.halted:
		return false
	}
}

// stepLocked runs one step from interpret on; l.mu is held. applied is
// false when the execution did not take the event.
func (e *Engine) stepLocked(ctx context.Context, l *liveExecution, ev interp.Event) (*store.Execution, bool, error) {
	now, events, cmds, err := e.interpret(l, ev)
	if errors.Is(err, interp.ErrInterrupted) {
		// The engine is stopping; the step was abandoned half-way and
		// the execution resumes from the store on the next start.
		e.drop(l)
		return nil, false, errStopped
	}
	if err != nil || len(events) == 0 && len(cmds) == 0 && !interp.IsOperator(ev.Kind) {
		// An operator's control is recorded even when it writes and
		// asks for nothing (a hold, a suspension).
		return untaken(l, ev, err)
	}
	en, events, cmds, err := e.claimPollers(l, now, &ev, events, cmds)
	if err != nil {
		return nil, false, err
	}
	if err := e.commitEntryLocked(ctx, l, now, ev, en, events, cmds); err != nil {
		return nil, false, err
	}
	out := l.row
	return &out, true, nil
}

// untaken is the answer of a step the execution did not take: the
// interpreter refused ev (err, which is not interp.ErrInterrupted), or
// took it with nothing to write or do. l.mu is held.
func untaken(l *liveExecution, ev interp.Event, err error) (*store.Execution, bool, error) {
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
	if ev.Kind != interp.TaskHeartbeat {
		out := l.row
		return &out, false, nil // an event for a task or timer no longer awaited
	}
	out := l.row // a heartbeat of a task without HeartbeatSeconds
	return &out, l.tasks[ev.ID] != nil, nil
}

// commitLocked takes a step the interpreter took (its event, the events
// and commands it returned) through the stages after interpret: throttle,
// write, commit, observe and effects; l.mu is held.
func (e *Engine) commitLocked(ctx context.Context, l *liveExecution, now time.Time, ev interp.Event, events []*history.Event, cmds []interp.Command) error {
	return e.commitEntryLocked(ctx, l, now, ev, nil, events, cmds)
}

// commitEntryLocked is commitLocked with the step's replay log entry en
// made already (nil: made from the execution now).
func (e *Engine) commitEntryLocked(ctx context.Context, l *liveExecution, now time.Time, ev interp.Event, en *entry, events []*history.Event, cmds []interp.Command) error {
	if err := e.throttle(ctx, l, events); err != nil {
		e.unclaim(l)
		e.drop(l) // the in-memory state is ahead of the store
		return err
	}
	w, next := e.stepWrite(l, now, &ev, en, events, cmds)
	previous := l.row.Status
	if err := e.commitStep(ctx, l, &ev, w, &next); err != nil {
		e.unclaim(l)
		// The in-memory state is ahead of the store: drop it, the next
		// event reloads the execution from the store.
		e.drop(l)
		if errors.Is(err, store.ErrFenced) {
			e.fenced()
		}
		return err
	}
	for id := range l.direct { // handed out in the step (claimPollers)
		if l.started == nil {
			l.started = map[string]bool{}
		}
		l.started[id] = true
	}
	e.observe(&l.row, previous, &ev, events, l.tasks[ev.ID])
	e.after(l, &ev, cmds)
	if l.x.Status != history.StatusRunning {
		e.drop(l)
	}
	return nil
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
// where it stopped. Who asks for it, when ctx says (WithActor), is kept in
// the replay log for the operator log.
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
	out, _, err := e.stepLocked(ctx, l, interp.Event{Kind: interp.Redrive, By: actorOf(ctx)})
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
