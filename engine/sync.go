package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"stepwise/interp"
	"stepwise/service"
	"stepwise/stepwisetype"
)

// syncSeq numbers in-memory executions so their task ids are unique in the
// task runner.
var syncSeq atomic.Int64

// StartSyncExecution runs an execution in memory to its end: nothing is
// stored, as for AWS's synchronous Express workflows.
func (e *Engine) StartSyncExecution(ctx context.Context, p *service.StartParams) (*service.SyncResult, error) {
	if err := e.beginStep(); err != nil {
		return nil, err
	}
	defer e.steps.Done()
	start := e.now()
	x, row, err := e.newExecution(p, start)
	if err != nil {
		return nil, err
	}
	runID := fmt.Sprintf("sync-%d", syncSeq.Add(1))

	type outside struct{ ev interp.Event }
	events := make(chan outside, 16)
	timers := map[string]*time.Timer{}
	defer func() {
		for _, t := range timers {
			t.Stop()
		}
	}()
	handle := func(now time.Time, cmds []interp.Command) {
		for _, c := range cmds {
			switch c.Kind {
			case interp.StartTimer:
				id := c.ID
				d := time.Duration(float64(c.At.Sub(now)) * e.cfg.WaitTimeScale)
				timers[id] = time.AfterFunc(max(d, 0), func() {
					select {
					case events <- outside{interp.Event{Kind: interp.TimerFired, ID: id}}:
					case <-ctx.Done():
					}
				})
			case interp.CancelTimer:
				if t := timers[c.ID]; t != nil {
					t.Stop()
					delete(timers, c.ID)
				}
			case interp.RunTask:
				id := c.ID
				e.cfg.Tasks.Run(ctx, &Task{ExecutionArn: runID, ID: id, Request: c.Task}, func(r TaskResult) {
					if r.Waiting || r.Submitted {
						return // EXPRESS machines have no .waitForTaskToken tasks
					}
					ev := interp.Event{Kind: interp.TaskSucceeded, ID: id, Output: r.Output}
					if r.Failure != nil {
						ev = interp.Event{Kind: interp.TaskFailed, ID: id, Error: r.Failure.Name, Cause: r.Failure.Cause}
					}
					go func() {
						select {
						case events <- outside{ev}:
						case <-ctx.Done():
						}
					}()
				})
			case interp.CancelTask:
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
	_, cmds, err := x.Start(start)
	if err != nil {
		return nil, errStopped
	}
	handle(start, cmds)
	for x.Status == stepwisetype.StatusRunning {
		select {
		case <-ctx.Done():
			now := e.now()
			_, cmds, err := x.Step(interp.Event{Kind: interp.Stop, Error: timedOut.Error, Cause: timedOut.Cause}, now)
			if err != nil {
				return nil, errStopped
			}
			handle(now, cmds)
		case o := <-events:
			now := e.now()
			_, cmds, err := x.Step(o.ev, now)
			if errors.Is(err, interp.ErrInterrupted) {
				return nil, errStopped
			}
			if err != nil {
				break
			}
			handle(now, cmds)
		}
	}
	stop := e.now()
	setEnd(row, x, stop)
	billed := stop.Sub(start).Milliseconds()
	billed = max(100, (billed+99)/100*100)
	return &service.SyncResult{Execution: row, BilledDurationMillis: billed, BilledMemoryMB: 64}, nil
}
