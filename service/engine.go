package service

import (
	"context"

	"stepwise/engine"
	"stepwise/engine/activity"
	"stepwise/engine/start"
	"stepwise/store"
)

// Engine runs executions. The service validates requests and leaves the
// running to it; package engine implements it, and declares the types it
// takes and returns.
type Engine interface {
	// StartExecution creates the execution and commits its first step in
	// one transaction. It fails with an error wrapping store.ErrAlreadyExists
	// when the execution ARN is taken.
	StartExecution(ctx context.Context, p *start.Params) (*store.Execution, error)
	// StartSyncExecution runs an EXPRESS execution in memory to its end (or
	// until ctx ends) and returns the result; nothing is stored.
	StartSyncExecution(ctx context.Context, p *start.Params) (*start.SyncResult, error)
	// StopExecution aborts a RUNNING execution with an optional error and
	// cause and returns its row (already ended executions are returned as
	// they are).
	StopExecution(ctx context.Context, arn, errName, cause string) (*store.Execution, error)
	// RedriveExecution restarts a FAILED, TIMED_OUT or ABORTED Standard
	// execution from where it failed.
	RedriveExecution(ctx context.Context, arn string) (*store.Execution, error)
	// GetActivityTask hands the oldest task of an activity to one worker,
	// waiting up to 60 s (or until ctx ends); nil when none came.
	GetActivityTask(ctx context.Context, activityArn, workerName string) (*activity.Handout, error)
	// SendTaskSuccess, SendTaskFailure and SendTaskHeartbeat report on the
	// task of a token: InvalidToken for a token the engine did not make,
	// TaskTimedOut for a task that is over, InvalidOutput for output that
	// is not JSON.
	SendTaskSuccess(ctx context.Context, token, output string) error
	SendTaskFailure(ctx context.Context, token, errName, cause string) error
	SendTaskHeartbeat(ctx context.Context, token string) error
	// ActivityStatus reports an activity's waiting tasks and the workers
	// that polled it lately.
	ActivityStatus(activityArn string) activity.Status
	// ForgetActivity says an activity is being deleted: a Task state
	// scheduled on it from now on fails with ActivityDoesNotExist.
	ForgetActivity(activityArn string)
	// UpdateMapRun changes a map run's maximum concurrency and tolerated
	// failures (nil: unchanged); a run in progress applies them at once.
	UpdateMapRun(ctx context.Context, arn string, maxConcurrency *int, percent *float64, count *int64) error
}

var _ Engine = (*engine.Engine)(nil)
