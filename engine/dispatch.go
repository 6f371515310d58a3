package engine

import (
	"context"

	"stepwise/engine/maprun"
	"stepwise/engine/task"
)

// # Dispatch
//
// A task is handed to a runner chosen in one place, the chooser: the
// first runner, in this order, that takes the task carries it out.
//
//	mocked ─► map run ─► item spool ─► result write ─► item read ─► activity ─► startExecution ─► calls
//
//	mocked          a mock test case answers it (Config.Mocks): first, so a mocked state calls nothing
//	map run         a distributed Map's map run (Task.Request.MapRun): its children as executions (package engine/maprun)
//	item spool      an ItemReader whose items go to the store as they are read (the runner is an ItemStreamer; package engine/maprun)
//	result write    a ResultWriter's writing of a map run's results (Task.Request.Write; the runner is a ResultWriter)
//	item read       an ItemReader answered with all its items (the runner is an ItemReader)
//	activity        a worker's task: queued until GetActivityTask hands it out, completed through SendTask* (package activity)
//	startExecution  states:startExecution: a child execution on this engine (package nested)
//	calls           every other resource: the configured runner (Config.Tasks), which calls the service
//
// Cancel goes to every runner: each drops what it holds of the task.

// chooser is the one place a task's runner is chosen (see Dispatch).
type chooser struct {
	runners []task.KindRunner
}

// newChooser lists the engine's runners, in order, with calls, the
// configured runner, last.
func newChooser(e *Engine, calls task.Runner) *chooser {
	rs := []task.KindRunner{mockRunner{e}, e.mapRuns}
	if st, ok := calls.(task.ItemStreamer); ok {
		rs = append(rs, maprun.Spool{Store: e.store, Items: st})
	}
	if w, ok := calls.(task.ResultWriter); ok {
		rs = append(rs, writeRunner{w: w})
	}
	if r, ok := calls.(task.ItemReader); ok {
		rs = append(rs, readRunner{r: r})
	}
	rs = append(rs, e.activity, e.nested, callRunner{calls})
	return &chooser{runners: rs}
}

// Run hands the task to the first runner that takes it.
func (c *chooser) Run(ctx context.Context, t *task.Task, done func(task.Result)) {
	for _, r := range c.runners {
		if r.Takes(t) {
			r.Run(ctx, t, done)
			return
		}
	}
}

// takes reports whether r is the runner Run hands t to.
func (c *chooser) takes(r task.KindRunner, t *task.Task) bool {
	for _, x := range c.runners {
		if x.Takes(t) {
			return x == r
		}
	}
	return false
}

// Cancel tells every runner the task's result is no longer wanted.
func (c *chooser) Cancel(executionArn, taskID string) {
	for _, r := range c.runners {
		r.Cancel(executionArn, taskID)
	}
}

// Kill tells every runner to stop the task's work (task.Killer), or
// cancels it in those that cannot.
func (c *chooser) Kill(executionArn, taskID string) {
	for _, r := range c.runners {
		if k, ok := r.(task.Killer); ok {
			k.Kill(executionArn, taskID)
			continue
		}
		r.Cancel(executionArn, taskID)
	}
}

// noCancel is the Cancel of a runner that holds nothing to drop.
type noCancel struct{}

func (noCancel) Cancel(string, string) {}

// mockRunner answers the tasks a mock test case mocks.
type mockRunner struct{ e *Engine }

func (r mockRunner) Takes(t *task.Task) bool {
	if t.TestCase == "" || r.e.cfg.Mocks == nil || t.Request.MapRun != nil || t.Request.Write != nil || t.Request.Reader != nil {
		return false
	}
	_, ok := r.e.cfg.Mocks.Mocked(t)
	return ok
}

func (r mockRunner) Run(ctx context.Context, t *task.Task, done func(task.Result)) {
	res, _ := r.e.cfg.Mocks.Mocked(t)
	go r.e.mocked(ctx, t, res, done)
}

func (mockRunner) Cancel(string, string) {}

// writeRunner writes a map run's results.
type writeRunner struct {
	w task.ResultWriter
	noCancel
}

func (writeRunner) Takes(t *task.Task) bool { return t.Request.Write != nil }

func (r writeRunner) Run(ctx context.Context, t *task.Task, done func(task.Result)) {
	r.w.WriteResults(ctx, t, done)
}

// readRunner reads an ItemReader's items at once.
type readRunner struct {
	r task.ItemReader
	noCancel
}

func (readRunner) Takes(t *task.Task) bool { return t.Request.Reader != nil }

func (r readRunner) Run(ctx context.Context, t *task.Task, done func(task.Result)) {
	r.r.ReadItems(ctx, t, done)
}

// callRunner is the configured runner: it takes every task left.
type callRunner struct{ task.Runner }

func (callRunner) Takes(*task.Task) bool { return true }

// Kill stops the task's work when the calls' runner can (task.Killer),
// and cancels it otherwise.
func (r callRunner) Kill(executionArn, taskID string) {
	if k, ok := r.Runner.(task.Killer); ok {
		k.Kill(executionArn, taskID)
		return
	}
	r.Runner.Cancel(executionArn, taskID)
}
