package workflowtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"stepwise/asl"
	"stepwise/history"
	"stepwise/jsonvalue"
)

// Source is an execution as the Step Functions API describes it, what a
// recording is made of: DescribeStateMachineForExecution's name and
// definition, the execution's name and its whole history
// (GetExecutionHistory, every page, oldest first), and the histories of
// the child executions of its distributed Maps' map runs.
type Source struct {
	StateMachineName string
	// Definition is the definition the execution ran with.
	Definition    string
	ExecutionName string
	Events        []*history.Event
	Children      [][]*history.Event
	// Run is the run of a redriven execution to record: 1 for the run
	// before its first redrive, 2 for the one its first redrive made...;
	// 0 for the latest.
	Run int
}

// Runs is how many runs a history holds: one, and one more for each
// redrive.
func Runs(events []*history.Event) int {
	n := 1
	for _, ev := range events {
		if ev.Type == history.EventExecutionRedriven {
			n++
		}
	}
	return n
}

// upToRun is a history up to the end of its run n (n ≥ 1), and the run
// of each of its events.
func upToRun(events []*history.Event, n int) ([]*history.Event, map[int64]int) {
	runOf := make(map[int64]int, len(events))
	run := 1
	for i, ev := range events {
		if ev.Type == history.EventExecutionRedriven {
			if run == n {
				return events[:i], runOf
			}
			run++
		}
		runOf[ev.ID] = run
	}
	return events, runOf
}

// RecordedRun is the run Record records of a source: its Run, or the
// latest; and how many runs it has.
func RecordedRun(src *Source) (run, runs int) {
	runs = Runs(src.Events)
	if src.Run == 0 {
		return runs, runs
	}
	return src.Run, runs
}

// Record makes a test file (JSON, in `stepwise test`'s format, the
// definition inline) of an execution: one case named after the
// execution, with its input, its start, every task's result or error
// recorded in "mocks" with the input it was given ("Input", so that
// concurrent iterations get their own answers), and as expectations the
// status, the output (or error and cause) and the path it took. A Task
// state's tasks are recorded in the order they ended: a retried task's
// errors come before its success. Tasks that waited for a callback
// (.waitForTaskToken, activities) are recorded with the answer they got,
// and a nested execution (states:startExecution.sync) with its result: a
// replay does not run it again. Of an execution that was redriven, its
// latest run is recorded, or the one src.Run names: the execution as it
// stood at that run's end, whose replay runs once what the runs ran (a
// task a redrive ran again keeps only its later result); the case's name
// then says which run ("night-1, run 2 of 2"). The items a distributed Map's
// ItemReader read are in no history and are not recorded.
func Record(src *Source) ([]byte, error) {
	def, err := jsonvalue.Parse([]byte(src.Definition))
	if err != nil {
		return nil, fmt.Errorf("the definition the execution ran with is not JSON: %v", err)
	}
	m, diags := asl.Parse([]byte(src.Definition))
	if m == nil {
		return nil, fmt.Errorf("the definition the execution ran with is not valid: %v", diags)
	}
	run, runs := RecordedRun(src)
	if run < 1 || run > runs {
		return nil, fmt.Errorf("the execution has %d run(s): there is no run %d", runs, run)
	}
	events, runOf := upToRun(src.Events, run)
	if len(events) == 0 || events[0].ExecutionStartedEventDetails == nil {
		return nil, fmt.Errorf("the history does not start with ExecutionStarted")
	}
	started := events[0]
	input, err := jsonvalue.Parse([]byte(started.ExecutionStartedEventDetails.Input))
	if err != nil {
		return nil, fmt.Errorf("the execution's input is not JSON: %v", err)
	}

	mocks := jsonvalue.NewObject(0)
	all := allStates(m)
	if err := recordTasks(mocks, events, runOf, all); err != nil {
		return nil, err
	}
	for _, h := range src.Children {
		// A child of the first run as it was then; of a later one, with
		// its own redrives (a redriven map run's).
		childRun := Runs(h)
		if run == 1 {
			childRun = 1
		}
		h, childRuns := upToRun(h, childRun)
		if err := recordTasks(mocks, h, childRuns, all); err != nil {
			return nil, err
		}
	}

	expect := jsonvalue.NewObject(0)
	last := events[len(events)-1]
	switch last.Type {
	case history.EventExecutionSucceeded:
		expect.Set("status", string(history.StatusSucceeded))
		d := last.ExecutionSucceededEventDetails
		if d == nil {
			return nil, fmt.Errorf("event %d (%s) has no output", last.ID, last.Type)
		}
		out, err := jsonvalue.Parse([]byte(d.Output))
		if err != nil {
			return nil, fmt.Errorf("the execution's output is not JSON: %v", err)
		}
		expect.Set("output", out)
	case history.EventExecutionAborted:
		return nil, fmt.Errorf("the execution was stopped (aborted): a replay cannot stop where it was stopped")
	case history.EventExecutionFailed, history.EventExecutionTimedOut:
		status, d := history.StatusFailed, last.ExecutionFailedEventDetails
		if last.Type == history.EventExecutionTimedOut {
			status, d = history.StatusTimedOut, last.ExecutionTimedOutEventDetails
		}
		expect.Set("status", string(status))
		if d != nil && d.Error != nil {
			expect.Set("error", *d.Error)
		}
		if d != nil && d.Cause != nil {
			expect.Set("cause", *d.Cause)
		}
	default:
		return nil, fmt.Errorf("the execution has not ended (its last event is %s): record it once it has", last.Type)
	}
	expect.Set("path", recordedPath(events, runOf, m))

	c := jsonvalue.NewObject(0)
	name := src.ExecutionName
	if name == "" {
		name = "recorded"
	}
	if runs > 1 {
		name = fmt.Sprintf("%s, run %d of %d", name, run, runs)
	}
	c.Set("name", name)
	c.Set("input", input)
	c.Set("startTime", started.Timestamp.UTC().Format(time.RFC3339Nano))
	if mocks.Len() > 0 {
		c.Set("mocks", mocks)
	}
	c.Set("expect", expect)

	f := jsonvalue.NewObject(0)
	sm := src.StateMachineName
	if sm == "" {
		sm = "recorded"
	}
	f.Set("stateMachine", sm)
	f.Set("cases", []any{c})
	f.Set("definition", def)
	var b bytes.Buffer
	if err := json.Indent(&b, jsonvalue.Marshal(f), "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// recordedPath is the top-level states a replay enters: those the runs
// entered, less a state an earlier run left failed (entered, never
// exited) that a later run entered again.
func recordedPath(events []*history.Event, runOf map[int64]int, m *asl.StateMachine) []any {
	type entry struct {
		name   string
		run    int
		exited bool
	}
	var entries []*entry
	open := map[string]*entry{}
	for _, ev := range events {
		if d := ev.StateEnteredEventDetails; d != nil && m.States[d.Name] != nil {
			e := &entry{name: d.Name, run: runOf[ev.ID]}
			entries = append(entries, e)
			open[d.Name] = e
		}
		if d := ev.StateExitedEventDetails; d != nil && open[d.Name] != nil {
			open[d.Name].exited = true
		}
	}
	path := []any{}
	for i, e := range entries {
		again := false
		for _, later := range entries[i+1:] {
			if later.name == e.name && later.run > e.run {
				again = true
				break
			}
		}
		if !e.exited && again {
			continue
		}
		path = append(path, e.name)
	}
	return path
}

// recordTasks adds the results of a history's tasks to mocks, by state,
// in the order they ended, each with its input. Of a history of several
// runs (runOf, each event's), a task that failed or was left running in
// a run that a later run scheduled again (the same state and input) is
// not recorded: its later result is.
func recordTasks(mocks *jsonvalue.Object, events []*history.Event, runOf map[int64]int, all map[string]*asl.State) error {
	byID := make(map[int64]*history.Event, len(events))
	for _, ev := range events {
		byID[ev.ID] = ev
	}
	// back follows the events' links from ev to the first event that ok
	// accepts.
	back := func(ev *history.Event, ok func(*history.Event) bool) *history.Event {
		for seen := 0; ev != nil && seen < len(events); seen++ {
			if ok(ev) {
				return ev
			}
			ev = byID[ev.PreviousEventID]
		}
		return nil
	}
	type result struct {
		entered, sched *history.Event
		resp           *jsonvalue.Object
		failed         bool // a Throw or Pending
	}
	var results []result
	ended := map[int64]bool{}
	for _, ev := range events {
		resp := taskResponse(ev)
		if resp == nil {
			continue
		}
		sched := back(ev, func(e *history.Event) bool { return scheduledInput(e) != nil })
		if sched == nil {
			return fmt.Errorf("event %d (%s) follows no scheduled task", ev.ID, ev.Type)
		}
		entered := back(sched, func(e *history.Event) bool { return e.StateEnteredEventDetails != nil })
		if entered == nil {
			return fmt.Errorf("event %d (%s) follows no state entered", sched.ID, sched.Type)
		}
		ended[sched.ID] = true
		_, threw := resp.Get("Throw")
		results = append(results, result{entered, sched, resp, threw})
	}
	// Tasks still running when the execution ended (another iteration's
	// failure ended it) never end in a replay either.
	for _, ev := range events {
		if scheduledInput(ev) == nil || ended[ev.ID] {
			continue
		}
		entered := back(ev, func(e *history.Event) bool { return e.StateEnteredEventDetails != nil })
		if entered == nil {
			return fmt.Errorf("event %d (%s) follows no state entered", ev.ID, ev.Type)
		}
		pending := jsonvalue.NewObject(1)
		pending.Set("Pending", true)
		results = append(results, result{entered, ev, pending, true})
	}
	// runAgain: a later run scheduled the task again.
	runAgain := func(r result) bool {
		for _, o := range results {
			if runOf[o.sched.ID] > runOf[r.sched.ID] &&
				o.entered.StateEnteredEventDetails.Name == r.entered.StateEnteredEventDetails.Name &&
				*scheduledInput(o.sched) == *scheduledInput(r.sched) {
				return true
			}
		}
		return false
	}
	for _, r := range results {
		if r.failed && runAgain(r) {
			continue
		}
		if err := addResponse(mocks, r.entered, r.sched, r.resp, all); err != nil {
			return err
		}
	}
	return nil
}

// addResponse adds a task's response to its state's in mocks, with its
// input.
func addResponse(mocks *jsonvalue.Object, entered, sched *history.Event, resp *jsonvalue.Object, all map[string]*asl.State) error {
	state := entered.StateEnteredEventDetails.Name
	if s := all[state]; s == nil || (s.Type != asl.TypeTask && s.Type != asl.TypeMap) {
		return fmt.Errorf("event %d (%s) is a task of %q, not a Task state of the definition", sched.ID, sched.Type, state)
	}
	in, err := jsonvalue.Parse([]byte(*scheduledInput(sched)))
	if err != nil {
		return fmt.Errorf("event %d (%s): the task's input is not JSON: %v", sched.ID, sched.Type, err)
	}
	r := jsonvalue.NewObject(0)
	r.Set("Input", in)
	for k, v := range resp.All() {
		r.Set(k, v)
	}
	list, _ := mocks.Get(state)
	arr, _ := list.([]any)
	mocks.Set(state, append(arr, r))
	return nil
}

// scheduledInput is the input of a task's scheduled event, nil for
// another event.
func scheduledInput(ev *history.Event) *string {
	switch {
	case ev.TaskScheduledEventDetails != nil:
		return &ev.TaskScheduledEventDetails.Parameters
	case ev.LambdaFunctionScheduledEventDetails != nil:
		return &ev.LambdaFunctionScheduledEventDetails.Input
	case ev.ActivityScheduledEventDetails != nil:
		return &ev.ActivityScheduledEventDetails.Input
	}
	return nil
}

// taskResponse is the mocked response a task's last event makes
// ({"Return": ...} or {"Throw": ...}), nil for another event.
func taskResponse(ev *history.Event) *jsonvalue.Object {
	var out *string
	var fail *history.FailureEventDetails
	task := func(d *history.TaskEventDetails) *history.TaskEventDetails {
		if d == nil {
			return &history.TaskEventDetails{}
		}
		return d
	}
	output := func(d *history.OutputEventDetails) *string {
		if d == nil {
			return new(string)
		}
		return &d.Output
	}
	switch ev.Type {
	case history.EventTaskSucceeded:
		out = task(ev.TaskSucceededEventDetails).Output
		if out == nil {
			out = new(string)
		}
	case history.EventTaskFailed, history.EventTaskStartFailed, history.EventTaskSubmitFailed:
		// (AWS's histories: a task that failed to start or be submitted
		// carries its error as a failed one does.)
		d := task(ev.TaskFailedEventDetails)
		fail = &history.FailureEventDetails{Error: d.Error, Cause: d.Cause}
	case history.EventTaskTimedOut:
		d := task(ev.TaskTimedOutEventDetails)
		fail = &history.FailureEventDetails{Error: d.Error, Cause: d.Cause}
	case history.EventLambdaFunctionSucceeded:
		out = output(ev.LambdaFunctionSucceededEventDetails)
	case history.EventActivitySucceeded:
		out = output(ev.ActivitySucceededEventDetails)
	case history.EventLambdaFunctionFailed, "LambdaFunctionStartFailed", "LambdaFunctionScheduleFailed":
		fail = ev.LambdaFunctionFailedEventDetails
	case history.EventLambdaFunctionTimedOut:
		fail = ev.LambdaFunctionTimedOutEventDetails
	case history.EventActivityFailed, "ActivityScheduleFailed":
		fail = ev.ActivityFailedEventDetails
	case history.EventActivityTimedOut:
		fail = ev.ActivityTimedOutEventDetails
	default:
		return nil
	}
	r := jsonvalue.NewObject(0)
	if out != nil {
		var v any
		if strings.TrimSpace(*out) != "" {
			pv, err := jsonvalue.Parse([]byte(*out))
			if err != nil {
				pv = *out
			}
			v = pv
		}
		r.Set("Return", v)
		return r
	}
	t := jsonvalue.NewObject(0)
	if fail != nil && fail.Error != nil {
		t.Set("Error", *fail.Error)
	}
	if fail != nil && fail.Cause != nil {
		t.Set("Cause", *fail.Cause)
	}
	r.Set("Throw", t)
	return r
}

// ParseEvent reads a history event as GetExecutionHistory writes it.
func ParseEvent(raw []byte) (*history.Event, error) {
	type plain history.Event
	var e struct {
		Timestamp history.EpochTime `json:"timestamp"`
		plain
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("history event: %v", err)
	}
	ev := history.Event(e.plain)
	ev.Timestamp = time.Time(e.Timestamp)
	return &ev, nil
}
