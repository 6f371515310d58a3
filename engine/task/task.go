// Package task holds what the engine and its task runners share: the
// work of a Task state (Task), how it ended (Result), and the runners'
// seam (Runner, and KindRunner for the runners the engine's chooser
// picks from). They are named only here: the engine, a runner in a
// package of its own (engine/nested, below the engine), the registry of
// runners above it (integration) and whatever builds a task import this
// package.
package task

import (
	"context"
	"errors"
	"time"

	"stepwise/failure"
	"stepwise/interp"
)

// Task is the work of one Task state.
type Task struct {
	ExecutionArn string
	ID           string
	Request      *interp.TaskRequest
	// StateMachineArn is the execution's state machine, and TestCase the
	// mock test case the execution runs with ("" for a real run: see
	// start.Params.TestCase).
	StateMachineArn string
	TestCase        string
	// ExecutionStart is when the execution started (to the millisecond,
	// as stored): with ExecutionArn and ID it names the task apart from
	// those of an earlier execution of the same name.
	ExecutionStart time.Time
	// Started, when set, is called by a runner as it sends the task's
	// request (at most once, before done): the engine records the task
	// started then (TaskStarted, LambdaFunctionStarted), as AWS does,
	// not when its result comes, so the history times the call. A runner
	// that never calls it has the task started with its result.
	Started func()
	// Submitted is the service's answer the task's TaskSubmitted recorded
	// before the task was dispatched again (after a restart, or on the
	// node that took its execution over); nil when none was. For a .sync
	// task it names the job started already: the runner follows that job
	// instead of starting another.
	Submitted any
	// Resumed says the task is dispatched again after a restart, or on
	// the node that took its execution over: its request may have been
	// sent before, its answer not recorded. A runner that starts a job
	// looks for the job started then before it starts one.
	Resumed bool
	// TraceParent is the W3C traceparent of the task's span when its
	// execution is traced ("" otherwise): the runner passes it on to
	// what it calls.
	TraceParent string
}

// Result is how a task ended: an output, or a failure.
type Result struct {
	Output  any
	Failure *failure.Failure
	// Submitted says the service accepted the request of a task whose
	// result comes later (a .waitForTaskToken task: through its token):
	// Output is the service's answer, written in TaskSubmitted, and the
	// task goes on waiting.
	Submitted bool
	// Waiting says a .waitForTaskToken task's request was made (or, with
	// no service to call, will not be) and its submission, if any, is
	// recorded: the task waits for its token, no event is written.
	Waiting bool
	// Recorded, when set on a Submitted result, is called once the step
	// that records it (TaskSubmitted) committed, or with the error that
	// kept it from committing: a runner that started a job waits for it
	// before following the job, so that a restart finds the job's id
	// (Task.Submitted) and never starts a second one.
	Recorded func(error)
}

// Runner carries out tasks. Run must not block: it starts the work and
// later calls done with the result, once, after at most one submitted
// result. For a .waitForTaskToken task, done must be called once the
// request is made (Submitted), has failed, or is not made at all
// (Waiting): until then, SendTask* calls with the task's token wait, so
// that a worker's answer is never recorded before the request it answers.
// A task may be run again after a restart when its result was not
// recorded. Cancel says the result is no longer wanted.
type Runner interface {
	Run(ctx context.Context, t *Task, done func(Result))
	Cancel(executionArn, taskID string)
}

// Mocks answers the tasks of executions that run a mock test case
// (Task.TestCase) instead of calling anything.
type Mocks interface {
	// Mocked returns the task's mocked result; ok is false when the test
	// case mocks nothing for the task's state, which then runs for real.
	Mocked(t *Task) (r Result, ok bool)
}

// NoIntegrations fails every task: no service integration is configured.
type NoIntegrations struct{}

// Run fails the task at once.
func (NoIntegrations) Run(_ context.Context, t *Task, done func(Result)) {
	done(Result{Failure: failure.Newf(failure.TaskFailed,
		"No integration is configured for the resource '%s'.", t.Request.Resource)})
}

// Cancel does nothing.
func (NoIntegrations) Cancel(string, string) {}

// A Killer stops a task's work itself when an operator kills it: a
// Cancel may leave work already handed over to run to its end (a local
// function's invoke, as Lambda's), a kill does not. A runner that is
// not a Killer is cancelled instead.
type Killer interface {
	Kill(executionArn, taskID string)
}

// ItemStreamer is a Runner that can hand over an ItemReader's items
// as it reads them (Task.Request.Reader set), in order, a batch at a
// time, instead of answering with all of them: a map run over a large
// object then never holds it. A failure is returned as the
// *failure.Failure the reader fails with (States.ItemReaderFailed,
// or the S3 error).
type ItemStreamer interface {
	StreamItems(ctx context.Context, t *Task, emit func(items []any) error) error
}

// KindRunner carries out one kind of task: the engine's chooser gives a task
// to the first runner that takes it. Takes must not block nor change anything.
type KindRunner interface {
	Runner
	Takes(t *Task) bool
}

// ResultWriter writes a map run's results (Task.Request.Write set): the
// configured runner implements it to take the result write.
type ResultWriter interface {
	WriteResults(ctx context.Context, t *Task, done func(Result))
}

// ItemReader reads a Map state's ItemReader (Task.Request.Reader set) and
// answers with all its items: the configured runner implements it to take
// the item read.
type ItemReader interface {
	ReadItems(ctx context.Context, t *Task, done func(Result))
}

// ErrStopped is work offered to an engine that is stopping, or a step it
// abandoned because it is: the engine returns it to the layer above, and
// what a runner asks of the engine fails with it then.
var ErrStopped = errors.New("the engine is stopping")
