package workflowtest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// night is a job net in small: a retried task, a Choice, a Parallel, an
// inline Map whose iterations run concurrently, a callback, a nested
// execution, a distributed Map and a Wait of three days.
const night = `{
  "StartAt": "Load",
  "States": {
    "Load": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:getItem",
      "Parameters": {"Key.$": "$.night"}, "ResultPath": "$.loaded",
      "Retry": [{"ErrorEquals": ["Busy"], "IntervalSeconds": 5}], "Next": "Enough"},
    "Enough": {"Type": "Choice", "Choices": [{"Variable": "$.loaded.count", "NumericGreaterThan": 1, "Next": "Both"}], "Default": "Nothing"},
    "Nothing": {"Type": "Succeed"},
    "Both": {"Type": "Parallel", "ResultPath": "$.both", "Next": "Jobs", "Branches": [
      {"StartAt": "Left", "States": {"Left": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"side": "left"}, "End": true}}},
      {"StartAt": "Right", "States": {"Right": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"side": "right"}, "End": true}}}]},
    "Jobs": {"Type": "Map", "ItemsPath": "$.loaded.jobs", "ResultPath": "$.ran", "Next": "Confirm",
      "ItemProcessor": {"StartAt": "Run", "States": {
        "Run": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"job.$": "$"}, "End": true}}}},
    "Confirm": {"Type": "Task", "Resource": "arn:aws:states:::events:putEvents.waitForTaskToken",
      "Parameters": {"Detail": {"token.$": "$$.Task.Token"}}, "ResultPath": "$.ack", "Next": "Sleep"},
    "Sleep": {"Type": "Wait", "Seconds": 259200, "Next": "Report"},
    "Report": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
      "Parameters": {"Input.$": "$.ran"}, "ResultSelector": {"report.$": "$.Output"}, "ResultPath": "$.report", "Next": "Fan"},
    "Fan": {"Type": "Map", "ItemsPath": "$.loaded.jobs", "ResultPath": "$.fanned", "Next": "Done",
      "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Child", "States": {
        "Child": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"child.$": "$"}, "End": true}}}},
    "Done": {"Type": "Pass", "Parameters": {"ran.$": "$.ran", "report.$": "$.report", "fanned.$": "$.fanned", "ack.$": "$.ack"}, "End": true}
  }
}`

// nightService answers the night's tasks as services would, the first
// Load busy.
func nightService(t *testing.T) interp.Resolver {
	loads := 0
	return interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
		p, _ := req.Parameters.(*jsonvalue.Object)
		switch req.StateName {
		case "Load":
			loads++
			if loads == 1 {
				return nil, &failure.Failure{Name: "Busy", Cause: "try again", HasCause: true}
			}
			return mustParse(`{"count": 3, "jobs": ["a", "b", "c"]}`), nil
		case "Left", "Right":
			side, _ := p.Get("side")
			return mustParse(`{"Payload": "` + side.(string) + ` done"}`), nil
		case "Run":
			job, _ := p.Get("job")
			return mustParse(`{"Payload": {"job": "` + job.(string) + `", "rows": ` + map[string]string{"a": "1", "b": "2", "c": "3"}[job.(string)] + `}}`), nil
		case "Confirm":
			d, _ := p.Get("Detail")
			tok, _ := d.(*jsonvalue.Object).Get("token")
			require.Equal(t, req.Token, tok)
			return mustParse(`{"by": "ada"}`), nil
		case "Report":
			return mustParse(`{"Status": "SUCCEEDED", "Output": {"pages": 2}}`), nil
		case "Child":
			c, _ := p.Get("child")
			return mustParse(`{"Payload": "` + c.(string) + `!"}`), nil
		}
		t.Errorf("unexpected task of %s", req.StateName)
		return nil, failure.New("Unexpected", req.StateName)
	})
}

// recordNight runs the night in process as a server would, and records it
// from its history passed through the API's JSON. The Map's responses
// are recorded in the reverse order, as concurrent iterations may end.
func recordNight(t *testing.T, input string) []byte {
	t.Helper()
	m, diags := asl.Parse([]byte(night))
	require.NotNil(t, m, "%v", diags)
	svc := nightService(t)
	o := (&Exec{Machine: m, StateMachineName: "night", ExecutionName: "2026-11-24", Input: mustParse(input),
		Start: time.Date(2026, 11, 24, 22, 0, 0, 0, time.UTC), Resolver: svc, MaxSteps: 10000}).Run()
	var events []*history.Event
	for _, ev := range o.Events {
		raw, err := json.Marshal(ev)
		require.NoError(t, err)
		back, err := ParseEvent(raw)
		require.NoError(t, err)
		events = append(events, back)
	}
	var children [][]*history.Event
	if o.Status == history.StatusSucceeded {
		// The distributed Map's children, as the map run's executions.
		child, _ := asl.Parse([]byte(`{"StartAt": "Child", "States": {"Child": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"child.$": "$"}, "End": true}}}`))
		for _, item := range []string{"c", "a", "b"} {
			co := (&Exec{Machine: child, StateMachineName: "night-Fan", ExecutionName: item, Input: item,
				Start: time.Date(2026, 11, 27, 22, 0, 0, 0, time.UTC), Resolver: svc, MaxSteps: 100}).Run()
			children = append(children, co.Events)
		}
	}
	data, err := Record(&Source{StateMachineName: "night", Definition: night, ExecutionName: "2026-11-24", Events: events, Children: children})
	require.NoError(t, err)
	v := mustParse(string(data)).(*jsonvalue.Object)
	cases, _ := v.Get("cases")
	c := cases.([]any)[0].(*jsonvalue.Object)
	mocks, _ := c.Get("mocks")
	runs, _ := mocks.(*jsonvalue.Object).Get("Run")
	list := runs.([]any)
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	return jsonvalue.Marshal(v)
}

func TestRecordPassesAsATest(t *testing.T) {
	t.Parallel()
	data := recordNight(t, `{"night": "2026-11-24"}`)
	text := string(data)
	for _, want := range []string{`"Throw":{"Error":"Busy","Cause":"try again"}`, `"startTime":"2026-11-24T22:00:00Z"`,
		`"path":["Load","Enough","Both","Jobs","Confirm","Sleep","Report","Fan","Done"]`, `"Child":[`, `"status":"SUCCEEDED"`} {
		require.Contains(t, text, want)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "night.test.json")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	rep := runFile(t, p)
	require.Len(t, rep.Results, 1)
	require.True(t, rep.Results[0].Passed, "%s\n%s", rep.Results[0].Failure, strings.Join(rep.Results[0].Got, "\n"))

	// The recorded results are the ones used: another answer fails it.
	bad := strings.Replace(text, `"rows":2`, `"rows":20`, 1)
	require.NoError(t, os.WriteFile(p, []byte(bad), 0o644))
	rep = runFile(t, p)
	require.False(t, rep.Results[0].Passed)
	require.Contains(t, rep.Results[0].Failure, `Task state "Report" (resource arn:aws:states:::states:startExecution.sync:2) has no mocked response for its input {"Input":[{"Payload":{"job":"a","rows":1}},{"Payload":{"job":"b","rows":20}}`)
}

func TestRecordAFailure(t *testing.T) {
	t.Parallel()
	m, _ := asl.Parse([]byte(night))
	o := (&Exec{Machine: m, StateMachineName: "night", ExecutionName: "x", Input: mustParse(`{"night": "x"}`), Start: time.Now(), MaxSteps: 100,
		Resolver: interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
			return nil, &failure.Failure{Name: "Gone", Cause: "no table", HasCause: true}
		})}).Run()
	data, err := Record(&Source{Definition: night, Events: o.Events})
	require.NoError(t, err)
	require.Equal(t, history.StatusFailed, o.Status, "%v", o.Error)
	f, err := LoadData("night.test.json", data)
	require.NoError(t, err)
	require.Equal(t, history.StatusFailed, f.Cases[0].Expect.Status)
	require.Equal(t, "Gone", *f.Cases[0].Expect.Error)
	require.Equal(t, []string{"Load"}, f.Cases[0].Expect.Path)
	res := (&Runner{}).Run(f, f.Cases[0])
	require.True(t, res.Passed, res.Failure)
}

// replayNight replays the recorded night on an edited definition.
func replayNight(t *testing.T, input string, edit func(string) string) *ReplayResult {
	t.Helper()
	f, err := LoadData("night.test.json", recordNight(t, input))
	require.NoError(t, err)
	edited, diags := asl.Parse([]byte(edit(night)))
	require.NotNil(t, edited, "%v", diags)
	res, err := Replay(f, f.Cases[0], edited)
	require.NoError(t, err)
	return res
}

func TestReplayUnchanged(t *testing.T) {
	t.Parallel()
	res := replayNight(t, `{"night": "2026-11-24"}`, func(s string) string { return s })
	require.Nil(t, res.Divergence, "%v", res.Divergence)
}

func TestReplayEditedChoice(t *testing.T) {
	t.Parallel()
	res := replayNight(t, `{"night": "2026-11-24"}`, func(s string) string {
		return strings.Replace(s, `"NumericGreaterThan": 1`, `"NumericGreaterThan": 5`, 1)
	})
	d := res.Divergence
	require.NotNil(t, d)
	require.Equal(t, "Enough", d.State)
	require.Equal(t, history.EventType("ChoiceStateExited"), d.Event.Type)
	require.Equal(t, "went on to Nothing; recorded: went on to Both", d.What)
}

func TestReplayAddedTask(t *testing.T) {
	t.Parallel()
	res := replayNight(t, `{"night": "2026-11-24"}`, func(s string) string {
		s = strings.Replace(s, `"ResultPath": "$.ran", "Next": "Confirm"`, `"ResultPath": "$.ran", "Next": "Audit"`, 1)
		return strings.Replace(s, `"Confirm": {`, `"Audit": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "Parameters": {"x": 1}, "ResultPath": null, "Next": "Confirm"},
    "Confirm": {`, 1)
	})
	d := res.Divergence
	require.NotNil(t, d)
	require.Equal(t, "Audit", d.State)
	require.Contains(t, d.String(), "state Audit has no recorded result")
}

func TestReplayOutputDiffers(t *testing.T) {
	t.Parallel()
	// A Parallel branch's task gets another input: the branch's state is
	// where it diverges, with the difference.
	res := replayNight(t, `{"night": "2026-11-24"}`, func(s string) string {
		return strings.Replace(s, `"Parameters": {"side": "right"}, "End": true`, `"Parameters": {"side": "right"}, "ResultSelector": {"p.$": "$.Payload"}, "End": true`, 1)
	})
	d := res.Divergence
	require.NotNil(t, d)
	require.Equal(t, "Right", d.State)
	require.Equal(t, `output differs: output.Payload: recorded "right done", got no such member`, d.What)

	// A Map iteration's edit is found in its iteration.
	res = replayNight(t, `{"night": "2026-11-24"}`, func(s string) string {
		return strings.Replace(s, `"Parameters": {"job.$": "$"}, "End": true`, `"Parameters": {"job.$": "$"}, "OutputPath": "$.Payload.rows", "End": true`, 1)
	})
	require.NotNil(t, res.Divergence)
	require.Equal(t, "Run", res.Divergence.State)
	require.Contains(t, res.Divergence.What, `output differs: output: recorded {"Payload":{"job":"a","rows":1}}, got 1`)
}

func TestReplayBadRecording(t *testing.T) {
	t.Parallel()
	_, err := LoadData("x.test.json", []byte(`{"definition": 3, "cases": []}`))
	require.ErrorContains(t, err, "definition: must be a non-empty string")
	_, err = Record(&Source{Definition: night})
	require.ErrorContains(t, err, "does not start with ExecutionStarted")
	_, err = Record(&Source{Definition: "{"})
	require.ErrorContains(t, err, "not JSON")
}

func FuzzLoadRecording(f *testing.F) {
	f.Add([]byte(`{"definition": {"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}},
		"cases": [{"name": "x", "mocks": {"A": [{"Input": {"a": 1}, "Return": 1}]}, "expect": {"output": 1, "path": ["A"]}}]}`))
	f.Add([]byte(`{"definition": {}, "cases": [{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := LoadData("fuzz.test.json", data)
		if err != nil {
			return
		}
		r := &Runner{MaxSteps: 200}
		for _, c := range file.Cases {
			r.Run(file, c)
		}
	})
}

func mustParse(s string) any {
	v, err := jsonvalue.Parse([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}

// TestRecordStillRunning records a Map whose failing iteration ended the
// execution while another's task still ran: replayed, that task does not
// end either, whatever order the iterations' tasks come in.
func TestRecordStillRunning(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "Jobs", "States": {"Jobs": {"Type": "Map", "ItemsPath": "$.jobs", "End": true,
	  "ItemProcessor": {"StartAt": "Run", "States": {"Run": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"job.$": "$"}, "End": true}}}}}}`
	m, diags := asl.Parse([]byte(def))
	require.NotNil(t, m, "%v", diags)
	o := (&Exec{Machine: m, StateMachineName: "jobs", ExecutionName: "x", Input: mustParse(`{"jobs": ["slow", "load"]}`), Start: time.Now(), MaxSteps: 100,
		Resolver: interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
			if job, _ := req.Parameters.(*jsonvalue.Object).Get("job"); job == "slow" {
				return nil, interp.Pending
			}
			return nil, &failure.Failure{Name: "JobFailed", Cause: "load is broken", HasCause: true}
		})}).Run()
	require.Equal(t, history.StatusFailed, o.Status)
	data, err := Record(&Source{Definition: def, Events: o.Events})
	require.NoError(t, err)
	require.Contains(t, string(data), `"Input": {
              "job": "slow"
            },
            "Pending": true`)
	f, err := LoadData("jobs.test.json", data)
	require.NoError(t, err)
	res := (&Runner{}).Run(f, f.Cases[0])
	require.True(t, res.Passed, res.Failure)
}

// Activities and Lambda functions called by their ARN are recorded from
// their own events.
func TestRecordActivitiesAndFunctions(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "Approve", "States": {
	  "Approve": {"Type": "Task", "Resource": "arn:aws:states:us-east-1:123456789012:activity:approve", "ResultPath": "$.approved", "Next": "Count"},
	  "Count": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:count", "Retry": [{"ErrorEquals": ["States.ALL"]}], "End": true}}}`
	m, diags := asl.Parse([]byte(def))
	require.NotNil(t, m, "%v", diags)
	counts := 0
	o := (&Exec{Machine: m, StateMachineName: "approve", ExecutionName: "x", Input: mustParse(`{"n": 1}`), Start: time.Now(), MaxSteps: 100,
		Resolver: interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
			if req.StateName == "Approve" {
				return mustParse(`{"by": "ada"}`), nil
			}
			if counts++; counts == 1 {
				return nil, &failure.Failure{Name: "Lambda.ServiceException", Cause: "busy", HasCause: true}
			}
			return mustParse(`{"counted": 2}`), nil
		})}).Run()
	require.Equal(t, history.StatusSucceeded, o.Status)
	data, err := Record(&Source{Definition: def, Events: o.Events})
	require.NoError(t, err)
	f, err := LoadData("approve.test.json", data)
	require.NoError(t, err)
	require.Len(t, f.Cases[0].Mocks.byState["Count"], 2)
	require.Len(t, f.Cases[0].Mocks.byState["Approve"], 1)
	res := (&Runner{}).Run(f, f.Cases[0])
	require.True(t, res.Passed, res.Failure)
}

// FuzzRecord records histories of any events: an error or a test file
// that loads, never a panic.
func FuzzRecord(f *testing.F) {
	f.Add(`{"type":"ExecutionStarted","id":1,"executionStartedEventDetails":{"input":"{}"}}
{"type":"TaskStateEntered","id":2,"previousEventId":1,"stateEnteredEventDetails":{"name":"A","input":"{}"}}
{"type":"TaskScheduled","id":3,"previousEventId":2,"taskScheduledEventDetails":{"parameters":"{}"}}
{"type":"TaskSucceeded","id":4,"previousEventId":3}
{"type":"ExecutionSucceeded","id":5,"previousEventId":4,"executionSucceededEventDetails":{"output":"1"}}`)
	def := `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`
	f.Fuzz(func(t *testing.T, lines string) {
		var events []*history.Event
		for _, l := range strings.Split(lines, "\n") {
			ev, err := ParseEvent([]byte(l))
			if err != nil {
				return
			}
			events = append(events, ev)
		}
		data, err := Record(&Source{Definition: def, Events: events})
		if err != nil {
			return
		}
		if _, err := LoadData("fuzz.test.json", data); err != nil && !strings.Contains(err.Error(), "payload limit") {
			t.Fatalf("a recording that does not load: %v\n%s", err, data)
		}
	})
}

func TestReplayEndsInAState(t *testing.T) {
	t.Parallel()
	// The Map's task now fails on what it was given: the replay ends in
	// the Map, which the recording left.
	res := replayNight(t, `{"night": "2026-11-24"}`, func(s string) string {
		return strings.Replace(s, `"Parameters": {"job.$": "$"}, "End": true`, `"Parameters": {"job.$": "$"}, "ResultSelector": {"rows.$": "$.Payload.nothing"}, "End": true`, 1)
	})
	d := res.Divergence
	require.NotNil(t, d)
	require.Equal(t, "Run", d.State)
	require.Contains(t, d.What, `the execution ended in it (FAILED, error "States.Runtime"`)
	require.Contains(t, d.What, `recorded: exited with output {"Payload":{"job":"a","rows":1}}`)
}

func TestMocksByInputRefusedWhenMixed(t *testing.T) {
	t.Parallel()
	_, err := ParseStateMocks(mustParse(`{"A": [{"Input": 1, "Return": 1}, {"Return": 2}]}`))
	require.ErrorContains(t, err, `state "A" response 1: give "Input" in all of the state's responses or in none`)
	_, err = ParseStateMocks(mustParse(`{"A": [{"Pending": true}]}`))
	require.ErrorContains(t, err, `state "A" response 0: "Pending" must be true, beside "Input"`)
}

// A task that failed to start, as AWS's histories tell it
// (TaskStartFailed), is recorded as the error it failed with, not as a
// task still running.
func TestRecordATaskThatFailedToStart(t *testing.T) {
	t.Parallel()
	m, _ := asl.Parse([]byte(night))
	o := (&Exec{Machine: m, StateMachineName: "night", ExecutionName: "x", Input: mustParse(`{"night": "x"}`), Start: time.Now(), MaxSteps: 100,
		Resolver: interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
			return nil, &failure.Failure{Name: "States.Runtime", Cause: "could not start", HasCause: true}
		})}).Run()
	started := 0
	for _, ev := range o.Events {
		if ev.Type == history.EventTaskFailed {
			ev.Type = history.EventTaskStartFailed
			started++
		}
	}
	require.Positive(t, started)
	data, err := Record(&Source{Definition: night, Events: o.Events})
	require.NoError(t, err)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, data))
	require.Contains(t, compact.String(), `"Throw":{"Error":"States.Runtime","Cause":"could not start"}`)
	require.NotContains(t, compact.String(), `"Pending"`)
	f, err := LoadData("night.test.json", data)
	require.NoError(t, err)
	res := (&Runner{}).Run(f, f.Cases[0])
	require.True(t, res.Passed, res.Failure)
}
