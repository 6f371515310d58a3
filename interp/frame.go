package interp

import (
	"fmt"
	"time"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
)

type frameKind int

const (
	rootFrame frameKind = iota
	branchFrame
	iterationFrame
)

type waitKind int

const (
	waitNone waitKind = iota
	waitTask
	waitTimer // a Wait state
	waitRetry // back-off before a retry
	waitChildren
	waitReader // a Map state's ItemReader
	waitMapRun // a distributed Map's map run
)

// frame runs one state machine: the execution's, a Parallel branch's or a
// Map iteration's.
type frame struct {
	parent  *frame
	kind    frameKind
	index   int // branch or item index
	machine *asl.StateMachine
	// taskFailure is set while the failure being handled is one a task
	// reported (a TaskFailed event): States.ALL catches every such failure.
	taskFailure bool
	vars        *scope
	varsGet     func(string) (any, bool) // vars.get, made once
	ctxFunc     func() any               // builds the context object, made once
	last        int64                    // the last history event this frame wrote

	// The state being run.
	state     *asl.State
	rawInput  any
	effInput  any // after InputPath
	enteredID int64
	// enteredPrev is the event before the entered event.
	enteredPrev int64
	enteredAt   time.Time
	retries     []int64 // attempts used, per retrier
	retryCount  int
	wait        waitKind
	waitID      string
	timeoutID   string // task timeout timer
	beatID      string // task heartbeat timer
	beatSecs    int64
	token       string // the running task's token
	started     bool   // the running task's started event is written
	submitted   bool   // and its submitted event
	// evalReported: the EvaluationFailed event of the failure being
	// handled is written already.
	evalReported bool

	// What runs next: set when a state completes with Next (or a Catch).
	next      string
	nextInput any
	inputText string // the text of nextInput as the client sent it, if known
	// inputOurs says inputText is the previous state's output as this
	// execution wrote it (not the client's text).
	inputOurs bool
	// rawText is the text of rawInput as written out by this execution
	// for its entered event; "" when the text came from elsewhere (the
	// client's), so an output that is the input itself is written again.
	rawText    string
	outputText string // the text of the output the frame finishes with, while it does (see exitWithOutput)

	// Children of a Parallel or Map state.
	children  []*frame
	items     []any
	results   []any
	startedID int64
	nextChild int
	running   int
	maxConc   int // 0: unlimited
	failed    int
	tol       maprun.Tolerance
	childFail *failure.Failure
	failedAt  int64 // the event that failed childFail's child: what the aborted events follow
	mapRun    bool  // distributed Map
	// mapReq is a distributed Map's map run, from when it is asked for
	// until it succeeds: a redrive of a Map whose run failed or was
	// stopped redrives the run.
	mapReq *MapRunRequest
	// liveSel is an inline Map's ItemSelector (frame.selector).
	liveSel   *itemSelector
	mapRunArn string
	// readItems are the items a Map state's ItemReader read, once it has
	// (the state then runs again from its start, with them).
	readItems []any
	readDone  bool
	// readSpooled says the ItemReader spooled its items (readCount of
	// them) for the map run to read, instead of answering with them.
	readSpooled bool
	readCount   int64

	// parked: the frame waits before entering its next state (f.next),
	// held or suspended (see operator.go).
	parked bool

	// onDone, when set, is told of the frame's end instead of its parent
	// (a state a rerun runs on its own).
	onDone func(f *frame)

	done    bool
	aborted bool
	output  any
	failure *failure.Failure
}

// run executes states until the frame blocks or ends.
func (f *frame) run(x *Execution) {
	for f.next != "" && !f.done && !f.aborted && x.Status == history.StatusRunning {
		if (x.held != nil || x.suspended) && x.park(f) {
			return
		}
		name, input := f.next, f.nextInput
		f.next, f.nextInput = "", nil
		f.enterState(x, name, input)
	}
}

// enterState enters the named state with input and runs it as far as it
// goes without the outside world.
func (f *frame) enterState(x *Execution, name string, input any) {
	if f.enter(x, name, input) {
		f.exec(x)
	}
}

// enter writes the entered event of the named state and makes it the
// frame's current state; false when the history is full (the execution
// failed).
func (f *frame) enter(x *Execution, name string, input any) bool {
	if x.historyFull() {
		return false
	}
	s := f.machine.States[name]
	f.state = s
	f.rawInput = input
	if f.parent == nil && f.onDone == nil {
		if x.rootInputs == nil {
			x.rootInputs = make(map[string]any, min(len(f.machine.States), maxPresized)) // never grown for a short machine
		}
		x.rootInputs[name] = input
	}
	f.effInput = nil
	f.enteredAt = x.now
	f.retryCount = 0
	f.readItems, f.readDone = nil, false
	if len(s.Retry) > 0 {
		f.retries = make([]int64, len(s.Retry))
	} else {
		f.retries = nil
	}
	if in := x.Opts.Inspect; in != nil && in.RetriesMade > 0 && x.nextEventID == 2 {
		// The first state, retried before the inspection began.
		f.retryCount = int(in.RetriesMade)
		for i := range f.retries {
			f.retries[i] = in.RetriesMade
		}
	}
	text, ours := f.inputText, f.inputOurs
	if text == "" {
		text, ours = x.text(input), true
	}
	f.inputText, f.inputOurs, f.rawText = "", false, ""
	if ours {
		f.rawText = text
	}
	f.enteredPrev = f.last
	ev := x.newEvent(f, enteredType(s.Type))
	if len(x.enteredSlab) == 0 {
		x.enteredSlab = takeBlock(x, slabEntered, 32, &enteredBlocks, &x.first.entered)
	}
	d := &x.enteredSlab[0]
	x.enteredSlab = x.enteredSlab[1:]
	d.Name, d.Input = s.Name, text
	ev.StateEnteredEventDetails = d
	f.enteredID = ev.ID
	return true
}

// transition moves on after the current state produced output: to Next, or
// the frame ends.
func (f *frame) transition(x *Execution, next string, output any) {
	if next != "" {
		f.next, f.nextInput = next, output
		return
	}
	f.finish(x, output, nil)
}

// finish ends the frame with an output or a failure.
func (f *frame) finish(x *Execution, output any, fl *failure.Failure) {
	f.releaseVars(x)
	f.done = true
	f.output = output
	f.failure = fl
	f.wait = waitNone
	if f.onDone != nil {
		f.onDone(f)
		return
	}
	if f.parent == nil {
		if fl != nil {
			x.fail(f, fl)
		} else {
			x.succeed(f, output)
		}
		return
	}
	f.parent.childDone(x, f)
}

// exit completes the current state with its result: ResultSelector (when
// selector), Assign, ResultPath, OutputPath, the size limit, the exit event
// and the transition.
func (f *frame) exit(x *Execution, result any, selector bool) {
	s := f.state
	if s.QueryLanguage == asl.JSONata {
		f.exitJSONata(x, s.JSONata, result, selector, s.Next)
		return
	}
	env := x.env(f, nil)
	var err error
	if selector && s.ResultSelector != nil {
		if result, err = dataflow.Template(s.ResultSelector, result, env); err != nil {
			f.stateFailed(x, asFailure(err, s, f.enteredID))
			return
		}
	}
	f.note(x, AfterResultSelector, result)
	assigned, err := f.assign(x, s.Assign, result)
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	out, err := dataflow.Merge(s.ResultPath, f.rawInput, result)
	if err == nil {
		f.note(x, AfterResultPath, out)
		out, err = dataflow.Select(s.OutputPath, out, env)
	}
	if err != nil {
		f.stateFailed(x, asFailure(err, s, f.enteredID))
		return
	}
	f.exitWithOutput(x, out, assigned, s.Next)
}

// exitWithOutput writes the exit event for output, sets the assigned
// variables and moves to next ("" ends the frame).
func (f *frame) exitWithOutput(x *Execution, out any, assigned *jsonvalue.Object, next string) {
	s := f.state
	var text string
	var ok bool
	if f.rawText != "" && sameObject(out, f.rawInput) {
		// The state's output is its input (a Choice, a Succeed, a Pass
		// without parameters): values are never changed in place, so
		// its text is the one the entered event wrote.
		text, ok = f.rawText, len(f.rawText) <= x.Opts.PayloadLimit
	} else {
		text, ok = x.textLimit(out, x.Opts.PayloadLimit)
	}
	if !ok {
		f.stateFailed(x, dataLimit(s))
		return
	}
	if len(x.exitedSlab) == 0 {
		x.exitedSlab = takeBlock(x, slabExited, 32, &exitedBlocks, &x.first.exited)
	}
	d := &x.exitedSlab[0]
	x.exitedSlab = x.exitedSlab[1:]
	d.Name, d.Output = s.Name, text
	if assigned.Len() > 0 {
		d.AssignedVariables = make(map[string]string, assigned.Len())
		total := 0
		for k, v := range assigned.All() {
			vt, ok := x.textLimit(v, MaxVariableSize)
			if !ok {
				f.stateFailed(x, variableLimit(s, fmt.Sprintf("The value of the variable '%s' exceeds the maximum size of %d bytes.", k, MaxVariableSize)))
				return
			}
			total += len(vt)
			d.AssignedVariables[k] = vt
		}
		if total > MaxVariableSize {
			f.stateFailed(x, variableLimit(s, fmt.Sprintf("The variables assigned by the state exceed the maximum combined size of %d bytes.", MaxVariableSize)))
			return
		}
		grow := 0
		for k, vt := range d.AssignedVariables {
			grow += len(vt) - f.vars.sizes[k]
		}
		if x.varBytes+grow > MaxExecutionVariables {
			f.stateFailed(x, variableLimit(s, fmt.Sprintf("The variables of the execution would exceed the maximum total size of %d bytes.", MaxExecutionVariables)))
			return
		}
		for k, v := range assigned.All() {
			x.varBytes += f.vars.set(k, v, len(d.AssignedVariables[k]))
		}
		d.AssignedVariablesDetails = &history.DataDetails{}
	}
	if ins := x.inspector(); ins != nil {
		ins.Exit(s, text, assigned, next)
	}
	x.newEvent(f, exitedType(s.Type)).StateExitedEventDetails = d
	if !x.exited[s.Name] {
		if x.exited == nil {
			x.exited = make(map[string]bool, min(len(x.Machine.States), maxPresized))
		}
		x.exited[s.Name] = true
	}
	if next == "" {
		f.outputText = text // the frame's output, while it finishes
	}
	f.transition(x, next, out)
	f.outputText = ""
	if next != "" {
		f.inputText, f.inputOurs = text, true // the next state's input is this output
	}
}

// cancel stops the frame and everything under it: running children are
// aborted, awaited tasks and timers are cancelled, and a state still in
// progress writes its aborted event (TaskStateAborted, WaitStateAborted,
// ParallelStateAborted, MapStateAborted), innermost first, when link is
// not zero: for a Parallel branch or Map iteration stopped because a
// sibling failed, each aborted event follows link, the event that failed
// the sibling, as AWS links them (a stopped execution writes none).
func (f *frame) cancel(x *Execution, link int64) {
	if f.done || f.aborted {
		return
	}
	f.aborted = true
	f.releaseVars(x)
	f.abortChildren(x, link)
	if typ, ok := abortedEvent(f); ok && link != 0 {
		x.emitLinked(f, history.Event{Type: typ, PreviousEventID: link})
	}
	f.cancelWaits(x)
}

// abortedEvent returns the event that says the frame's state was stopped
// while in progress, if it was.
func abortedEvent(f *frame) (history.EventType, bool) {
	if f.state == nil {
		return "", false
	}
	switch f.wait {
	case waitTask, waitRetry:
		switch f.state.Type {
		case asl.TypeTask:
			return history.EventTaskStateAborted, true
		case asl.TypeParallel:
			return history.EventParallelStateAborted, true
		case asl.TypeMap:
			return history.EventMapStateAborted, true
		}
	case waitTimer:
		return history.EventWaitStateAborted, true
	case waitChildren:
		if f.state.Type == asl.TypeMap {
			return history.EventMapStateAborted, true
		}
		return history.EventParallelStateAborted, true
	case waitReader, waitMapRun:
		return history.EventMapStateAborted, true
	}
	return "", false
}

func (f *frame) cancelWaits(x *Execution) {
	if f.waitID != "" {
		if _, ok := x.waiting[f.waitID]; ok {
			delete(x.waiting, f.waitID)
			kind := CancelTimer
			if f.wait == waitTask || f.wait == waitReader || f.wait == waitMapRun {
				kind = CancelTask
			}
			x.cmds = append(x.cmds, Command{Kind: kind, ID: f.waitID})
		}
		f.waitID = ""
	}
	f.cancelTimer(x, &f.timeoutID)
	f.cancelTimer(x, &f.beatID)
	f.wait = waitNone
}

// cancelTimer cancels the timer *id, if armed, and clears it.
func (f *frame) cancelTimer(x *Execution, id *string) {
	if *id == "" {
		return
	}
	if _, ok := x.waiting[*id]; ok {
		delete(x.waiting, *id)
		x.cmds = append(x.cmds, Command{Kind: CancelTimer, ID: *id})
	}
	*id = ""
}

// block makes the frame wait for the task or timer id.
func (f *frame) block(x *Execution, kind waitKind, id string) {
	f.wait = kind
	f.waitID = id
	x.waiting[id] = f
}

// revive makes a frame that failed or was aborted run again from where it
// stopped. A Parallel or Map state that failed because of its children
// revives only the children that did not succeed and starts those not yet
// started; any other state is entered again with the input it had.
func (f *frame) revive(x *Execution) {
	if f.parked {
		// Stopped while parked before its next state: it goes on to it
		// (and parks again if it is still held).
		f.parked, f.done, f.aborted = false, false, false
		x.push(func() { f.run(x) })
		return
	}
	if f.state == nil {
		return
	}
	failedChildren := f.children != nil && (f.state.Type == asl.TypeParallel || f.state.Type == asl.TypeMap)
	f.done, f.aborted, f.failure, f.output = false, false, nil, nil
	f.wait, f.waitID, f.timeoutID, f.beatID = waitNone, "", "", ""
	if len(f.state.Retry) > 0 {
		f.retries = make([]int64, len(f.state.Retry))
	}
	if f.mapReq != nil {
		// A distributed Map whose map run failed or was stopped.
		f.reviveMapRun(x)
		return
	}
	if !failedChildren {
		f.next, f.nextInput = f.state.Name, f.rawInput
		x.push(func() { f.run(x) })
		return
	}
	f.childFail = nil
	f.running = 0
	f.failed = 0
	f.wait = waitChildren
	x.push(func() { f.pump(x) })
	for _, c := range f.children {
		if c.done && c.failure == nil {
			continue
		}
		c.last = f.last
		if f.state.Type == asl.TypeMap {
			c.last = x.emit(f, history.Event{Type: history.EventMapIterationStarted,
				MapIterationStartedEventDetails: &history.MapIterationEventDetails{Name: f.state.Name, Index: c.index}})
		}
		f.running++
		c.revive(x)
	}
}

// awaits reports whether ev is of the kind the frame waits for under its
// id: task events for the running task, timer events for its timers.
func (f *frame) awaits(x *Execution, ev Event) bool {
	if f.wait == waitReader || f.wait == waitMapRun {
		return ev.ID == f.waitID && (ev.Kind == TaskSucceeded || ev.Kind == TaskFailed)
	}
	task := ev.ID == f.waitID && f.wait == waitTask
	switch ev.Kind {
	case TaskSucceeded, TaskFailed, TaskHeartbeat, TaskStarted, TaskSubmitted, TaskReleased:
		return task
	case TimerFired:
		return !task && ev.ID != ""
	}
	return false
}

// resume handles an outside event for this frame.
func (f *frame) resume(x *Execution, ev Event) {
	if f.done || f.aborted {
		return
	}
	switch {
	case ev.Kind == TaskHeartbeat:
		f.armHeartbeat(x)
		return
	case ev.Kind == TaskStarted:
		f.taskStarted(x, ev.WorkerName)
		return
	case ev.Kind == TaskReleased:
		f.taskReleased(x)
		return
	case ev.Kind == TaskSubmitted:
		f.taskSubmitted(x, ev.Output)
		return
	case ev.ID == f.timeoutID:
		f.timeoutID = ""
		f.taskTimedOut(x, failure.Timeout)
	case ev.ID == f.beatID:
		f.beatID = ""
		// An activity's worker misses its heartbeat: States.HeartbeatTimeout.
		// A service integration's task (a .waitForTaskToken callback) that
		// hears nothing in time times out as AWS records it:
		// States.Timeout.
		name := failure.Timeout
		if IsActivity(f.state.Resource) {
			name = failure.HeartbeatTimeout
		}
		f.taskTimedOut(x, name)
	case ev.ID == f.waitID:
		f.waitID = ""
		kind := f.wait
		f.wait = waitNone
		switch kind {
		case waitTask:
			f.taskDone(x, ev)
		case waitTimer:
			f.waitDone(x)
		case waitRetry:
			f.retryNow(x)
		case waitReader:
			f.readerDone(x, ev)
		case waitMapRun:
			f.mapRunDone(x, ev)
		}
	}
	x.push(func() { f.run(x) })
}

// Variable limits: one variable, and all a state assigns at once, may
// take MaxVariableSize bytes as JSON text; the variables of an execution
// together MaxExecutionVariables.
const (
	MaxVariableSize       = 256 * 1024
	MaxExecutionVariables = 10 * 1024 * 1024
)

// variableLimit is the failure of a state whose Assign exceeds a limit.
func variableLimit(s *asl.State, msg string) *failure.Failure {
	return failure.Newf(failure.DataLimitExceeded, "The state '%s' cannot assign its variables: %s", s.Name, msg)
}

// releaseVars stops counting the variables of a branch or iteration frame
// that ends: its scope goes with it.
func (f *frame) releaseVars(x *Execution) {
	if f.parent == nil || f.vars == nil {
		return
	}
	x.varBytes -= f.vars.bytes
	f.vars.bytes = 0
}

// abortChildren cancels the children still running; with a link (see
// cancel), an inline Map writes MapIterationAborted for each, before the
// events of the states it stops, as AWS orders them.
func (f *frame) abortChildren(x *Execution, link int64) {
	for _, c := range f.children {
		if c.done || c.aborted {
			continue
		}
		if link != 0 && f.state.Type == asl.TypeMap {
			x.emitLinked(f, history.Event{Type: history.EventMapIterationAborted, PreviousEventID: link,
				MapIterationAbortedEventDetails: &history.MapIterationEventDetails{Name: f.state.Name, Index: c.index}})
		}
		c.cancel(x, link)
	}
}

// sameObject says whether a and b are the same object (not equal ones).
func sameObject(a, b any) bool {
	oa, ok := a.(*jsonvalue.Object)
	if !ok || oa == nil {
		return false
	}
	ob, ok := b.(*jsonvalue.Object)
	return ok && oa == ob
}

// maxPresized bounds the entries an execution's maps of its states are
// first made for.
const maxPresized = 64
