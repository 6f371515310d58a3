package integrationtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"stepwise/engine/task"
	"stepwise/integration"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// testStart is the start of the execution the tasks of these helpers
// belong to: a durable execution's, so their starts carry a token.
var testStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Start carries out a task through a registry, with params as its JSON
// Parameters, and returns a channel that gets its result. A .sync job's
// start, recorded first as submitted, is left out: the job's end is the
// result.
func Start(t testing.TB, reg *integration.Registry, resource, params string) <-chan task.Result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	if err != nil {
		t.Fatalf("parameters %s: %v", params, err)
	}
	ch := make(chan task.Result, 1)
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ExecutionStart: testStart, ID: "t1", Request: &interp.TaskRequest{Resource: resource, Parameters: p}},
		func(r task.Result) {
			if r.Recorded != nil {
				r.Recorded(nil)
			}
			if !r.Submitted || !strings.HasSuffix(resource, ".sync") {
				ch <- r
			}
		})
	return ch
}

// Call is Start that waits for the result (30 s at the most).
func Call(t testing.TB, reg *integration.Registry, resource, params string) task.Result {
	t.Helper()
	select {
	case r := <-Start(t, reg, resource, params):
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result")
		return task.Result{}
	}
}

// Member is the member of a value that path names; it fails the test
// when there is none.
func Member(t testing.TB, v any, path ...string) any {
	t.Helper()
	for _, k := range path {
		obj, ok := v.(*jsonvalue.Object)
		if !ok {
			t.Fatalf("%s: not an object: %s", k, jsonvalue.String(v))
		}
		if v, ok = obj.Get(k); !ok {
			t.Fatalf("no member %s in %s", k, jsonvalue.String(obj))
		}
	}
	return v
}

// Resume carries out a .sync task dispatched again after a restart, with
// submitted (the answer recorded for its job's start, as the request's
// answer reads) as Task.Submitted, and waits for its result (30 s at the
// most). The task must follow that job: a start recorded again fails
// the test.
func Resume(t testing.TB, reg *integration.Registry, resource, params string, submitted any) task.Result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	if err != nil {
		t.Fatalf("parameters %s: %v", params, err)
	}
	ch := make(chan task.Result, 2)
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ExecutionStart: testStart, ID: "t1", Request: &interp.TaskRequest{Resource: resource, Parameters: p},
		Submitted: submitted}, func(r task.Result) {
		if r.Recorded != nil {
			r.Recorded(nil)
		}
		ch <- r
	})
	select {
	case r := <-ch:
		if r.Submitted {
			t.Fatalf("the job was started again: %s", jsonvalue.String(r.Output))
		}
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result")
		return task.Result{}
	}
}

// Redispatch carries out a task dispatched again after a restart whose
// earlier dispatch recorded no answer (task.Task.Resumed, no
// Submitted): its request may have been made before, as a task of the
// same execution and id ("arn:x", "t1", as Start's) makes it. It waits
// for the result (30 s at the most) and returns it with the job's start
// as the task records it (nil when none is).
func Redispatch(t testing.TB, reg *integration.Registry, resource, params string) (submitted any, result task.Result) {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	if err != nil {
		t.Fatalf("parameters %s: %v", params, err)
	}
	ch := make(chan task.Result, 2)
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ExecutionStart: testStart, ID: "t1", Request: &interp.TaskRequest{Resource: resource, Parameters: p},
		Resumed: true}, func(r task.Result) {
		if r.Recorded != nil {
			r.Recorded(nil)
		}
		ch <- r
	})
	for {
		select {
		case r := <-ch:
			if r.Submitted && strings.HasSuffix(resource, ".sync") {
				if submitted != nil {
					t.Fatalf("the job's start was recorded twice: %s", jsonvalue.String(r.Output))
				}
				submitted = r.Output
				continue
			}
			return submitted, r
		case <-time.After(30 * time.Second):
			t.Fatal("no result")
			return nil, task.Result{}
		}
	}
}
