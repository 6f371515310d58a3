package store

import (
	"context"
	"time"
)

// MapRun is the run of a distributed Map state: the child executions it
// starts (ExecutionListParams.MapRunArn) and their settings and progress.
type MapRun struct {
	Arn             string
	ExecutionArn    string // the execution whose Map state started it
	StateMachineArn string // the children's: <state machine ARN>/<label>
	Status          string // RUNNING, SUCCEEDED, FAILED or ABORTED
	StartDate       time.Time
	StopDate        *time.Time
	MaxConcurrency  int
	// ToleratedFailureCount and ToleratedFailurePercentage as in effect.
	ToleratedFailureCount      int64
	ToleratedFailurePercentage float64
	// ItemCounts and ExecutionCounts are JSON objects, as DescribeMapRun
	// returns them (pending, running, succeeded, ...).
	ItemCounts      string
	ExecutionCounts string
	RedriveCount    int
	RedriveDate     *time.Time
}

// MapRunListParams pages through an execution's map runs in the order
// they started.
type MapRunListParams struct {
	ExecutionArn string
	// After is the cursor: the StartDate and Arn of the last row seen.
	AfterStartDate time.Time
	AfterArn       string
	Limit          int
}

// MapItemStore keeps the items an ItemReader read for a map run (its
// spool), so that a map run over a large object reads them a page at a
// time instead of holding them. They go with their map run.
type MapItemStore interface {
	// MapItemsPut stores items first, first+1, ... of a map run, each as
	// JSON text; rows that exist are replaced.
	MapItemsPut(ctx context.Context, mapRunArn string, first int64, items []string) error
	// MapItemsList returns up to limit of a map run's items in order,
	// from index from.
	MapItemsList(ctx context.Context, mapRunArn string, from int64, limit int) ([]string, error)
	// MapItemsDelete deletes a map run's items.
	MapItemsDelete(ctx context.Context, mapRunArn string) error
}

// MapRunStore stores map runs. They go with their execution: the
// deletion of an execution (ExecutionDeleteClosed) deletes its map runs.
type MapRunStore interface {
	// MapRunPut creates a map run, or replaces its row when the ARN exists.
	MapRunPut(ctx context.Context, m *MapRun) error
	// MapRunGet returns a map run; ErrNotFound when there is none.
	MapRunGet(ctx context.Context, arn string) (*MapRun, error)
	// MapRunList lists an execution's map runs by (StartDate, Arn), those
	// after the cursor, up to Limit.
	MapRunList(ctx context.Context, p *MapRunListParams) ([]*MapRun, error)
}
