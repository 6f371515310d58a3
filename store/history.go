package store

import (
	"context"
	"time"

	"stepwise/history"
)

// Event is one stored history event.
type Event struct {
	ExecutionArn string
	ID           int64
	Type         history.EventType
	Timestamp    time.Time
	Body         []byte // the event as GetExecutionHistory returns it (JSON)
}

// EventListParams pages through an execution's history.
type EventListParams struct {
	ExecutionArn string
	AfterID      int64 // exclusive: ids > AfterID (or < AfterID when Reverse and AfterID > 0)
	Reverse      bool
	Limit        int
}

// HistoryStore stores history events. Ids are unique per execution.
type HistoryStore interface {
	EventInsert(ctx context.Context, events []*Event) error
	EventList(ctx context.Context, p *EventListParams) ([]*Event, error)
}

// Input is one entry of an execution's replay log: an outside event the
// interpreter applied, with the time it applied it at. Replaying the log
// from the start rebuilds the execution's state.
type Input struct {
	ExecutionArn string
	Seq          int64 // 1, 2, 3, ... per execution
	At           time.Time
	Body         []byte // the event, JSON
}

// InputStore stores replay logs.
type InputStore interface {
	InputInsert(ctx context.Context, inputs []*Input) error
	InputList(ctx context.Context, executionArn string) ([]*Input, error)
}
