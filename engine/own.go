package engine

import (
	"context"

	"stepwise/engine/internal/node"
	"stepwise/interp"
	"stepwise/store"
)

// The own stage: a step is taken where its execution is owned. On a
// single node, and for an execution this node owns, that is here, under
// the execution's lock (the step loop takes it). In a cluster, an
// execution another live node owns (load said *ownedElsewhere) takes the
// step on that node: the request is sent to it (stepElsewhere), which
// carries it out with the same stages (carryOut, cluster_requests.go).

// stepElsewhere asks node, the owner of execution arn, to take the step,
// and returns the execution's row after it (read from the store for a
// stop only) and whether the execution took the event. errMoved says the
// owner died or let go: the step loop tries again.
func (e *Engine) stepElsewhere(ctx context.Context, node, arn string, ev interp.Event) (*store.Execution, bool, error) {
	applied, err := e.remoteStep(ctx, node, arn, ev, ctx.Value(sendKey{}) != nil)
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

// remoteStep asks the owner of execution arn to take a step.
func (e *Engine) remoteStep(ctx context.Context, to, arn string, ev interp.Event, send bool) (bool, error) {
	kind := node.ReqStep
	if send {
		kind = node.ReqSend
	}
	a, err := e.ask(ctx, to, &node.Request{Kind: kind, Arn: arn, Event: encodeEntry(&entry{Event: ev})})
	if err != nil {
		return false, err
	}
	return a.Applied, nil
}
