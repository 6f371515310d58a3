// Package store is the seam between the engine and its database. A driver
// (sqlitestore, later pgstore) implements Driver; the engine and the
// service use only these interfaces.
//
// # Shape
//
// Executor is composed of one small interface per aggregate (state
// machines, executions, history, the replay log, timers, tasks, tags).
// ExecutorTx embeds Executor and adds Commit and Rollback: every change the
// engine makes for one step of one or many executions is one transaction.
// Methods take (ctx, *XxxParams) and return rows from this package.
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
	"fmt"
	"stepwise/history"
	"strconv"
	"strings"
	"time"
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
}

// ExecutorTx is an Executor inside a transaction.
type ExecutorTx interface {
	Executor
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// StateMachine is a state machine; its definition lives in revisions.
type StateMachine struct {
	Arn         string
	Name        string
	Type        string // STANDARD or EXPRESS
	Status      string // ACTIVE or DELETING
	RevisionID  string // the current revision
	Definition  string // the current revision's definition
	RoleArn     string
	Description string
	// Configuration blocks as the API takes them, JSON text ("" when unset).
	LoggingConfiguration    string
	TracingConfiguration    string
	EncryptionConfiguration string
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

// Revision is one version of a state machine's definition and role.
type Revision struct {
	StateMachineArn string
	RevisionID      string
	Definition      string
	RoleArn         string
	CreatedAt       time.Time
}

// StateMachineInsertParams creates a state machine and its first revision.
type StateMachineInsertParams struct {
	StateMachine *StateMachine // RevisionID and Definition set
}

// StateMachineUpdateParams replaces a state machine's role, description or
// configuration. With NewRevision the RevisionID and Definition of
// StateMachine become a new revision row and the current one; without it
// they are ignored.
type StateMachineUpdateParams struct {
	StateMachine *StateMachine
	NewRevision  bool
}

// StateMachineListParams pages through state machines by name.
type StateMachineListParams struct {
	AfterName string // exclusive; "" from the start
	Limit     int
}

// StateMachineStore stores state machines.
type StateMachineStore interface {
	// StateMachineInsert fails with ErrAlreadyExists when the name is taken.
	StateMachineInsert(ctx context.Context, p *StateMachineInsertParams) (*StateMachine, error)
	StateMachineGet(ctx context.Context, arn string) (*StateMachine, error)
	StateMachineUpdate(ctx context.Context, p *StateMachineUpdateParams) (*StateMachine, error)
	// StateMachineDelete removes the state machine and its tags (its
	// revisions stay for the executions that ran them); ErrNotFound when
	// there is none.
	StateMachineDelete(ctx context.Context, arn string) error
	StateMachineList(ctx context.Context, p *StateMachineListParams) ([]*StateMachine, error)
	RevisionGet(ctx context.Context, stateMachineArn, revisionID string) (*Revision, error)
}

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
	// StateMachineArn is then not looked at).
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

// Fence is a node's lease on the executions it owns: the node's id and
// the epoch it registered with. It is a fencing token: once another node
// claimed an execution, or the node registered again, writes under the old
// fence are refused.
type Fence struct {
	Node  string
	Epoch int64
}

// NodeStore keeps the leases of the servers that share a database, and
// which of them owns each running execution. Lease times are the store's
// clock (the database server's, where there is one), so nodes need not
// agree on the time.
type NodeStore interface {
	// NodeRegister gives node a lease of ttl with a new epoch, higher
	// than any it had: the executions it owned under an earlier epoch
	// are no longer its own (it may claim them again).
	NodeRegister(ctx context.Context, node string, ttl time.Duration) (Fence, error)
	// NodeRenew extends f's lease to ttl from now; ErrFenced when the
	// lease ran out or the node registered again since.
	NodeRenew(ctx context.Context, f Fence, ttl time.Duration) error
	// NodeRelease ends f's lease and leaves the executions f owned with
	// no owner, for others to claim at once.
	NodeRelease(ctx context.Context, f Fence) error
	// ExecutionClaim makes up to limit running executions whose owner is
	// gone (none, a node whose lease ran out or that registered again, or
	// one unknown) f's own, and returns their ARNs. Each claimed
	// execution's version moves on, so a step its former owner prepared
	// is refused. ErrFenced when f's lease is not live.
	ExecutionClaim(ctx context.Context, f Fence, limit int) ([]string, error)
}

// Version is a published version of a state machine: one of its
// revisions, numbered.
type Version struct {
	StateMachineArn string
	Number          int64
	RevisionID      string
	Description     string
	CreatedAt       time.Time
}

// Arn is the version's ARN: the state machine's, then ":" and the number.
func (v *Version) Arn() string { return v.StateMachineArn + ":" + strconv.FormatInt(v.Number, 10) }

// Alias names one or two versions of a state machine, with the share of
// executions each gets.
type Alias struct {
	StateMachineArn string
	Name            string
	Description     string
	Routing         []AliasRoute
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// Arn is the alias's ARN: the state machine's, then ":" and the name.
func (a *Alias) Arn() string { return a.StateMachineArn + ":" + a.Name }

// AliasRoute is a version of an alias and its weight (0 to 100).
type AliasRoute struct {
	Version int64
	Weight  int
}

// Pick returns the version of an alias that a draw n, uniform in
// [0, 100), lands on: each route gets its weight's share.
func (a *Alias) Pick(n int) int64 {
	for _, r := range a.Routing {
		if n < r.Weight {
			return r.Version
		}
		n -= r.Weight
	}
	return a.Routing[len(a.Routing)-1].Version
}

// VersionInUseError is VersionDelete's refusal of a version that aliases
// route to; it is ErrConflict.
type VersionInUseError struct {
	Aliases []string // the aliases' names, sorted
}

func (e *VersionInUseError) Error() string {
	return fmt.Sprintf("version routed to by aliases %s", strings.Join(e.Aliases, ", "))
}

// Is makes the error ErrConflict.
func (e *VersionInUseError) Is(target error) bool { return target == ErrConflict }

// VersionMissingError is AliasInsert's and AliasUpdate's refusal of a
// routing to a version that does not exist; it is ErrNotFound.
type VersionMissingError struct {
	Number int64
}

func (e *VersionMissingError) Error() string {
	return fmt.Sprintf("version %d does not exist", e.Number)
}

// Is makes the error ErrNotFound.
func (e *VersionMissingError) Is(target error) bool { return target == ErrNotFound }

// VersionStore keeps the published versions and the aliases of state
// machines. Deleting a state machine deletes them. A version an alias
// routes to cannot be deleted, and an alias cannot route to a version
// that does not exist: each driver checks it in the write's transaction,
// with the state machine's versions and aliases held still, so a deletion
// racing an alias's creation or update never leaves an alias routing to
// a deleted version.
type VersionStore interface {
	// VersionPublish publishes v.RevisionID of v.StateMachineArn as its
	// next version (v.Number is ignored; numbers are never used twice,
	// even after a deletion), or returns the version that has that
	// revision already, with created false. ErrNotFound when the state
	// machine does not exist.
	VersionPublish(ctx context.Context, v *Version) (out *Version, created bool, err error)
	// VersionGet returns a version; ErrNotFound when there is none.
	VersionGet(ctx context.Context, stateMachineArn string, number int64) (*Version, error)
	// VersionList lists versions newest first: those numbered below
	// before (0: from the newest), up to limit.
	VersionList(ctx context.Context, stateMachineArn string, before int64, limit int) ([]*Version, error)
	// VersionDelete deletes a version; ErrNotFound when there is none, a
	// *VersionInUseError when an alias routes to it.
	VersionDelete(ctx context.Context, stateMachineArn string, number int64) error
	// AliasInsert creates an alias; ErrAlreadyExists when the name is
	// taken, ErrNotFound when the state machine does not exist, a
	// *VersionMissingError when a version it routes to does not.
	AliasInsert(ctx context.Context, a *Alias) error
	// AliasGet returns an alias; ErrNotFound when there is none.
	AliasGet(ctx context.Context, stateMachineArn, name string) (*Alias, error)
	// AliasUpdate writes an alias's description, routing and update
	// date; ErrNotFound when there is none, a *VersionMissingError when a
	// version it routes to does not exist.
	AliasUpdate(ctx context.Context, a *Alias) error
	// AliasDelete deletes an alias; ErrNotFound when there is none.
	AliasDelete(ctx context.Context, stateMachineArn, name string) error
	// AliasList lists a state machine's aliases by name, those after
	// after, up to limit.
	AliasList(ctx context.Context, stateMachineArn, after string, limit int) ([]*Alias, error)
}

// Ownership is who owns an execution (Owner.Node "" for no one), whether
// that owner's lease is live, and whether the execution runs.
type Ownership struct {
	Owner   Fence
	Live    bool
	Running bool
}

// Signal is a request a node made of the node that owns an execution,
// and that node's answer.
type Signal struct {
	ID     int64
	Sender string
	Body   []byte
}

// Cluster is what servers sharing a database use to work as one, beyond
// NodeStore: who owns an execution, requests to an owner (signals), a
// queue of activity tasks that any node's workers take from, and
// wake-ups between nodes. A driver that implements it can be shared by
// many servers (PostgreSQL's); the engine runs as one node of a cluster
// only on such a driver.
type Cluster interface {
	// ExecutionOwner says who owns an execution; ErrNotFound when there
	// is none.
	ExecutionOwner(ctx context.Context, arn string) (Ownership, error)
	// ExecutionClaimOne makes one execution f's own when it is an
	// orphan (as ExecutionClaim) or is not running; false when a live
	// node owns it running. The execution's version moves on.
	ExecutionClaimOne(ctx context.Context, f Fence, arn string) (bool, error)

	// SignalSend queues a request of sender for node to, wakes to (on
	// ChannelSignal) and returns the request's id.
	SignalSend(ctx context.Context, sender, to string, body []byte) (int64, error)
	// SignalTake returns up to limit requests for node to not taken yet,
	// oldest first, and marks them taken.
	SignalTake(ctx context.Context, to string, limit int) ([]Signal, error)
	// SignalAnswer writes the answer to a request and wakes its sender
	// (on ChannelReply).
	SignalAnswer(ctx context.Context, id int64, reply []byte) error
	// SignalResult returns a request's answer, and deletes the request,
	// once there is one; ok is false until then. ErrNotFound when the
	// request is gone.
	SignalResult(ctx context.Context, id int64) (reply []byte, ok bool, err error)
	// SignalWithdraw deletes a request no one took; false when it was
	// taken already.
	SignalWithdraw(ctx context.Context, id int64) (bool, error)
	// SignalSweep deletes requests older than age (their senders gave
	// up, or died).
	SignalSweep(ctx context.Context, age time.Duration) error

	// ActivityEnqueue queues activity tasks for any node's workers, each
	// once, and wakes the nodes (on ChannelActivity, once for each
	// activity: its ARN, a newline and how many of its tasks were queued).
	ActivityEnqueue(ctx context.Context, tasks []QueuedTask) error
	// ActivityTake takes the oldest task of an activity off the queue
	// that node queued, or when there is none the oldest of all; ok is
	// false when there is none at all. Concurrent takers get distinct
	// tasks.
	ActivityTake(ctx context.Context, activityArn, node string) (executionArn, taskID string, ok bool, err error)
	// ActivityDequeue removes a task that is no longer wanted.
	ActivityDequeue(ctx context.Context, executionArn, taskID string) error
	// ActivityQueued counts an activity's queued tasks.
	ActivityQueued(ctx context.Context, activityArn string) (int, error)

	// NodeLive says whether node has a live lease (under any epoch).
	NodeLive(ctx context.Context, node string) (bool, error)
	// NodeLeader returns the live node with the smallest id ("" for
	// none): the one that does what one node of a cluster does for all
	// (deliver events, delete old executions).
	NodeLeader(ctx context.Context) (string, error)

	// Notify wakes the listeners of channel.
	Notify(ctx context.Context, channel, payload string) error
	// Listen calls fn with every wake-up on channels until ctx ends or
	// the connection fails (its error returned); fn("", "") is called
	// first, once listening: wake-ups sent before then were missed.
	Listen(ctx context.Context, channels []string, fn func(channel, payload string)) error
}

// QueuedTask is an activity task queued for any node's workers by node
// Owner (its execution's owner): behind the others, or with Front ahead
// of them (one a poller gave back).
type QueuedTask struct {
	ActivityArn  string
	ExecutionArn string
	TaskID       string
	Owner        string
	Front        bool
}

// The wake-up channels of a Cluster.
const (
	ChannelSignal   = "stepwise_signal"   // payload: the node a request is for
	ChannelReply    = "stepwise_reply"    // payload: the id of the answered request
	ChannelActivity = "stepwise_activity" // payload: the activity ARN of queued tasks, "\n", their number
	ChannelReleased = "stepwise_released" // payload: the node that released its executions
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
	// OutboxCursorSet moves a destination's cursor to id.
	OutboxCursorSet(ctx context.Context, destination string, id int64) error
}

// Tag is one tag of a resource.
type Tag struct {
	Key   string
	Value string
}

// TagStore stores resource tags.
type TagStore interface {
	// TagPut adds or replaces tags.
	TagPut(ctx context.Context, resourceArn string, tags []Tag) error
	TagDelete(ctx context.Context, resourceArn string, keys []string) error
	// TagList returns the tags sorted by key.
	TagList(ctx context.Context, resourceArn string) ([]Tag, error)
}

// MetaStore keeps the server's own settings, such as the key of its task
// tokens, with the data they belong to.
type MetaStore interface {
	// MetaGetOrPut returns the value stored under key, storing value there
	// first when the key has none.
	MetaGetOrPut(ctx context.Context, key string, value []byte) ([]byte, error)
}

// Activity is an activity: a named queue of tasks for workers.
type Activity struct {
	Arn  string
	Name string
	// EncryptionConfiguration as the API takes it, JSON text ("" when unset).
	EncryptionConfiguration string
	CreatedAt               time.Time
}

// ActivityListParams pages through activities by name.
type ActivityListParams struct {
	AfterName string // exclusive; "" from the start
	Limit     int
}

// ActivityStore stores activities.
type ActivityStore interface {
	// ActivityInsert fails with ErrAlreadyExists when the name is taken.
	ActivityInsert(ctx context.Context, a *Activity) (*Activity, error)
	ActivityGet(ctx context.Context, arn string) (*Activity, error)
	// ActivityDelete removes the activity and its tags; ErrNotFound when
	// there is none.
	ActivityDelete(ctx context.Context, arn string) error
	ActivityList(ctx context.Context, p *ActivityListParams) ([]*Activity, error)
}

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
