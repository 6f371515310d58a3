package store

import (
	"context"
	"time"
)

// OutboxEvent is a notice written with the step it tells of, for
// delivery to the outside after the step is committed.
type OutboxEvent struct {
	// ID is assigned by the store when the notice is written: the
	// notices of one StepWrite share an ID, a later StepWrite's is
	// higher, and the IDs of commits that follow each other follow each
	// other (ID+1) unless a write failed in between.
	ID        int64
	CreatedAt time.Time
	Body      []byte
}

// OutboxStore holds notices until every destination has taken them. Each
// destination keeps a cursor: the ID of the last notices it took (all of
// those with that ID).
type OutboxStore interface {
	// OutboxList returns the notices with IDs above afterID, in ID order
	// (and in their steps' order within an ID), all the notices of an ID
	// or none, until it has at least limit notices or there are no more.
	OutboxList(ctx context.Context, afterID int64, limit int) ([]*OutboxEvent, error)
	// OutboxDelete removes the notices of up to limit (> 0) of the IDs up
	// to throughID, oldest first, and says how many IDs it removed.
	OutboxDelete(ctx context.Context, throughID int64, limit int) (int, error)
	// OutboxCursor returns a destination's cursor: 0 when it has none.
	OutboxCursor(ctx context.Context, destination string) (int64, error)
	// OutboxWrite writes notices that no step tells of (a job running
	// late), all with one new ID, as StepWrite writes a step's; it sets
	// their IDs.
	OutboxWrite(ctx context.Context, notices []*OutboxEvent) error
	// OutboxCursorSet moves a destination's cursor to id.
	OutboxCursorSet(ctx context.Context, destination string, id int64) error
}
