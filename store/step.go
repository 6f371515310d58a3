package store

import "context"

// Step is the store work of one engine step of one execution: its new or
// updated row, its replay-log entry, history events, and the timers and
// tasks it armed or ended.
//
// A step that leaves its execution's row as it was (RUNNING, with nothing
// but the history grown) has neither Insert nor Update: its execution is
// its Input's, and the input's seq, unique within the execution, is what
// keeps two writers from both appending the same step (the second fails
// with ErrAlreadyExists). Most steps are of this kind, and not rewriting
// the execution's row makes them much cheaper to commit.
type Step struct {
	// Insert is the row of a new execution (the step that starts it);
	// Update writes the execution's new status; neither, for a step that
	// changes nothing in the row.
	Insert *Execution
	Update *ExecutionUpdateParams
	Input  *Input // nil for a start, required otherwise
	Events []*Event
	// Timers and tasks of the step's execution, deleted before the new
	// ones are added.
	DeleteTimers []string
	AddTimers    []*Timer
	DeleteTasks  []string
	AddTasks     []*Task
	// Fence, when set, says the node whose step it is: the step's
	// execution must be that node's (an inserted one becomes it), and
	// the node's lease live, or the whole StepWrite fails with
	// ErrFenced.
	Fence *Fence
	// Outbox are notices of the step's status change, delivered after the
	// step is committed (so a crash neither loses nor invents one).
	// StepWrite sets their IDs (OutboxEvent.ID).
	Outbox []*OutboxEvent
	// ExecutionID is the store's id of the row of the step's execution,
	// when the caller knows it (from the execution's last step); 0 when
	// not. A step that leaves the row as it was is written under it
	// without looking the row up by ARN; one that inserts or updates the
	// row ignores it. StepWrite may set it on the steps it writes (for
	// the caller to keep once the write is committed: an inserted row's
	// id is the row's only if its transaction commits).
	ExecutionID int64
}

// StepStore writes engine steps.
type StepStore interface {
	// StepWrite writes steps of distinct executions, all or none: what
	// ExecutionInsert or ExecutionUpdate, InputInsert, EventInsert,
	// TimerDelete, TimerInsert, TaskDelete and TaskInsert would, with the
	// same errors, but in a few statements for the whole batch. Inside a
	// transaction, one that failed must be rolled back.
	StepWrite(ctx context.Context, steps []*Step) error
}
