package engine

import (
	"context"
	"sync"
	"time"

	"stepwise/engine/start"
	"stepwise/interp"
)

// Exclusive groups' waiting starts (engine/start/exclusive.go): a start
// of a state machine tagged stepwise:exclusive=<group> while an earlier
// claim of the group holds it starts with its first state held
// (start.PolicyWaiting in its policies). The engine releases that state
// (a Release event by start.WaitBy, through the step loop, so it is
// committed and replayed as an operator's is) once no earlier claim of
// the group holds it: its execution ended (or was stopped), so the
// claims run one at a time in their order.
//
// The waiting executions are known here from their starts on this node
// and from a look through the RUNNING executions at start and every
// waitRescan (after a restart, and for those taken over from a node
// that died); each is looked at every waitTick, and at once when an
// execution of this node ends. In a cluster each node releases only
// the executions it runs.

const (
	waitTick   = time.Second
	waitRescan = 30 * time.Second
)

// waiters are the executions of this node that wait their exclusive
// group's turn: the state each holds.
type waiters struct {
	mu   sync.Mutex
	arns map[string]string
	kick chan struct{}
}

func (w *waiters) add(arn, state string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.arns == nil {
		w.arns = map[string]string{}
	}
	w.arns[arn] = state
}

// nudge has the loop look at the waiting executions now.
func (w *waiters) nudge() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// waitingStarted notes an execution started waiting for its group.
func (e *Engine) waitingStarted(arn string, ps interp.Policies) {
	if st := start.WaitingState(ps); st != "" {
		e.waiters.add(arn, st)
	}
}

// waitLoop releases the waiting executions whose turn came.
func (e *Engine) waitLoop(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-e.resumed:
	}
	tick := time.NewTicker(waitTick)
	defer tick.Stop()
	var scanned time.Time
	for {
		if time.Since(scanned) >= waitRescan {
			scanned = time.Now()
			e.scanWaiting(ctx)
		}
		e.releaseWaiting(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-e.waiters.kick:
		}
	}
}

// scanWaiting looks through the RUNNING executions for those that wait.
func (e *Engine) scanWaiting(ctx context.Context) {
	after := ""
	for {
		rows, err := e.store.Executor().ExecutionListRunning(ctx, after, 500)
		if err != nil {
			if ctx.Err() == nil {
				e.log.ErrorContext(ctx, "engine: list the executions waiting for their exclusive group", "error", err)
			}
			return
		}
		for _, row := range rows {
			if row.Policies == "" {
				continue
			}
			if ps, err := interp.ParsePolicies(row.Policies); err == nil {
				e.waitingStarted(row.Arn, ps)
			}
		}
		if len(rows) < 500 {
			return
		}
		after = rows[len(rows)-1].Arn
	}
}

// releaseWaiting releases each waiting execution of this node whose
// group no earlier claim holds.
func (e *Engine) releaseWaiting(ctx context.Context) {
	e.waiters.mu.Lock()
	arns := make(map[string]string, len(e.waiters.arns))
	for arn, st := range e.waiters.arns {
		arns[arn] = st
	}
	e.waiters.mu.Unlock()
	for arn, st := range arns {
		if ctx.Err() != nil {
			return
		}
		e.mu.Lock()
		here := e.cl == nil || e.live[arn] != nil
		e.mu.Unlock()
		done := !here
		if here {
			row, err := e.store.Executor().ExecutionGet(ctx, arn)
			switch {
			case err != nil:
				done = true
			case row.Status != "RUNNING":
				done = true
			default:
				before, err := e.starter.WaitingFor(ctx, arn)
				if err != nil {
					e.log.ErrorContext(ctx, "engine: read an exclusive group", "execution", arn, "error", err)
					continue
				}
				if before == "" {
					err := e.Release(ctx, arn, st, start.WaitBy)
					if err != nil && ctx.Err() == nil {
						e.log.ErrorContext(ctx, "engine: release an execution waiting for its exclusive group", "execution", arn, "error", err)
						continue
					}
					done = err == nil
				}
			}
		}
		if done {
			e.waiters.mu.Lock()
			delete(e.waiters.arns, arn)
			e.waiters.mu.Unlock()
		}
	}
}
