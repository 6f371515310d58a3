package sdkjob

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"

	"stepwise/integration"
	"stepwise/jsonvalue"
)

// The intervals between the calls that check on a job: the first,
// doubling up to the longest, each jittered.
var PollFirst, PollMax = time.Second, 30 * time.Second

// stopTimeout bounds the call that stops the job of a cancelled task.
const stopTimeout = 30 * time.Second

// Poll calls check with back-off until it reports the job ended or
// fails, or ctx ends.
func Poll(ctx context.Context, check func(context.Context) (bool, error)) error {
	delay := PollFirst
	for {
		t := time.NewTimer(delay/2 + rand.N(delay/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if done, err := check(ctx); done || err != nil {
			return err
		}
		delay = min(2*delay, PollMax)
	}
}

// StartContext is the context of the call that starts a job: it runs to
// its end even when the task is cancelled meanwhile, so that a job the
// service started is known, and stopped by a cancelled .sync wait.
func StartContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
}

// StopContext is the context of the call that stops the job of a task
// whose own context ended.
func StopContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
}

// Started reads, into out (a struct of the members wanted), the answer
// recorded for the start of a .sync task's job before the task was
// dispatched again (integration.Request.Submitted): the job to follow
// instead of starting another. False when none was recorded.
func Started(r *integration.Request, out any) bool {
	if r.Submitted == nil || r.Pattern != integration.Sync {
		return false
	}
	return json.Unmarshal(jsonvalue.Marshal(r.Submitted), out) == nil
}
