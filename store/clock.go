package store

import (
	"context"
	"time"
)

// Clock is the engine's execution time as the store keeps it while it is
// virtual (a scaled or skipping clock): a restart resumes it from there,
// and the nodes of a cluster share it.
type Clock struct {
	// Virtual at Real is the clock's anchor: it runs at its rate from
	// there (Real is wall-clock time).
	Virtual, Real time.Time
	// Ceiling is the furthest any node may read the clock: a clock that
	// starts again from it never goes back.
	Ceiling time.Time
	// Renewed is the wall-clock time a running node last raised the
	// ceiling; zero once the clock stopped.
	Renewed time.Time
}

// ClockStartParams starts the clock, or joins the one running.
type ClockStartParams struct {
	// Real is now, the wall-clock time of a new anchor.
	Real time.Time
	// Floor is the least virtual time of a new anchor, which is also at
	// least the stored ceiling.
	Floor time.Time
	// RunningSince: a clock renewed at or after it is running and is
	// kept (the nodes of a cluster share it). Zero never keeps it.
	RunningSince time.Time
}

// ClockAdvanceParams raises the clock's ceiling.
type ClockAdvanceParams struct {
	Ceiling time.Time // the ceiling becomes at least this
	Renewed time.Time // wall-clock time now
}

// ClockStore keeps the engine's virtual clock (one row).
type ClockStore interface {
	// ClockStart returns the clock to run: the stored one when it was
	// renewed at or after p.RunningSince, otherwise a new anchor at
	// (max(ceiling, p.Floor), p.Real), stored and renewed at p.Real.
	ClockStart(ctx context.Context, p *ClockStartParams) (*Clock, error)
	// ClockAdvance raises the ceiling to at least p.Ceiling and renews
	// the clock at p.Renewed.
	ClockAdvance(ctx context.Context, p *ClockAdvanceParams) error
	// ClockStop stores where the clock stopped: its ceiling becomes at
	// (lower or higher), and it is no longer renewed. A single node calls
	// it when it stops, so that the next start resumes exactly there.
	ClockStop(ctx context.Context, at time.Time) error
}

// ScheduleStore stores schedules and schedule groups.
