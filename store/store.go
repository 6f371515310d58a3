// Package store is the seam between the engine and its database. A driver
// (sqlitestore, pgstore) implements Driver; the engine and the service use
// only these interfaces.
//
// # Shape
//
// Executor is composed of one small interface per aggregate (state
// machines, executions, history, the replay log, timers, tasks, tags).
// ExecutorTx embeds Executor and adds Commit and Rollback: every change the
// engine makes for one step of one or many executions is one transaction.
// Methods take (ctx, *XxxParams) and return rows from this package. Each
// aggregate's rows and interface have a file of their own (execution.go,
// version.go, ...); this one holds the driver, the executor and the
// errors.
//
// # Errors
//
// Drivers convert their errors at the edge: a missing row is ErrNotFound, a
// unique-key clash ErrAlreadyExists, a stale version ErrConflict, a full
// disk or read-only file ErrUnavailable (all wrapped with detail).
//
// # Time
//
// Times are stored with millisecond precision in UTC.
package store

import (
	"context"
	"errors"
)

// Sentinel errors every driver returns (wrapped).
var (
	ErrNotFound      = errors.New("not found")
	ErrAlreadyExists = errors.New("already exists")
	ErrConflict      = errors.New("version conflict")
	ErrUnavailable   = errors.New("store unavailable")
	// ErrFenced: the node's lease ran out or was taken over, or an
	// execution it wrote to is no longer its own.
	ErrFenced = errors.New("fenced: not the owner")
)

// Driver opens executors on one database.
type Driver interface {
	// Executor returns an executor that runs each call on its own.
	Executor() Executor
	// Begin starts a transaction.
	Begin(ctx context.Context) (ExecutorTx, error)
	// Close releases the database.
	Close() error
}

// Executor is every store operation.
type Executor interface {
	StateMachineStore
	ExecutionStore
	HistoryStore
	InputStore
	TimerStore
	TaskStore
	TagStore
	MetaStore
	ActivityStore
	StepStore
	OutboxStore
	NodeStore
	VersionStore
	MapRunStore
	MapItemStore
	ScheduleStore
	ClockStore
	StackStore
	FileTriggerStore
}

// ExecutorTx is an Executor inside a transaction.
type ExecutorTx interface {
	Executor
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}
