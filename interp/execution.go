package interp

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"stepwise/asl"
	"stepwise/asl/budget"
	"stepwise/asl/dataflow"
	"stepwise/asl/jsonata"
	"stepwise/asl/jsonpath"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
)

// Info describes an execution: what the context object's Execution and
// StateMachine members hold.
type Info struct {
	ExecutionArn     string
	Name             string
	RoleArn          string
	StartTime        time.Time
	StateMachineArn  string
	StateMachineName string
	RedriveCount     int
	Region           string
	Account          string
}

// Options tune an execution.
type Options struct {
	// PayloadLimit is the largest state output in bytes; 0 means
	// dataflow.DefaultPayloadLimit.
	PayloadLimit int
	// MaxHistoryEvents is the most events an execution may write; one that
	// would enter a state beyond it fails. 0 means DefaultMaxHistoryEvents.
	MaxHistoryEvents int
	// TaskToken returns the token of a task ($$.Task.Token). It must be
	// deterministic for replays; an engine makes it unguessable with a
	// keyed hash. Nil uses a plain hash of the ARN and the task id.
	TaskToken func(executionArn, taskID string) string
	// Limits bound every evaluation of an expression (JSONata, JSONPath,
	// intrinsic functions): its steps, the bytes of the values it builds
	// and its time. Zero fields take budget's defaults.
	Limits budget.Limits
	// Clock reads the wall clock for the evaluations' time limit; nil
	// means no time limit. An evaluation that runs out of time fails its
	// state; the step reports it (Marks) so that a replay, which runs
	// without a clock, fails it at the same point (ReplayMarks).
	Clock func() time.Time
	// Interrupt, when set, is polled during long evaluations. It returns
	// nil to go on; otherwise the step is cut short where it is: see
	// Interruption.
	Interrupt func() *Interruption
	// Inspect, when set, runs the execution as the TestState operation
	// runs one state: see Inspection.
	Inspect *Inspection
	// Policies are the failure policies of the execution's states (see
	// Policy); nil for AWS's behaviour everywhere.
	Policies Policies
	// ActivityExists reports whether an activity exists. It is asked
	// before an activity task is scheduled: the task of an activity that
	// does not exist fails its state (States.Runtime), as AWS fails it.
	// Nil means every activity exists. A step reports the activities it
	// found missing (MissingActivities) so that a replay, which runs
	// without it, answers the same (ReplayMissingActivities) whatever was
	// created or deleted since.
	ActivityExists func(arn string) bool
}

// Interruption is why a step is cut short in the middle of an evaluation.
type Interruption struct {
	// Stop stops the execution where it is, as a Stop event with Error
	// and Cause would: the step returns what it wrote up to there and
	// ExecutionAborted, and reports the point (Marks). Without Stop the
	// step is abandoned: it returns ErrInterrupted.
	Stop         bool
	Error, Cause string
}

// Mark is an evaluation of a step that was cut short from outside: it ran
// out of time, or a stop interrupted it. Replaying the step with its marks
// ends the same evaluations at the same points.
type Mark struct {
	Eval  int   // the evaluation's ordinal within the step
	Steps int64 // the evaluation's step count when it was cut short
	// Stop is set for an evaluation a stop interrupted, with the stop's
	// error and cause; otherwise the evaluation ran out of time.
	Stop         bool
	Error, Cause string
}

// DefaultMaxHistoryEvents is AWS's hard quota on an execution's history.
const DefaultMaxHistoryEvents = 25000

// Execution is the state of one running execution. It is changed only by
// Start and Step.
type Execution struct {
	Machine *asl.StateMachine
	Info    Info
	Input   any
	// InputText is the input as the client sent it. AWS records it
	// unchanged in ExecutionStarted and the first state's entered event;
	// empty means the compact form of Input.
	InputText string
	Opts      Options

	Status history.ExecutionStatus
	Output any
	// OutputText is Output's JSON text, as the ExecutionSucceeded event
	// holds it: set when the execution succeeds.
	OutputText string
	Failure    *failure.Failure

	root        *frame
	nextEventID int64
	nextID      int
	waiting     map[string]*frame // task and timer ids → the frame waiting on them
	timeoutID   string            // the execution timeout timer
	invocations map[string]int    // tasks issued so far, by state name (TaskRequest.Invocation)
	// Operator controls (operator.go): the held states (nil for none),
	// the suspension, and the frames parked before a state, in the order
	// they parked.
	held      map[string]bool
	suspended bool
	parked    []*frame
	// exited are the states that exited successfully at least once;
	// rootInputs the input each state of the top level was last entered
	// with (for reruns: rerun.go).
	exited     map[string]bool
	rootInputs map[string]any

	// Per step.
	now    time.Time
	events []*history.Event
	slab   []history.Event // events are allocated from here, a block at a time
	grown  uint8           // the slabs past their first block (see block)
	first  firstBlocks     // the slabs' first blocks, for Release
	// jshared keeps the JSONata conversions of the values the states'
	// expressions read, for the states after.
	jshared jsonata.Shared
	randGet func() *rand.Rand // x.rand, made once
	envSlab []jsonpath.Env    // evaluation environments are allocated from here, a block at a time
	// The details of the entered and exited events, likewise.
	enteredSlab []history.StateEnteredEventDetails
	exitedSlab  []history.StateExitedEventDetails
	clock       func() time.Time // JSONata's clock, made once
	cmds        []Command
	work        []func()

	buf          []byte // reused by text
	draws        uint64 // random sources handed out, for deterministic seeds
	varBytes     int    // JSON text size of the variables of live frames
	ctxExecution *jsonvalue.Object
	ctxMachine   *jsonvalue.Object
	jfuncs       map[string]*jsonata.Func // the Step Functions JSONata functions, made once

	meters       []*budget.Meter // the evaluation budgets of the step, in order
	replay       map[int]Mark    // see ReplayMarks
	missing      []string        // activities this step found missing
	replayGone   map[string]bool // see ReplayMissingActivities
	poll         func() bool     // polls Opts.Interrupt for the meters
	newMeter     func() *budget.Meter
	meterSlab    []budget.Meter // meters are allocated from here, a block at a time
	meterSource  *budget.Source // the limits, clock and interrupt of the step's meters
	interruption *Interruption  // what the last poll returned
	stopped      *Interruption  // the stop that cut the step short
	interrupted  bool           // a step was abandoned: see ErrInterrupted
}

// New returns an execution ready to Start.
func New(m *asl.StateMachine, info Info, input any, opts Options) *Execution {
	if opts.PayloadLimit <= 0 {
		opts.PayloadLimit = dataflow.DefaultPayloadLimit
	}
	if opts.TaskToken == nil {
		opts.TaskToken = plainToken
	}
	if opts.MaxHistoryEvents <= 0 {
		opts.MaxHistoryEvents = DefaultMaxHistoryEvents
	}
	return &Execution{
		Machine:     m,
		Info:        info,
		Input:       input,
		Opts:        opts,
		Status:      history.StatusRunning,
		nextEventID: 1,
		waiting:     map[string]*frame{},
	}
}

// CommandKind says what a command asks the caller to do.
type CommandKind int

const (
	// RunTask asks for a Task state's work to be done; answer with
	// TaskSucceeded or TaskFailed carrying the same ID.
	RunTask CommandKind = iota + 1
	// StartTimer asks for TimerFired with the same ID at At.
	StartTimer
	// CancelTask says the task's result is no longer wanted.
	CancelTask
	// CancelTimer says the timer is no longer wanted.
	CancelTimer
)

// Command is something the caller must carry out after a step.
type Command struct {
	Kind CommandKind
	ID   string
	At   time.Time    // StartTimer
	Task *TaskRequest // RunTask
	// Kill is set on a CancelTask an operator's Kill made: the runner
	// must stop the work (a process killed, a job stopped, a child
	// execution stopped), not only forget its result.
	Kill bool
}

// TaskRequest is the work a Task state asks for.
type TaskRequest struct {
	StateName        string
	Resource         string
	Token            string // $$.Task.Token
	Parameters       any
	TimeoutSeconds   int64 // 0: none
	HeartbeatSeconds int64 // 0: none
	// RetryCount is $$.State.RetryCount: the retries of this entry into
	// the state before this attempt.
	RetryCount int
	// Invocation numbers the state's tasks in the execution from 0: every
	// attempt counts, retries and re-entries alike (a loop back to the
	// state, each Map iteration and Parallel branch that runs it), in the
	// order the tasks are issued, and the count goes on after a redrive.
	// A Map's ItemReader counts under the Map's name; a distributed Map's
	// children are executions of their own and count their own. It is
	// what Step Functions Local numbers mocked responses by ("0", "1-2").
	Invocation int
	// RoleArn is the role the task's Credentials name ("" for none).
	RoleArn string
	// Reader, when set, makes the task a Map state's ItemReader: its
	// answer is the items read (an array), or an ItemReaderFailed
	// failure. Parameters are the reader's, evaluated.
	Reader *ReaderConfig
	// MapRun, when set, makes the task a distributed Map's map run: its
	// answer is the Map's result, or the map run's failure.
	MapRun *MapRunRequest
	// Write, when set, makes the task the writing of a map run's results
	// by its ResultWriter (Resource is the writer's): its answer is the
	// Map's result, or a ResultWriterFailed failure.
	Write *maprun.Write
}

// ReaderConfig is an ItemReader's ReaderConfig, evaluated.
type ReaderConfig struct {
	InputType         string // CSV, JSON, JSONL, PARQUET, MANIFEST
	ManifestType      string // S3_INVENTORY (for MANIFEST), ATHENA_DATA (for CSV, JSONL, PARQUET data files)
	ItemsPointer      string // a JSON Pointer to the array of a JSON object's items
	Transformation    string // LOAD_AND_FLATTEN: a listing's objects are read as InputType says
	CSVHeaderLocation string // FIRST_ROW or GIVEN
	CSVHeaders        []string
	CSVDelimiter      string // COMMA (default), PIPE, SEMICOLON, SPACE, TAB
	MaxItems          int64  // 0: all
	// Spool is the ARN of the map run the items are read for: a runner
	// may keep them there (answering SpooledItems) instead of answering
	// with them.
	Spool string
}

// EventKind says what happened in the outside world.
type EventKind int

const (
	TaskSucceeded EventKind = iota + 1
	TaskFailed
	TimerFired
	Stop
	// TaskHeartbeat says a running task is alive; it restarts the task's
	// HeartbeatSeconds timer.
	TaskHeartbeat
	// TaskStarted says a worker took the running task (WorkerName names it
	// for an activity). A task that ends without it is started then.
	TaskStarted
	// TaskSubmitted says the running task's request was accepted by the
	// service that does the work (Output holds its response), for tasks
	// that then wait for a job or a callback (.sync, .waitForTaskToken).
	TaskSubmitted
	// Redrive restarts a FAILED, TIMED_OUT or ABORTED execution from where
	// it stopped: the states that did not succeed run again, the branches
	// and iterations that succeeded keep their results.
	Redrive
	// TaskReleased says the activity task a worker was recorded as taking
	// (TaskStarted) never reached it: the task waits for a worker again,
	// and its heartbeat clock stops until the next TaskStarted, which
	// starts it again without writing a second ActivityStarted. It writes
	// no event; the replay log keeps it, so the engine knows after a
	// restart that no worker holds the task.
	TaskReleased
	// Hold makes the execution hold State: a frame about to enter it
	// parks, writing nothing, until a Release of the state. A state
	// already running or ended is not affected (its later entries are).
	Hold
	// Release lets the frames parked before State enter it.
	Release
	// Suspend parks every frame about to enter any state; what runs goes
	// on (tasks, timers, children) and their results are applied.
	Suspend
	// Resume lets the parked frames go on, but those before a held state.
	Resume
	// Skip ends the Task state State as succeeded with Output as its
	// output: its running task is cancelled (its result, if it comes, is
	// dropped), its retry's wait cancelled, or a frame parked before it
	// enters it. Retry, Catch, ResultSelector, ResultPath and OutputPath
	// do not apply.
	Skip
	// Kill fails the running task of the Task state State with Error and
	// Cause, as a TaskFailed: Retry and Catch apply. The task is
	// cancelled with Command.Kill set.
	Kill
	// RerunKind runs a FAILED, TIMED_OUT or ABORTED execution again as
	// Event.Rerun says (see Rerun); Step refuses a rerun that does not
	// fit the execution with a *RerunError.
	RerunKind
)

// ErrNotRedrivable is returned by Step for Redrive on an execution that is
// running or succeeded.
var ErrNotRedrivable = errors.New("execution cannot be redriven")

// Event is something that happened outside the interpreter.
type Event struct {
	Kind   EventKind
	ID     string // the task or timer ID from the command
	Output any    // TaskSucceeded, TaskSubmitted
	Error  string // TaskFailed, Stop
	Cause  string // TaskFailed, Stop
	// WorkerName names the activity worker (TaskStarted).
	WorkerName string
	// State names the state of an operator's control (Hold, Release,
	// Skip, Kill), and By who did it (any operator event).
	State string
	By    string
	// Rerun is what a RerunKind event asks for.
	Rerun *Rerun
}

// ErrInterrupted is returned by Start and Step when Options.Interrupt
// abandoned an evaluation. The step is abandoned half-way: the execution
// must not be used again (every later call returns ErrInterrupted); the
// caller rebuilds it, e.g. by replaying the steps before this one.
var ErrInterrupted = errors.New("step interrupted")

// ErrNotRunning is returned by Step for an execution that has ended.
var ErrNotRunning = errors.New("execution is not running")

// Start begins the execution at time now.
func (x *Execution) Start(now time.Time) (evs []*history.Event, cmds []Command, err error) {
	if x.interrupted {
		return nil, nil, ErrInterrupted
	}
	defer x.endReplay()
	defer x.recoverInterrupt(&evs, &cmds, &err)
	x.begin(now)
	in := x.InputText
	if in == "" {
		in = jsonvalue.String(x.Input)
	}
	x.emit(nil, history.Event{
		Type: history.EventExecutionStarted,
		ExecutionStartedEventDetails: &history.ExecutionStartedEventDetails{
			Input: in, RoleArn: x.Info.RoleArn,
		},
	})
	x.root = &frame{machine: x.Machine, kind: rootFrame, vars: &scope{}}
	for name, ps := range x.Opts.Policies {
		if slices.Contains(ps, PolicyHeld) {
			if x.held == nil {
				x.held = map[string]bool{}
			}
			x.held[name] = true
		}
	}
	if in := x.Opts.Inspect; in != nil {
		for k, v := range in.Variables.All() {
			x.varBytes += x.root.vars.set(k, v, len(x.text(v)))
		}
	}
	if t := x.Machine.TimeoutSeconds; t != nil && *t > 0 {
		x.timeoutID = x.newID("execution-timeout")
		x.waiting[x.timeoutID] = x.root
		x.cmds = append(x.cmds, Command{Kind: StartTimer, ID: x.timeoutID, At: now.Add(seconds(*t))})
	}
	x.root.next, x.root.nextInput, x.root.inputText = x.Machine.StartAt, x.Input, x.InputText
	x.root.run(x)
	x.drain()
	evs, cmds = x.end()
	return evs, cmds, nil
}

// recoverInterrupt ends a step whose evaluation was interrupted: it stops
// the execution there, or abandons the step (ErrInterrupted).
func (x *Execution) recoverInterrupt(evs *[]*history.Event, cmds *[]Command, err *error) {
	r := recover()
	if r == nil {
		return
	}
	if !budget.IsInterrupt(r) {
		panic(r)
	}
	stop := x.interruption
	for i := len(x.meters) - 1; i >= 0; i-- {
		if how, _ := x.meters[i].End(); how == budget.Interrupted {
			if mk, ok := x.replay[i]; ok && mk.Stop {
				stop = &Interruption{Stop: true, Error: mk.Error, Cause: mk.Cause}
			}
			break
		}
	}
	if stop == nil || !stop.Stop {
		x.interrupted = true
		*evs, *cmds, *err = nil, nil, ErrInterrupted
		return
	}
	x.stopped = stop
	x.work = x.work[:0]
	x.abort(stop.Error, stop.Cause)
	x.drain()
	*evs, *cmds = x.end()
	*err = nil
}

// Step applies one outside event at time now. Events for tasks or timers
// that are no longer awaited (their branch was cancelled, the execution
// ended) are ignored.
func (x *Execution) Step(ev Event, now time.Time) (evs []*history.Event, cmds []Command, err error) {
	if x.interrupted {
		return nil, nil, ErrInterrupted
	}
	defer x.endReplay()
	defer x.recoverInterrupt(&evs, &cmds, &err)
	if ev.Kind == Redrive || ev.Kind == RerunKind {
		if x.Status == history.StatusRunning || x.Status == history.StatusSucceeded {
			return nil, nil, ErrNotRedrivable
		}
		if ev.Kind == RerunKind {
			if ev.Rerun == nil {
				return nil, nil, refuseRerun("a rerun needs a mode")
			}
			if _, err := x.PlanRerun(ev.Rerun); err != nil {
				return nil, nil, err
			}
		}
		x.begin(now)
		if ev.Kind == RerunKind {
			x.rerun(ev.Rerun)
		} else {
			x.redrive()
		}
		x.drain()
		evs, cmds := x.end()
		return evs, cmds, nil
	}
	if x.Status != history.StatusRunning {
		return nil, nil, ErrNotRunning
	}
	x.begin(now)
	switch ev.Kind {
	case Stop:
		x.abort(ev.Error, ev.Cause)
	case Hold, Release, Suspend, Resume, Skip, Kill:
		if err := x.control(ev); err != nil {
			return nil, nil, err
		}
	default:
		f, ok := x.waiting[ev.ID]
		if !ok {
			return nil, nil, nil
		}
		if !f.awaits(x, ev) {
			return nil, nil, nil
		}
		if ev.Kind != TaskHeartbeat && ev.Kind != TaskStarted && ev.Kind != TaskSubmitted && ev.Kind != TaskReleased {
			delete(x.waiting, ev.ID)
		}
		if ev.ID == x.timeoutID {
			x.timeOut()
		} else {
			f.resume(x, ev)
		}
	}
	x.drain()
	ev2, cmds := x.end()
	return ev2, cmds, nil
}

func (x *Execution) begin(now time.Time) {
	x.now = now
	x.events = nil
	x.cmds = nil
	x.meters = x.meters[:0]
	x.meterSource = nil // the options may have changed since the last step
	x.interruption, x.stopped = nil, nil
	x.missing = x.missing[:0]
}

// endReplay forgets what ReplayMarks and ReplayMissingActivities said for
// the step that ends.
func (x *Execution) endReplay() {
	clear(x.replay)
	clear(x.replayGone)
}

// MissingActivities returns the activities the last step found missing
// (see Options.ActivityExists). A caller that replays steps passes them
// to ReplayMissingActivities before replaying the same step.
func (x *Execution) MissingActivities() []string { return x.missing }

// ReplayMissingActivities makes the next step (Start or Step) take the
// activities arns name as missing, as the step found them when it first
// ran; later steps are not affected.
func (x *Execution) ReplayMissingActivities(arns []string) {
	if len(arns) == 0 {
		return
	}
	if x.replayGone == nil {
		x.replayGone = map[string]bool{}
	}
	for _, a := range arns {
		x.replayGone[a] = true
	}
}

// activityExists answers Options.ActivityExists for this step, noting an
// activity found missing.
func (x *Execution) activityExists(arn string) bool {
	ok := !x.replayGone[arn] && (x.Opts.ActivityExists == nil || x.Opts.ActivityExists(arn))
	if !ok {
		x.missing = append(x.missing, arn)
	}
	return ok
}

// meterFunc returns x.meter as a function value, made once.
func (x *Execution) meterFunc() func() *budget.Meter {
	if x.newMeter == nil {
		x.newMeter = x.meter
	}
	return x.newMeter
}

// meter returns the budget of a new evaluation environment of this step,
// from a block of meters allocated at once.
func (x *Execution) meter() *budget.Meter {
	if x.Opts.Interrupt != nil && x.poll == nil {
		x.poll = func() bool {
			x.interruption = x.Opts.Interrupt()
			return x.interruption != nil
		}
	}
	if x.meterSource == nil {
		x.meterSource = budget.NewSource(x.Opts.Limits, x.Opts.Clock, x.poll)
	}
	if len(x.meterSlab) == 0 {
		x.meterSlab = make([]budget.Meter, 32)
	}
	m := &x.meterSlab[0]
	x.meterSlab = x.meterSlab[1:]
	x.meterSource.Init(m)
	if mk, ok := x.replay[len(x.meters)]; ok {
		how := budget.TimedOut
		if mk.Stop {
			how = budget.Interrupted
		}
		m.Replay(how, mk.Steps)
	}
	x.meters = append(x.meters, m)
	return m
}

// Marks returns the evaluations of the last step that were cut short from
// outside. A caller that replays steps passes them to ReplayMarks before
// replaying the same step, so the replay ends them in the same way
// whatever the speed of the machine.
func (x *Execution) Marks() []Mark {
	var marks []Mark
	for i, m := range x.meters {
		switch how, at := m.End(); how {
		case budget.TimedOut:
			marks = append(marks, Mark{Eval: i, Steps: at})
		case budget.Interrupted:
			if x.stopped != nil {
				marks = append(marks, Mark{Eval: i, Steps: at, Stop: true, Error: x.stopped.Error, Cause: x.stopped.Cause})
			}
		}
	}
	return marks
}

// ReplayMarks makes the next step (Start or Step) end the evaluations
// marks name as they ended when the step first ran; later steps are not
// affected.
func (x *Execution) ReplayMarks(marks []Mark) {
	clear(x.replay)
	if len(marks) == 0 {
		return
	}
	if x.replay == nil {
		x.replay = map[int]Mark{}
	}
	for _, mk := range marks {
		x.replay[mk.Eval] = mk
	}
}

// end returns what the step wrote and asked for. A task or timer that was
// started and cancelled within the step is left out altogether.
func (x *Execution) end() ([]*history.Event, []Command) {
	cancelled := map[string]bool{}
	for _, c := range x.cmds {
		if c.Kind == CancelTask || c.Kind == CancelTimer {
			cancelled[c.ID] = true
		}
	}
	if len(cancelled) == 0 {
		return x.events, x.cmds
	}
	started := map[string]bool{}
	for _, c := range x.cmds {
		if (c.Kind == RunTask || c.Kind == StartTimer) && cancelled[c.ID] {
			started[c.ID] = true
		}
	}
	cmds := x.cmds[:0]
	for _, c := range x.cmds {
		if !started[c.ID] {
			cmds = append(cmds, c)
		}
	}
	return x.events, cmds
}

func (x *Execution) drain() {
	for len(x.work) > 0 {
		w := x.work[len(x.work)-1]
		x.work = x.work[:len(x.work)-1]
		w()
	}
}

func (x *Execution) push(w func()) { x.work = append(x.work, w) }

// invoke numbers a task of the named state (TaskRequest.Invocation).
func (x *Execution) invoke(state string) int {
	if x.invocations == nil {
		x.invocations = map[string]int{}
	}
	n := x.invocations[state]
	x.invocations[state] = n + 1
	return n
}

func (x *Execution) newID(prefix string) string {
	x.nextID++
	return prefix + "-" + strconv.Itoa(x.nextID)
}

// text returns the JSON text of v, reusing one buffer for the encoding.
func (x *Execution) text(v any) string {
	x.buf = jsonvalue.Append(x.buf[:0], v)
	return string(x.buf)
}

// textLimit is text for a value that must not pass limit bytes: false,
// without writing it all out, when it does.
func (x *Execution) textLimit(v any, limit int) (string, bool) {
	var ok bool
	x.buf, ok = jsonvalue.AppendLimit(x.buf[:0], v, limit)
	if !ok {
		return "", false
	}
	return string(x.buf), true
}

// emit appends an event written by frame f (nil: the execution itself),
// links it to f's last event and makes it f's last event.
func (x *Execution) emit(f *frame, ev history.Event) int64 {
	if f != nil {
		ev.PreviousEventID = f.last
	}
	id := x.emitLinked(f, ev)
	if f != nil {
		f.last = id
	}
	return id
}

// emitLinked appends an event whose PreviousEventID is already set and
// leaves f's last event alone.
func (x *Execution) emitLinked(f *frame, ev history.Event) int64 {
	ev.ID = x.nextEventID
	x.nextEventID++
	ev.Timestamp = x.now
	if len(x.slab) == cap(x.slab) {
		x.newEventBlock()
	}
	if x.events == nil {
		x.events = make([]*history.Event, 0, x.block(slabEventList, 64))
	}
	x.slab = append(x.slab, ev)
	x.events = append(x.events, &x.slab[len(x.slab)-1])
	return ev.ID
}

// succeed ends the execution successfully.
func (x *Execution) succeed(f *frame, output any) {
	x.Status = history.StatusSucceeded
	x.Output = output
	x.OutputText = f.outputText // the last state's output, as its event wrote it
	if x.OutputText == "" {
		x.OutputText = jsonvalue.String(output)
	}
	x.emit(f, history.Event{
		Type:                           history.EventExecutionSucceeded,
		ExecutionSucceededEventDetails: &history.OutputEventDetails{Output: x.OutputText},
	})
	x.finish()
}

// fail ends the execution with a failure.
func (x *Execution) fail(f *frame, fl *failure.Failure) {
	x.Status = history.StatusFailed
	x.Failure = fl
	x.emit(f, history.Event{
		Type:                        history.EventExecutionFailed,
		ExecutionFailedEventDetails: failureDetails(fl),
	})
	x.finish()
}

func (x *Execution) timeOut() {
	x.Status = history.StatusTimedOut
	x.Failure = failure.New(failure.Timeout, "The execution timed out.")
	x.Failure.HasCause = false
	x.root.cancel(x, 0)
	x.emit(x.lastFrame(), history.Event{
		Type:                          history.EventExecutionTimedOut,
		ExecutionTimedOutEventDetails: &history.FailureEventDetails{Error: ptr(failure.Timeout)},
	})
	x.finish()
}

func (x *Execution) abort(errName, cause string) {
	x.Status = history.StatusAborted
	x.Failure = &failure.Failure{Name: errName, Cause: cause, HasCause: cause != ""}
	// AWS writes no aborted event for the states a stop interrupts, and
	// links ExecutionAborted to no event.
	x.root.cancel(x, 0)
	d := &history.FailureEventDetails{}
	if errName != "" {
		d.Error = ptr(errName)
	}
	if cause != "" {
		d.Cause = ptr(cause)
	}
	x.emitLinked(nil, history.Event{Type: history.EventExecutionAborted, ExecutionAbortedEventDetails: d})
	x.finish()
}

// LastEventID returns the id of the last history event written.
func (x *Execution) LastEventID() int64 { return x.nextEventID - 1 }

// historyFull fails the execution when entering another state could take
// its history past the quota (a state needs at least its entered and exited
// events, and the execution its end event).
func (x *Execution) historyFull() bool {
	if x.nextEventID+3 <= int64(x.Opts.MaxHistoryEvents) {
		return false
	}
	x.root.cancel(x, 0)
	x.fail(x.lastFrame(), failure.Newf(failure.Runtime,
		"The execution reached the maximum number of history events (%d).", x.Opts.MaxHistoryEvents))
	return true
}

// redrive restarts an ended execution from where it stopped.
func (x *Execution) redrive() {
	x.Info.RedriveCount++
	x.ctxExecution = nil // RedriveCount changed
	x.Status = history.StatusRunning
	x.Failure = nil
	x.emit(x.lastFrame(), history.Event{
		Type:                          history.EventExecutionRedriven,
		ExecutionRedrivenEventDetails: &history.ExecutionRedrivenEventDetails{RedriveCount: x.Info.RedriveCount},
	})
	x.root.last = x.nextEventID - 1
	x.root.revive(x)
}

// lastFrame returns a frame whose last event is the execution's last event.
func (x *Execution) lastFrame() *frame {
	return &frame{last: x.nextEventID - 1}
}

func (x *Execution) finish() {
	for id := range x.waiting {
		if id == x.timeoutID {
			x.cmds = append(x.cmds, Command{Kind: CancelTimer, ID: id})
		}
		delete(x.waiting, id)
	}
	x.work = x.work[:0]
}

func failureDetails(fl *failure.Failure) *history.FailureEventDetails {
	d := &history.FailureEventDetails{}
	if fl.Name != "" {
		d.Error = ptr(fl.Name)
	}
	if fl.HasCause && fl.Cause != "" {
		// AWS writes no empty cause in an event (a timed-out task's
		// failure has one in its error output only).
		d.Cause = ptr(fl.Cause)
	}
	return d
}

func ptr[T any](v T) *T { return &v }

func asFailure(err error, s *asl.State, enteredID int64) *failure.Failure {
	return StateFailure(err, s, enteredID)
}

// StateFailure turns an evaluation error inside state s (entered at event
// enteredID) into the failure AWS reports: States.Runtime and
// States.QueryEvaluationError causes name the state.
func StateFailure(err error, s *asl.State, enteredID int64) *failure.Failure {
	var fl *failure.Failure
	var be *budget.Error
	switch {
	case errors.As(err, &fl):
	case errors.As(err, &be) && be.Limit == "bytes":
		return failure.New(failure.DataLimitExceeded, fmt.Sprintf(
			"The state '%s' (entered at the event id #%d) went past a limit: %s", s.Name, enteredID, err.Error()))
	default:
		fl = failure.New(failure.Runtime, err.Error())
	}
	switch fl.Name {
	case failure.Runtime, failure.QueryEvaluationError:
		out := failure.New(fl.Name, fmt.Sprintf(
			"An error occurred while executing the state '%s' (entered at the event id #%d). %s",
			s.Name, enteredID, fl.Cause))
		out.Location = fl.Location
		return out
	}
	return fl
}

func plainToken(arn, id string) string {
	sum := sha256.Sum256([]byte(arn + "\x00" + id))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
