package store

import (
	"context"
	"time"
)

// Timer is a pending timer of an execution.
type Timer struct {
	ExecutionArn string
	ID           string
	FireAt       time.Time
}

// TimerStore stores pending timers.
type TimerStore interface {
	TimerInsert(ctx context.Context, timers []*Timer) error
	TimerDelete(ctx context.Context, executionArn string, ids []string) error
	// TimerListDue lists timers with FireAt <= before, earliest first.
	TimerListDue(ctx context.Context, before time.Time, limit int) ([]*Timer, error)
	// TimerNext returns the earliest pending timer, or ErrNotFound.
	TimerNext(ctx context.Context) (*Timer, error)
	TimerListForExecution(ctx context.Context, executionArn string) ([]*Timer, error)
}

// Task is an outgoing piece of work a Task state asked for whose result has
// not been recorded yet.
type Task struct {
	ExecutionArn string
	ID           string
	Resource     string
	Body         []byte // the request, JSON
	CreatedAt    time.Time
}

// TaskStore stores outgoing tasks.
type TaskStore interface {
	TaskInsert(ctx context.Context, tasks []*Task) error
	TaskDelete(ctx context.Context, executionArn string, ids []string) error
	TaskListForExecution(ctx context.Context, executionArn string) ([]*Task, error)
}
