package store

import (
	"context"
	"time"
)

// ScheduleGroup is an EventBridge Scheduler schedule group. The group
// "default" is created by the scheduler on first use like any other.
type ScheduleGroup struct {
	Name        string
	Arn         string // its tags are the TagStore's under this ARN
	ClientToken string // of the CreateScheduleGroup that made it
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Schedule is an EventBridge Scheduler schedule: its group and name, its
// state, and the rest as the scheduler's JSON (Body).
type Schedule struct {
	GroupName   string
	Name        string
	State       string // ENABLED or DISABLED
	Body        string // the schedule's settings, JSON text
	ClientToken string // of the CreateSchedule that made it
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// LastFired is the last slot that was fired (or dropped), nil before
	// the first: ScheduleUpdate leaves it as it is, ScheduleFired moves it.
	LastFired *time.Time
	// Attempts are the failed attempts at the slot after LastFired, and
	// AttemptedAt when the last was made (nil before one): written by
	// ScheduleAttempted, cleared by ScheduleFired and ScheduleUpdate.
	Attempts    int
	AttemptedAt *time.Time
}

// ScheduleListParams pages through schedules by (GroupName, Name).
type ScheduleListParams struct {
	GroupName  string // "" for all groups
	NamePrefix string
	State      string // "" for both
	// After is the cursor: the group and name of the last row seen.
	AfterGroup string
	AfterName  string
	Limit      int
}

type ScheduleStore interface {
	// ScheduleGroupInsert fails with ErrAlreadyExists when the name is
	// taken.
	ScheduleGroupInsert(ctx context.Context, g *ScheduleGroup) error
	// ScheduleGroupGet returns a group; ErrNotFound when there is none.
	ScheduleGroupGet(ctx context.Context, name string) (*ScheduleGroup, error)
	// ScheduleGroupList lists groups by name, those starting with prefix
	// and after after, up to limit.
	ScheduleGroupList(ctx context.Context, prefix, after string, limit int) ([]*ScheduleGroup, error)
	// ScheduleGroupDelete deletes a group with its schedules and its
	// tags; ErrNotFound when there is none.
	ScheduleGroupDelete(ctx context.Context, name string) error
	// ScheduleInsert fails with ErrAlreadyExists when the group has a
	// schedule of that name.
	ScheduleInsert(ctx context.Context, s *Schedule) error
	// ScheduleGet returns a schedule; ErrNotFound when there is none.
	ScheduleGet(ctx context.Context, group, name string) (*Schedule, error)
	// ScheduleUpdate writes a schedule's State, Body and UpdatedAt, and
	// clears its Attempts (a changed schedule tries afresh); ErrNotFound
	// when there is none.
	ScheduleUpdate(ctx context.Context, s *Schedule) error
	// ScheduleFired sets a schedule's LastFired and clears its Attempts;
	// ErrNotFound when there is none.
	ScheduleFired(ctx context.Context, group, name string, slot time.Time) error
	// ScheduleAttempted records the failed attempts at the slot after a
	// schedule's LastFired, the last at at; ErrNotFound when there is
	// none.
	ScheduleAttempted(ctx context.Context, group, name string, attempts int, at time.Time) error
	// ScheduleDelete deletes a schedule; ErrNotFound when there is none.
	ScheduleDelete(ctx context.Context, group, name string) error
	// ScheduleList pages through schedules by (GroupName, Name).
	ScheduleList(ctx context.Context, p *ScheduleListParams) ([]*Schedule, error)
}
