package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/interp"
)

// syncSeq numbers in-memory executions so their task ids are unique in the
// task runner.
var syncSeq atomic.Int64

// StartSyncExecution runs an execution in memory to its end: nothing is
// stored, as for AWS's synchronous Express workflows.
func (e *Engine) StartSyncExecution(ctx context.Context, p *start.Params) (*start.SyncResult, error) {
	if err := e.beginStep(); err != nil {
		return nil, err
	}
	defer e.steps.Done()
	// For the clock, the run is work only while it steps or has a task
	// out (see step and handle), not while it waits on its timers.
	e.work.stepEnded()
	began := e.now()
	x, row, err := e.newExecution(p, began)
	if err != nil {
		return nil, err
	}
	runID := fmt.Sprintf("sync-%d", syncSeq.Add(1))

	// The execution's time: the engine's, except that in skip mode (and
	// at a scale of 0) its timers skip on a clock of its own, since
	// nothing outside the execution sees its time. In skip mode the clock
	// skips only while the execution has no step in flight and no task
	// outstanding. The timer loop starts with the first timer.
	clk, work := e.clock, newWork()
	now := func() time.Time { return clk.now().UTC().Truncate(time.Millisecond) }
	type outside struct {
		ev   interp.Event
		done func() // a timer's: called once its step is over
	}
	// Timers and tasks tell of their ends here: made with the first of
	// them (most sync executions have none).
	var events chan outside
	eventsMade := func() {
		if events == nil {
			events = make(chan outside, 16)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	var loops sync.WaitGroup
	defer func() {
		cancel()
		loops.Wait()
		// Tasks still out when the run ends are no one's work any more.
		work.mu.Lock()
		out := slices.Collect(maps.Keys(work.tasks))
		work.mu.Unlock()
		for _, k := range out {
			e.work.taskEnded(k.arn, k.id)
		}
	}()
	var timers *timerQueue
	tasks := map[string]*interp.TaskRequest{} // for the observer
	startTimers := func() {
		var jump func(time.Time) bool
		switch {
		case e.cfg.TimeSkip:
			clk = newClock(e.clock.now, 1)
			jump = func(to time.Time) bool { return work.jump(clk, to, true) }
		case e.cfg.WaitTimeScale == 0:
			clk = newClock(e.clock.now, 0)
			jump = func(to time.Time) bool { return work.jump(clk, to, false) }
		}
		timers = newTimerQueue(clk, jump)
		work.idle = timers.poke
		loops.Add(1)
		go func() {
			defer loops.Done()
			timers.run(runCtx, func(_, id string, done func()) {
				select {
				case events <- outside{interp.Event{Kind: interp.TimerFired, ID: id}, done}:
				case <-runCtx.Done():
					done()
				}
			})
		}()
	}
	handle := func(cmds []interp.Command) {
		for _, c := range cmds {
			switch c.Kind {
			case interp.StartTimer:
				eventsMade()
				if timers == nil {
					startTimers()
				}
				timers.add(runID, c.ID, c.At)
			case interp.CancelTimer:
				if timers != nil {
					timers.remove(runID, c.ID)
				}
			case interp.RunTask:
				eventsMade()
				id := c.ID
				tasks[id] = c.Task
				work.taskRunning(runID, id)
				e.work.taskRunning(runID, id)
				tk := &task.Task{ExecutionArn: runID, ID: id, Request: c.Task, StateMachineArn: row.StateMachineArn, TestCase: row.TestCase}
				e.cfg.Tasks.Run(ctx, tk, func(r task.Result) {
					if r.Recorded != nil {
						r.Recorded(nil) // nothing outlives the run to record it in
					}
					if r.Waiting || r.Submitted {
						return // EXPRESS machines have no .waitForTaskToken tasks
					}
					ev := interp.Event{Kind: interp.TaskSucceeded, ID: id, Output: r.Output}
					if r.Failure != nil {
						ev = interp.Event{Kind: interp.TaskFailed, ID: id, Error: r.Failure.Name, Cause: r.Failure.Cause}
					}
					go func() {
						select {
						case events <- outside{ev: ev}:
						case <-runCtx.Done():
						}
					}()
				})
			case interp.CancelTask:
				work.taskEnded(runID, c.ID)
				e.work.taskEnded(runID, c.ID)
				e.cfg.Tasks.Cancel(runID, c.ID)
			}
		}
	}
	// A request that ends stops the execution, in the middle of an
	// evaluation if need be; the engine stopping abandons it.
	timedOut := &interp.Interruption{Stop: true, Error: "States.Timeout", Cause: "The request ended before the execution did."}
	x.Opts.Interrupt = func() *interp.Interruption {
		switch {
		case e.halting.Load():
			return abandon
		case ctx.Err() != nil:
			return timedOut
		}
		return nil
	}
	// step applies one outside event (nil: the start). An abandoned step
	// (the engine stopping) ends the run.
	step := func(ev *interp.Event) error {
		e.work.stepBegan()
		work.stepBegan()
		defer e.work.stepEnded()
		defer work.stepEnded()
		at := now()
		var cmds []interp.Command
		var events []*history.Event
		var err error
		previous := x.Status
		if ev == nil {
			previous = ""
			events, cmds, err = x.Start(at)
		} else {
			events, cmds, err = x.Step(*ev, at)
		}
		if err != nil {
			return err
		}
		if e.cfg.Observer != nil {
			seen := *row
			if x.Status != history.StatusRunning {
				setEnd(&seen, x, at)
			}
			var task *interp.TaskRequest
			if ev != nil {
				task = tasks[ev.ID]
			}
			e.cfg.Observer.StepCommitted(&CommittedStep{Execution: &seen, Previous: previous, Express: true, Events: events, Task: task})
		}
		if ev != nil && (ev.Kind == interp.TaskSucceeded || ev.Kind == interp.TaskFailed) {
			delete(tasks, ev.ID)
			work.taskEnded(runID, ev.ID)
			e.work.taskEnded(runID, ev.ID)
		}
		handle(cmds)
		return nil
	}
	if err := step(nil); err != nil {
		return nil, errStopped
	}
	for x.Status == history.StatusRunning {
		var err error
		select {
		case <-ctx.Done():
			err = step(&interp.Event{Kind: interp.Stop, Error: timedOut.Error, Cause: timedOut.Cause})
		case o := <-events:
			err = step(&o.ev)
			if o.done != nil {
				o.done()
			}
		}
		if errors.Is(err, interp.ErrInterrupted) {
			return nil, errStopped
		}
	}
	stop := now()
	setEnd(row, x, stop)
	// Its observers were told of its events, and nothing else reads them:
	// their blocks go to the next executions.
	x.Release()
	billed := history.BilledDuration(stop.Sub(began).Milliseconds())
	return &start.SyncResult{Execution: row, BilledDurationMillis: billed, BilledMemoryMB: 64}, nil
}
