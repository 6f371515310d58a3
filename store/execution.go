package store

import (
	"context"
	"time"

	"stepwise/history"
)

// Execution is an execution's row.
type Execution struct {
	Arn             string
	StateMachineArn string
	RevisionID      string
	Name            string
	Status          history.ExecutionStatus
	Input           string  // as the client sent it
	Output          *string // SUCCEEDED
	Error           *string
	Cause           *string
	StartDate       time.Time
	StopDate        *time.Time
	RoleArn         string
	TraceHeader     string
	RedriveCount    int
	RedriveDate     *time.Time
	// Version grows by one on every update of the row; updates name the
	// version they read. Steps that leave the row as it is do not change
	// it (see Step).
	Version int64
	// LastEventID is the id of the last history event when the row was
	// last written: exact for an execution that has ended, and possibly
	// behind the history of a running one (see Step).
	LastEventID int64
	// TestCase is the mock test case the execution runs with (started as
	// "<stateMachineArn>#<TestCase>"); "" for a real run.
	TestCase string
	// VersionArn is the version the execution ran, when it was started
	// on a version or an alias; AliasArn the alias it was started on.
	// "" otherwise.
	VersionArn string
	AliasArn   string
	// MapRunArn is the map run that started the execution (a child of a
	// distributed Map); "" otherwise.
	MapRunArn string
	// Policies are the failure policies the execution runs with, as its
	// state machine's tags set them when it started (JSON text, "" for
	// none): see engine.Policies.
	Policies string
}

// ExecutionInsertParams creates an execution.
type ExecutionInsertParams struct {
	Execution *Execution
}

// ExecutionUpdateParams writes an execution's new status after a step. It
// fails with ErrConflict unless the row's version is ExpectedVersion; on
// success the version becomes ExpectedVersion+1.
type ExecutionUpdateParams struct {
	Arn             string
	ExpectedVersion int64
	Status          history.ExecutionStatus
	Output          *string
	Error           *string
	Cause           *string
	StopDate        *time.Time
	LastEventID     int64
	RedriveCount    int
	RedriveDate     *time.Time
}

// ExecutionListParams pages through executions, newest first.
type ExecutionListParams struct {
	StateMachineArn string
	// VersionArn or AliasArn, when set, keep the executions started on
	// that version (directly or through an alias) or alias.
	VersionArn string
	AliasArn   string
	// MapRunArn, when set, keeps the children of that map run (their
	// StateMachineArn is then not looked at). Without it, the list holds
	// no map run's children: they are listed by their map run only.
	MapRunArn string
	Status    history.ExecutionStatus // "" for all
	// After is the cursor: the StartDate and Arn of the last row seen.
	AfterStartDate time.Time
	AfterArn       string
	Limit          int
}

// ExecutionDeleteClosedParams picks the executions ExecutionDeleteClosed
// deletes: ended (SUCCEEDED, FAILED, TIMED_OUT or ABORTED) before
// StoppedBefore, at most Limit (> 0) of them, those that ended first
// first. A running execution is never picked, even one redriven after it
// ended long ago; an execution that could still be redriven is picked by
// its stop date like any other.
type ExecutionDeleteClosedParams struct {
	StoppedBefore time.Time
	Limit         int
}

// ExecutionStore stores executions.
type ExecutionStore interface {
	// ExecutionInsert fails with ErrAlreadyExists when the ARN is taken.
	ExecutionInsert(ctx context.Context, p *ExecutionInsertParams) (*Execution, error)
	ExecutionGet(ctx context.Context, arn string) (*Execution, error)
	ExecutionUpdate(ctx context.Context, p *ExecutionUpdateParams) (*Execution, error)
	ExecutionList(ctx context.Context, p *ExecutionListParams) ([]*Execution, error)
	// ExecutionListRunning pages through RUNNING executions by ARN.
	ExecutionListRunning(ctx context.Context, afterArn string, limit int) ([]*Execution, error)
	// ExecutionDeleteClosed deletes the executions p picks with everything
	// that is theirs (history, replay log, timers, tasks, tags), and the
	// revisions of deleted state machines that no execution left uses,
	// all or none, and says how many executions it deleted. Callers keep
	// Limit small: the deletion holds the store's write lock.
	ExecutionDeleteClosed(ctx context.Context, p *ExecutionDeleteClosedParams) (int, error)
}
