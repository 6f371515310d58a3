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
// replay does not run it again. Of an execution that was redriven, the
// run up to the first redrive is recorded. The items a distributed Map's
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
	events := beforeRedrive(src.Events)
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
	for _, h := range append([][]*history.Event{events}, src.Children...) {
		h = beforeRedrive(h)
		if err := recordTasks(mocks, h, all); err != nil {
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
	path := []any{}
	for _, ev := range events {
		if d := ev.StateEnteredEventDetails; d != nil && m.States[d.Name] != nil {
			path = append(path, d.Name)
		}
	}
	expect.Set("path", path)

	c := jsonvalue.NewObject(0)
	name := src.ExecutionName
	if name == "" {
		name = "recorded"
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

// recordTasks adds the results of a history's tasks to mocks, by state,
// in the order they ended, each with its input.
func recordTasks(mocks *jsonvalue.Object, events []*history.Event, all map[string]*asl.State) error {
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
		if err := addResponse(mocks, entered, sched, resp, all); err != nil {
			return err
		}
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
		if err := addResponse(mocks, entered, ev, pending, all); err != nil {
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

// beforeRedrive is a history up to its first redrive: what a recording
// holds of an execution (or a child execution) that was redriven.
func beforeRedrive(events []*history.Event) []*history.Event {
	for i, ev := range events {
		if ev.Type == history.EventExecutionRedriven {
			return events[:i]
		}
	}
	return events
}
