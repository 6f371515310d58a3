package store

import (
	"context"
	"time"
)

// FileTrigger is a file-arrival trigger (Stepwise's own): its name and
// its settings, the trigger package's JSON (Body).
type FileTrigger struct {
	Name      string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FileArrival is a file a trigger started an execution for: Key names
// the file as it was (its path or object key, size and modification time
// or ETag), so that a file written again is a new arrival.
type FileArrival struct {
	Trigger      string
	Key          string
	ExecutionArn string
	StartedAt    time.Time
}

// FileTriggerStore keeps the file-arrival triggers and the files they
// started executions for.
type FileTriggerStore interface {
	// FileTriggerPut inserts a trigger, or replaces the Body (and
	// UpdatedAt) of the one of that name; CreatedAt stays the first put's.
	FileTriggerPut(ctx context.Context, t *FileTrigger) error
	// FileTriggerGet returns a trigger; ErrNotFound when there is none.
	FileTriggerGet(ctx context.Context, name string) (*FileTrigger, error)
	// FileTriggerList returns every trigger, by name.
	FileTriggerList(ctx context.Context) ([]*FileTrigger, error)
	// FileTriggerDelete deletes a trigger with its arrivals; ErrNotFound
	// when there is none.
	FileTriggerDelete(ctx context.Context, name string) error
	// FileArrivalInsert records an arrival; ErrAlreadyExists when the
	// trigger has one of that key.
	FileArrivalInsert(ctx context.Context, a *FileArrival) error
	// FileArrivalGet returns a trigger's arrival of that key; ErrNotFound
	// when there is none.
	FileArrivalGet(ctx context.Context, trigger, key string) (*FileArrival, error)
	// FileArrivalList returns a trigger's latest arrivals, newest first,
	// at most limit.
	FileArrivalList(ctx context.Context, trigger string, limit int) ([]*FileArrival, error)
}
