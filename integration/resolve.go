package integration

import (
	"context"
	"strings"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/interp"
)

// Resolve carries out a task in-process and waits for its answer: the
// registry as the interp.Resolver of a Driver, so that `stepwise run`'s
// tasks (an ItemReader's read, a ResultWriter's write, a call) are the
// integrations' as on the server. A task whose answer comes later (a
// .waitForTaskToken task) is not resolved: nobody in-process sends its
// token.
func (r *Registry) Resolve(req *interp.TaskRequest) (any, *failure.Failure) {
	ch := make(chan task.Result, 2) // a submitted result, then the end
	t := &task.Task{ExecutionArn: "in-process", ID: req.StateName, Request: req}
	send := func(res task.Result) { ch <- res }
	switch {
	case req.Write != nil:
		r.WriteResults(context.Background(), t, send)
	case req.Reader != nil:
		r.ReadItems(context.Background(), t, send)
	default:
		r.Run(context.Background(), t, send)
	}
	res := <-ch
	if res.Submitted && !strings.HasSuffix(req.Resource, string(WaitForTaskToken)) {
		// A job started (.sync): it is followed to its end.
		if res.Recorded != nil {
			res.Recorded(nil)
		}
		res = <-ch
	}
	if res.Failure != nil {
		return nil, res.Failure
	}
	if res.Submitted || res.Waiting {
		return nil, failure.Newf(failure.TaskFailed,
			"The task of resource '%s' waits for a token, which nothing sends in-process.", req.Resource)
	}
	return res.Output, nil
}
