package engine

import (
	"context"
	"log/slog"
	"time"

	"stepwise/engine/maprunner"
	"stepwise/engine/task"
	"stepwise/store"
)

// A distributed Map's map runs are package runner's task runner; the
// engine is its host: it starts, redrives and stops the children
// durably, keeps the clock's count of the runs' work, and says when a
// child ends (childEnded).
type mapRunHost struct{ e *Engine }

func (h mapRunHost) Context() context.Context { return h.e.ctx }
func (h mapRunHost) Executor() store.Executor { return h.e.store.Executor() }
func (h mapRunHost) Now() time.Time           { return h.e.now() }
func (h mapRunHost) Logger() *slog.Logger     { return h.e.log }
func (h mapRunHost) Tasks() task.Runner       { return h.e.cfg.Tasks }

// Start starts a child on the ItemProcessor the map-run task carries.
func (h mapRunHost) Start(ctx context.Context, c *maprunner.Child) (*store.Execution, error) {
	return h.e.StartExecution(ctx, &StartParams{StateMachine: c.StateMachine, Machine: c.Machine, ExecutionArn: c.Arn, Name: c.Name,
		Input: c.Input, InputValue: c.InputValue, InputParsed: true, TestCase: c.TestCase, MapRunArn: c.MapRunArn, Policies: c.Policies})
}

func (h mapRunHost) Redrive(ctx context.Context, arn string) (*store.Execution, error) {
	return h.e.RedriveExecution(ctx, arn)
}

func (h mapRunHost) Stop(ctx context.Context, arn, cause string) error {
	_, err := h.e.StopExecution(ctx, arn, "", cause)
	return err
}

func (h mapRunHost) Clustered() bool { return h.e.cl != nil }

// Live says whether an execution runs on this node.
func (h mapRunHost) Live(arn string) bool {
	e := h.e
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.live[arn] != nil
}

func (h mapRunHost) WorkBegan() { h.e.work.stepBegan() }
func (h mapRunHost) WorkEnded() { h.e.work.stepEnded() }

func (h mapRunHost) WaitOn(parentArn, taskID, mapRunArn string) bool {
	if !h.e.work.has(parentArn, taskID) {
		return false
	}
	h.e.work.taskOnChild(parentArn, taskID, mapRunArn)
	return true
}

func (h mapRunHost) Ended(mapRunArn string) { h.e.work.childEnded(mapRunArn) }

// UpdateMapRun changes a map run's concurrency and tolerance (nil: as
// they are). A run in progress here applies them at once; one running on
// another node takes them from its row within a second or so.
func (e *Engine) UpdateMapRun(ctx context.Context, arn string, maxConcurrency *int, percent *float64, count *int64) error {
	return e.mapRuns.Update(ctx, arn, maxConcurrency, percent, count)
}
