package workflowtest

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

// write writes files into a new directory and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return dir
}

// runFile loads a test file and runs all its cases.
func runFile(t *testing.T, path string) *Report {
	t.Helper()
	rep := (&Runner{}).RunFiles([]string{path}, nil)
	for _, e := range rep.Errors {
		t.Fatalf("load: %v", e)
	}
	return rep
}

// byName maps results by case name.
func byName(rep *Report) map[string]*Result {
	m := map[string]*Result{}
	for _, r := range rep.Results {
		m[r.Case.Name] = r
	}
	return m
}

const greet = `{
  "StartAt": "Greet",
  "States": {
    "Greet": {"Type": "Pass", "Parameters": {"greeting.$": "States.Format('Hello, {}!', $.name)", "hour.$": "$.hour", "items": [1, 2, 3], "tags": {"a b": "x"}}, "Next": "TimeOfDay"},
    "TimeOfDay": {"Type": "Choice", "Choices": [{"Variable": "$.hour", "NumericLessThan": 12, "Next": "Morning"}], "Default": "Later"},
    "Morning": {"Type": "Pass", "Result": "Good morning", "ResultPath": "$.note", "End": true},
    "Later": {"Type": "Pass", "Result": "Good day", "ResultPath": "$.note", "End": true}
  }
}`

// TestExpectations checks every kind of expectation, holding and not,
// with the first difference each reports.
func TestExpectations(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"greet.asl.json": greet,
		"greet.test.json": `{"definition": "greet.asl.json", "cases": [
			{"name": "exact", "input": {"name": "Ada", "hour": 9},
			 "expect": {"status": "SUCCEEDED", "output": {"note": "Good morning", "hour": 9.0, "greeting": "Hello, Ada!", "items": [1, 2, 3], "tags": {"a b": "x"}}}},
			{"name": "exact wrong element", "input": {"name": "Ada", "hour": 9},
			 "expect": {"output": {"greeting": "Hello, Ada!", "hour": 9, "items": [1, 2, 4], "tags": {"a b": "x"}, "note": "Good morning"}}},
			{"name": "exact extra member", "input": {"name": "Ada", "hour": 9},
			 "expect": {"output": {"greeting": "Hello, Ada!", "hour": 9, "items": [1, 2, 3], "tags": {"a b": "x"}}}},
			{"name": "exact missing member", "input": {"name": "Ada", "hour": 9},
			 "expect": {"output": {"greeting": "Hello, Ada!", "hour": 9, "items": [1, 2, 3], "tags": {"a b": "x", "c": 1}, "note": "Good morning"}}},
			{"name": "exact shorter array", "input": {"name": "Ada", "hour": 9},
			 "expect": {"output": {"greeting": "Hello, Ada!", "hour": 9, "items": [1, 2], "tags": {"a b": "x"}, "note": "Good morning"}}},
			{"name": "subset", "input": {"name": "Ada", "hour": 9},
			 "expect": {"outputContains": {"note": "Good morning", "tags": {}, "items": [1, 2, 3]}}},
			{"name": "subset wrong", "input": {"name": "Ada", "hour": 9},
			 "expect": {"outputContains": {"tags": {"a b": "y"}}}},
			{"name": "subset array length", "input": {"name": "Ada", "hour": 9},
			 "expect": {"outputContains": {"items": [1, 2]}}},
			{"name": "subset wrong type", "input": {"name": "Ada", "hour": 9},
			 "expect": {"outputContains": {"items": {"0": 1}}}},
			{"name": "path", "input": {"name": "Ada", "hour": 15},
			 "expect": {"path": ["Greet", "TimeOfDay", "Later"], "pathContains": ["Greet", "Later"]}},
			{"name": "path wrong", "input": {"name": "Ada", "hour": 15},
			 "expect": {"path": ["Greet", "TimeOfDay", "Morning"]}},
			{"name": "path short", "input": {"name": "Ada", "hour": 15},
			 "expect": {"path": ["Greet", "TimeOfDay"]}},
			{"name": "path long", "input": {"name": "Ada", "hour": 15},
			 "expect": {"path": ["Greet", "TimeOfDay", "Later", "Morning"]}},
			{"name": "pathContains order", "input": {"name": "Ada", "hour": 15},
			 "expect": {"pathContains": ["Later", "Greet"]}},
			{"name": "pathContains never", "input": {"name": "Ada", "hour": 15},
			 "expect": {"pathContains": ["Morning"]}},
			{"name": "failure", "input": {"name": "Ada"},
			 "expect": {"error": "States.Runtime", "causeContains": "'$.hour'", "path": ["Greet"]}},
			{"name": "failure wrong error", "input": {"name": "Ada"},
			 "expect": {"status": "FAILED", "error": "States.TaskFailed"}},
			{"name": "failure wrong cause", "input": {"name": "Ada"},
			 "expect": {"cause": "no hour"}},
			{"name": "failure cause part", "input": {"name": "Ada"},
			 "expect": {"causeContains": "no hour"}},
			{"name": "succeeded, not failed", "input": {"name": "Ada", "hour": 1},
			 "expect": {"error": "States.Runtime"}},
			{"name": "failed, not succeeded", "input": {"name": "Ada"}}
		]}`,
	})
	rep := runFile(t, filepath.Join(dir, "greet.test.json"))
	res := byName(rep)
	require.Len(t, res, 21)
	passing := []string{"exact", "subset", "path", "failure"}
	for _, n := range passing {
		require.True(t, res[n].Passed, "%s: %s", n, res[n].Failure)
		require.Empty(t, res[n].Failure)
	}
	want := map[string]string{
		"exact wrong element":   "output.items[2]: expected 4, got 3",
		"exact extra member":    `output.note: unexpected member, got "Good morning"`,
		"exact missing member":  `output.tags.c: expected 1, got no such member`,
		"exact shorter array":   "output.items: expected 2 elements, got 3 elements (output.items[2] is 3)",
		"subset wrong":          `output.tags["a b"]: expected "y", got "x"`,
		"subset array length":   "output.items: expected 2 elements, got 3 elements (output.items[2] is 3)",
		"subset wrong type":     `output.items: expected {"0":1}, got [1,2,3]`,
		"path wrong":            "path: expected [Greet TimeOfDay Morning], got [Greet TimeOfDay Later] (state 3 is Later, not Morning)",
		"path short":            "path: expected [Greet TimeOfDay], got [Greet TimeOfDay Later] (went on to Later)",
		"path long":             "path: expected [Greet TimeOfDay Later Morning], got [Greet TimeOfDay Later] (ended before Morning)",
		"pathContains order":    "pathContains: expected Greet to be entered after Later, got path [Greet TimeOfDay Later]",
		"pathContains never":    "pathContains: expected Morning to be entered, got path [Greet TimeOfDay Later]",
		"failure wrong error":   `error: expected "States.TaskFailed", got "States.Runtime"`,
		"failure wrong cause":   `cause: expected "no hour", got "An error occurred while executing the state 'Greet'`,
		"failure cause part":    `causeContains: expected a cause containing "no hour", got "An error occurred`,
		"succeeded, not failed": "status: expected FAILED, got SUCCEEDED",
		"failed, not succeeded": `status: expected SUCCEEDED, got FAILED (error "States.Runtime")`,
	}
	require.Len(t, want, 21-len(passing))
	for n, msg := range want {
		r := res[n]
		require.False(t, r.Passed, n)
		require.True(t, strings.HasPrefix(r.Failure, msg), "%s:\n got  %s\n want %s", n, r.Failure, msg)
	}
	require.Equal(t, `got: SUCCEEDED, output {"greeting":"Hello, Ada!","hour":15,"items":[1,2,3],"tags":{"a b":"x"},"note":"Good day"}`, res["path wrong"].Got[0])
	require.Equal(t, "path: [Greet TimeOfDay Later]", res["path wrong"].Got[1])
	require.Equal(t, "4 passed, 17 failed", Summary(rep.Results))
	require.Equal(t, "exact", rep.Results[0].Case.Name, "cases run in file order")
	require.Equal(t, filepath.Join(dir, "greet.test.json")+"/exact", rep.Results[0].Name)
}

func TestDiff(t *testing.T) {
	t.Parallel()
	parse := func(s string) any {
		v, err := jsonvalue.ParseString(s)
		require.NoError(t, err)
		return v
	}
	for _, c := range []struct {
		want, got string
		subset    bool
		diff      string
	}{
		{`{"a": 1, "b": [1, {"c": 2}]}`, `{"b": [1.0, {"c": 2}], "a": 1e0}`, false, ""},
		{`{"items": [1, 2, 3]}`, `{"items": [1, 2, 4]}`, false, "output.items[2]: expected 3, got 4"},
		{`{"b": [{"c": 2}]}`, `{"b": [{"c": 2, "d": 3}], "e": 1}`, true, ""},
		{`{"b": [{"c": 2}]}`, `{"b": [{"c": 2, "d": 3}]}`, false, "output.b[0].d: unexpected member, got 3"},
		{`{"b": [{"c": 2}]}`, `{"b": [{"c": "2"}]}`, true, `output.b[0].c: expected 2, got "2"`},
		{`[1]`, `[]`, true, "output: expected 1 element, got 0 elements (output[0] should be 1)"},
		{`null`, `{}`, true, "output: expected null, got {}"},
		{`{"x-y": {"1": true}}`, `{"x-y": {"1": false}}`, false, `output.x-y["1"]: expected true, got false`},
		{`"` + strings.Repeat("é", 300) + `"`, `1`, false, ""},
	} {
		var d string
		if c.subset {
			d = diffSubset("output", parse(c.want), parse(c.got))
		} else {
			d = diffExact("output", parse(c.want), parse(c.got))
		}
		if strings.HasPrefix(c.want, `"é`) {
			// A long value is cut short, at a character's start.
			require.True(t, strings.HasSuffix(strings.TrimSuffix(d, ", got 1"), "…"), d)
			require.Less(t, len(d), 250)
			continue
		}
		require.Equal(t, c.diff, d, "%s vs %s", c.want, c.got)
	}
}

// TestVirtualTime: a Wait of three days runs in milliseconds, the clock
// of the execution moving three days on from the case's startTime.
func TestVirtualTime(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"wait.asl.json": `{"StartAt": "Start", "States": {
			"Start": {"Type": "Pass", "Parameters": {"at.$": "$$.State.EnteredTime"}, "ResultPath": "$.start", "Next": "ThreeDays"},
			"ThreeDays": {"Type": "Wait", "Seconds": 259200, "Next": "After"},
			"After": {"Type": "Pass", "Parameters": {"at.$": "$$.State.EnteredTime", "execution.$": "$$.Execution.Name"}, "ResultPath": "$.after", "End": true}}}`,
		"wait.test.json": `{"definition": "wait.asl.json", "startTime": "2025-06-30T00:00:00Z", "cases": [
			{"name": "three days", "input": {"id": 7}, "expect": {
				"output": {"id": 7, "start": {"at": "2025-06-30T00:00:00.000Z"}, "after": {"at": "2025-07-03T00:00:00.000Z", "execution": "three-days"}},
				"path": ["Start", "ThreeDays", "After"]}},
			{"name": "later start", "startTime": "2030-01-01T12:00:00Z", "expect": {"outputContains": {"after": {"at": "2030-01-04T12:00:00.000Z"}}}}]}`,
	})
	begin := time.Now()
	rep := runFile(t, filepath.Join(dir, "wait.test.json"))
	elapsed := time.Since(begin)
	for _, r := range rep.Results {
		require.True(t, r.Passed, "%s: %s %v", r.Name, r.Failure, r.Got)
	}
	require.Less(t, elapsed, time.Minute, "three days' waits ran in virtual time")
	ev := rep.Results[0].Outcome.Events
	require.Equal(t, 72*time.Hour, ev[len(ev)-1].Timestamp.Sub(ev[0].Timestamp))
}

// TestMocks: tasks are answered from the case's mocks, then the test case
// of the mock configuration (by invocation), then the file's mocks; a Task
// nothing answers fails its case, naming the state, even when a Catch
// would have taken the failure.
func TestMocks(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"order.asl.json": `{"StartAt": "Charge", "States": {
			"Charge": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "charge", "Payload.$": "$"},
				"Retry": [{"ErrorEquals": ["Busy"], "IntervalSeconds": 3600, "MaxAttempts": 3}],
				"ResultSelector": {"charged.$": "$.Payload"}, "ResultPath": "$.charge", "Next": "Ship"},
			"Ship": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "Parameters": {"QueueUrl": "q", "MessageBody.$": "$"},
				"ResultSelector": {"id.$": "$.MessageId"}, "ResultPath": "$.ship",
				"Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Lost"}], "End": true},
			"Lost": {"Type": "Pass", "End": true}}}`,
		"mocks.json": `{"StateMachines": {"orders": {"TestCases": {
				"Happy": {"Charge": "charged"},
				"Busy": {"Charge": "busyThenCharged"},
				"Declined": {"Charge": "declined"}}}},
			"MockedResponses": {
				"charged": {"0": {"Return": {"StatusCode": 200, "Payload": 10}}},
				"busyThenCharged": {"0-1": {"Throw": {"Error": "Busy", "Cause": "later"}}, "2": {"Return": {"Payload": 20}}},
				"declined": {"0": {"Throw": {"Error": "Declined", "Cause": "card"}}}}}`,
		"ship.json": `{"Ship": {"Return": {"MessageId": "m-1"}}}`,
		"order.test.json": `{"definition": "order.asl.json", "stateMachine": "orders", "mockConfig": "mocks.json", "mocks": "ship.json", "cases": [
			{"name": "happy", "testCase": "Happy", "expect": {"output": {"charge": {"charged": 10}, "ship": {"id": "m-1"}}, "path": ["Charge", "Ship"]}},
			{"name": "busy twice", "testCase": "Busy", "expect": {"outputContains": {"charge": {"charged": 20}}}},
			{"name": "declined", "testCase": "Declined", "expect": {"error": "Declined", "cause": "card", "path": ["Charge"]}},
			{"name": "case mocks first", "testCase": "Happy", "mocks": {"Charge": {"Return": {"Payload": 30}}, "Ship": [{"Throw": {"Error": "Gone"}}]},
			 "expect": {"path": ["Charge", "Ship", "Lost"], "outputContains": {"charge": {"charged": 30}, "error": {"Error": "Gone"}}}},
			{"name": "unmocked", "expect": {"path": ["Charge", "Ship", "Lost"]}}
		]}`,
		"nomocks.test.json": `{"definition": "order.asl.json", "mocks": {"Charge": {"Return": {"Payload": 1}}}, "cases": [{"name": "ship unmocked", "expect": {"path": ["Charge", "Ship", "Lost"]}}]}`,
	})
	rep := runFile(t, filepath.Join(dir, "order.test.json"))
	res := byName(rep)
	for _, n := range []string{"happy", "busy twice", "declined", "case mocks first"} {
		require.True(t, res[n].Passed, "%s: %s %v", n, res[n].Failure, res[n].Got)
	}
	// The busy attempts waited an hour each, in virtual time.
	ev := res["busy twice"].Outcome.Events
	require.Equal(t, 3*time.Hour, ev[len(ev)-1].Timestamp.Sub(ev[0].Timestamp))

	require.False(t, res["unmocked"].Passed)
	require.Equal(t, `Task state "Charge" (resource arn:aws:states:::lambda:invoke) has no mocked response: give it one in "mocks", or name a "testCase" of the mock configuration`, res["unmocked"].Failure)

	// Ship's Catch takes the failure and the execution succeeds; the case
	// fails all the same.
	rep = runFile(t, filepath.Join(dir, "nomocks.test.json"))
	require.False(t, rep.Results[0].Passed)
	require.Equal(t, `Task state "Ship" (resource arn:aws:states:::sqs:sendMessage) has no mocked response: give it one in "mocks"`, rep.Results[0].Failure)
	require.Equal(t, `got: SUCCEEDED, output {"charge":{"charged":1},"error":{"Error":"States.TaskFailed","Cause":"the Task state 'Ship' has no mocked response"}}`, rep.Results[0].Got[0])
}

// TestMocksByInvocation: a polling loop (submit, wait, check, back to the
// wait until done) gets the next mocked response each time round, from a
// mock configuration and from a --mock-style array alike, retries and Map
// iterations taking their numbers in the same count; a test case whose
// responses run out fails its execution, naming the state and invocation.
func TestMocksByInvocation(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"poll.asl.json": `{"StartAt": "Submit", "States": {
			"Submit": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:batch:submitJob", "ResultSelector": {"id.$": "$.JobId"}, "ResultPath": "$.job", "Next": "Wait"},
			"Wait": {"Type": "Wait", "Seconds": 600, "Next": "Check"},
			"Check": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:batch:describeJobs",
				"Retry": [{"ErrorEquals": ["Batch.TooManyRequestsException"], "IntervalSeconds": 5}],
				"ResultSelector": {"status.$": "$.Jobs[0].Status"}, "ResultPath": "$.check", "Next": "Done?"},
			"Done?": {"Type": "Choice", "Choices": [{"Variable": "$.check.status", "StringEquals": "SUCCEEDED", "Next": "Notify"}], "Default": "Wait"},
			"Notify": {"Type": "Map", "ItemsPath": "$.to", "MaxConcurrency": 1, "ResultPath": "$.sent",
				"ItemProcessor": {"StartAt": "Send", "States": {"Send": {"Type": "Task", "Resource": "arn:aws:states:::sns:publish", "End": true}}}, "End": true}}}`,
		"mocks.json": `{"StateMachines": {"nightly": {"TestCases": {
				"ThreePolls": {"Submit": "submitted", "Check": "runningTwiceThenDone", "Send": "sent"},
				"NeverDone": {"Submit": "submitted", "Check": "runningTwice"}}}},
			"MockedResponses": {
				"submitted": {"0": {"Return": {"JobId": "job-7"}}},
				"runningTwiceThenDone": {"0": {"Return": {"Jobs": [{"Status": "RUNNING"}]}},
					"1": {"Throw": {"Error": "Batch.TooManyRequestsException", "Cause": "slow down"}},
					"2": {"Return": {"Jobs": [{"Status": "RUNNING"}]}}, "3": {"Return": {"Jobs": [{"Status": "SUCCEEDED"}]}}},
				"runningTwice": {"0-1": {"Return": {"Jobs": [{"Status": "RUNNING"}]}}},
				"sent": {"0": {"Return": {"MessageId": "m-0"}}, "1": {"Return": {"MessageId": "m-1"}}}}}`,
		"poll.test.json": `{"definition": "poll.asl.json", "stateMachine": "nightly", "mockConfig": "mocks.json", "cases": [
			{"name": "config", "testCase": "ThreePolls", "input": {"to": ["ops", "dev"]},
			 "expect": {"output": {"to": ["ops", "dev"], "job": {"id": "job-7"}, "check": {"status": "SUCCEEDED"},
			            "sent": [{"MessageId": "m-0"}, {"MessageId": "m-1"}]}}},
			{"name": "arrays", "input": {"to": ["ops", "dev"]}, "mocks": {
				"Submit": {"Return": {"JobId": "job-8"}},
				"Check": [{"Return": {"Jobs": [{"Status": "RUNNING"}]}}, {"Throw": {"Error": "Batch.TooManyRequestsException"}},
				          {"Return": {"Jobs": [{"Status": "RUNNING"}]}}, {"Return": {"Jobs": [{"Status": "SUCCEEDED"}]}}],
				"Send": [{"Return": "first"}, {"Return": "then"}]},
			 "expect": {"outputContains": {"job": {"id": "job-8"}, "sent": ["first", "then"]}}},
			{"name": "never done", "testCase": "NeverDone", "input": {"to": []},
			 "expect": {"status": "FAILED", "error": "States.Runtime",
			            "cause": "The mocked response runningTwice has no answer for invocation 2 of state 'Check' in test case NeverDone (invocations count from 0, retries included)."}}
		]}`,
	})
	rep := runFile(t, filepath.Join(dir, "poll.test.json"))
	for _, r := range rep.Results {
		require.True(t, r.Passed, "%s: %s %v", r.Case.Name, r.Failure, r.Got)
	}
	checks := func(r *Result) []string {
		var got []string
		for _, e := range r.Outcome.Events {
			if d := e.TaskSucceededEventDetails; d != nil && strings.Contains(*d.Output, "Jobs") {
				got = append(got, *d.Output)
			}
			if d := e.TaskFailedEventDetails; d != nil {
				got = append(got, *d.Error)
			}
		}
		return got
	}
	res := byName(rep)
	want := []string{`{"Jobs":[{"Status":"RUNNING"}]}`, "Batch.TooManyRequestsException", `{"Jobs":[{"Status":"RUNNING"}]}`, `{"Jobs":[{"Status":"SUCCEEDED"}]}`}
	require.Equal(t, want, checks(res["config"]))
	require.Equal(t, want, checks(res["arrays"]))
	require.Equal(t, []string{`{"Jobs":[{"Status":"RUNNING"}]}`, `{"Jobs":[{"Status":"RUNNING"}]}`, "States.Runtime"}, checks(res["never done"]))
}

// TestLoadErrors: a file that cannot run names every problem, with
// where it is.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"greet.asl.json":   greet,
		"invalid.asl.json": `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "Nowhere"}}}`,
		"mocks.json":       `{"StateMachines": {"greet": {"TestCases": {"T": {}}}}, "MockedResponses": {}}`,
		"bad.test.json": `{"definition": "greet.asl.json", "mockConfig": "mocks.json", "extra": 1, "cases": [
			{"name": "a", "expect": {"status": "DONE", "outptu": 1}},
			{"name": "a", "testCase": "Nope", "mocks": {"Nowhere": {"Return": 1}, "Greet": {"Return": 1}}},
			{"name": "b", "expect": {"path": ["Greet", "Elsewhere"], "output": 1, "error": "X"}},
			{"input": {}, "mocks": {"StateMachines": {}}},
			"c"
		]}`,
		"invalid.test.json": `{"definition": "invalid.asl.json", "cases": [{"name": "a"}]}`,
		"missing.test.json": `{"definition": "missing.asl.json", "mockConfig": "nomocks.json", "cases": [{"name": "a", "testCase": "T"}]}`,
		"syntax.test.json":  `{"definition": "greet.asl.json", "cases": [`,
		"empty.test.json":   `{"definition": "greet.asl.json", "cases": []}`,
		"notest.test.json":  `{"definition": "greet.asl.json", "cases": [{"name": "a", "testCase": "T"}]}`,
		"nested.test.json":  `{"definition": "par.asl.json", "cases": [{"name": "a", "expect": {"pathContains": ["Inner"]}}]}`,
		"par.asl.json": `{"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": true, "Branches": [
			{"StartAt": "Inner", "States": {"Inner": {"Type": "Pass", "End": true}}}]}}}`,
	})
	problems := func(name string) []string {
		_, err := Load(filepath.Join(dir, name))
		require.Error(t, err, name)
		fe, ok := err.(*FileError)
		require.True(t, ok)
		require.Equal(t, filepath.Join(dir, name), fe.Path)
		require.True(t, strings.HasPrefix(fe.Error(), fe.Path+": "), fe.Error())
		return fe.Problems
	}
	require.Equal(t, []string{
		"extra: unknown member (definition, stateMachine, mockConfig, mocks, startTime, cases are)",
		"cases[0].expect.outptu: unknown member (status, output, outputContains, error, cause, causeContains, path, pathContains are)",
		`cases[0].expect.status: "DONE" is not SUCCEEDED, FAILED, TIMED_OUT or ABORTED`,
		`cases[1].testCase: the mock configuration has no test case "Nope" for state machine "greet" (see "stateMachine")`,
		`cases[1].mocks: no state "Nowhere" in the definition`,
		`cases[1].mocks: state "Greet" is a Pass state: only Task states (and a Map's ItemReader) are mocked`,
		`cases[1].name: "a" names another case too`,
		"cases[2].expect: expects an output of an execution that does not succeed (status FAILED)",
		`cases[2].expect.path[1]: no state "Elsewhere" at the top level of the definition`,
		`cases[3]: "name" is missing`,
		`cases[3].mocks: this is a mock configuration (StateMachines, MockedResponses): give it as "mockConfig"`,
		"cases[4]: must be an object",
	}, problems("bad.test.json"))
	require.Equal(t, []string{
		"definition: " + filepath.Join(dir, "invalid.asl.json") + ": ERROR MISSING_TRANSITION_TARGET /States/A/Next: Missing 'Next' target: Nowhere",
		"definition: " + filepath.Join(dir, "invalid.asl.json") + ": ERROR MISSING_END_STATE /: Workflow has no terminal state",
	}, problems("invalid.test.json"))
	require.Equal(t, []string{
		"definition: " + filepath.Join(dir, "missing.asl.json") + ": cannot read: no such file or directory",
		"mockConfig: " + filepath.Join(dir, "nomocks.json") + ": cannot read: no such file or directory",
	}, problems("missing.test.json"))
	p := problems("syntax.test.json")
	require.Len(t, p, 1)
	require.True(t, strings.HasPrefix(p[0], "invalid JSON: "), p[0])
	require.Equal(t, []string{"cases: has no case"}, problems("empty.test.json"))
	require.Equal(t, []string{`cases[0].testCase: there is no "mockConfig" to take test case "T" from`}, problems("notest.test.json"))
	require.Equal(t, []string{`cases[0].expect.pathContains[0]: "Inner" is not a top-level state: the path lists the states of the top level only`}, problems("nested.test.json"))

	// The runner reports a file that cannot run and goes on with the others.
	var seen []string
	rep := (&Runner{}).RunFiles([]string{filepath.Join(dir, "empty.test.json"), filepath.Join(dir, "nested.test.json")}, func(r *Result, fe *FileError) {
		if fe != nil {
			seen = append(seen, "error "+filepath.Base(fe.Path))
		} else {
			seen = append(seen, r.Case.Name)
		}
	})
	require.Equal(t, []string{"error empty.test.json", "error nested.test.json"}, seen)
	require.Len(t, rep.Errors, 2)
}

// TestCoverage counts states and Choice rules on a small definition, by
// hand: three cases through a Choice of three rules (two sharing a
// Next) and a Default, and an inline Map whose iterations run a Choice of
// their own.
func TestCoverage(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"sort.asl.json": `{"StartAt": "Kind", "States": {
			"Kind": {"Type": "Choice", "Choices": [
				{"Variable": "$.kind", "StringEquals": "small", "Next": "Small"},
				{"Variable": "$.kind", "StringEquals": "list", "Next": "Each"},
				{"Variable": "$.kind", "StringEquals": "tiny", "Next": "Small"}],
				"Default": "Unknown"},
			"Small": {"Type": "Pass", "End": true},
			"Unknown": {"Type": "Fail", "Error": "Unknown"},
			"Each": {"Type": "Map", "ItemsPath": "$.items", "End": true, "ItemProcessor": {"StartAt": "Sign", "States": {
				"Sign": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericLessThan": 0, "Next": "Negative"}], "Default": "Wait"},
				"Negative": {"Type": "Pass", "Result": -1, "End": true},
				"Wait": {"Type": "Wait", "Seconds": 60, "Next": "Positive"},
				"Positive": {"Type": "Pass", "Result": 1, "End": true}}}}}}`,
		"sort.test.json": `{"definition": "sort.asl.json", "cases": [
			{"name": "small", "input": {"kind": "small"}, "expect": {"path": ["Kind", "Small"]}},
			{"name": "tiny", "input": {"kind": "tiny"}, "expect": {"path": ["Kind", "Small"]}},
			{"name": "list", "input": {"kind": "list", "items": [3, -1, 2, -5, -6]}, "expect": {"output": [1, -1, 1, -1, -1], "path": ["Kind", "Each"]}}
		]}`,
	})
	rep := runFile(t, filepath.Join(dir, "sort.test.json"))
	for _, r := range rep.Results {
		require.True(t, r.Passed, "%s: %s", r.Name, r.Failure)
	}
	require.Len(t, rep.Coverage, 1)
	cov := rep.Coverage[0]
	require.Equal(t, 3, cov.Executions)
	counts := map[string]int{}
	for _, s := range cov.States() {
		counts[s.State.Name] = s.Count
	}
	require.Equal(t, map[string]int{"Kind": 3, "Small": 2, "Unknown": 0, "Each": 1, "Sign": 5, "Negative": 3, "Wait": 2, "Positive": 2}, counts)
	rules := map[string]RuleCount{}
	for _, r := range cov.Rules() {
		rules[r.Choice.Name+" "+r.Label()] = r
	}
	require.Len(t, rules, 6)
	require.Equal(t, 2, rules["Kind rule #1"].Count, "small and tiny both went to Small")
	require.Equal(t, 3, rules["Kind rule #1"].SharedWith)
	require.Equal(t, 1, rules["Kind rule #2"].Count)
	require.Equal(t, -1, rules["Kind rule #2"].SharedWith)
	require.Equal(t, 2, rules["Kind rule #3"].Count)
	require.Equal(t, 1, rules["Kind rule #3"].SharedWith)
	require.Equal(t, 0, rules["Kind Default"].Count)
	require.Equal(t, 3, rules["Sign rule #1"].Count)
	require.Equal(t, 2, rules["Sign Default"].Count)
	entered, states, taken, all := cov.Totals()
	require.Equal(t, []int{7, 8, 5, 6}, []int{entered, states, taken, all})

	var b bytes.Buffer
	require.NoError(t, cov.Write(&b, false))
	require.Equal(t, "coverage: "+filepath.Join(dir, "sort.asl.json")+` (3 executions)
    states entered: 7/8 (87.5%)
        never entered: Unknown
    Choice rules taken: 5/6 (83.3%)
        never taken: Kind Default → Unknown
`, b.String())
	b.Reset()
	require.NoError(t, cov.Write(&b, true))
	require.Regexp(t, `(?m)^ {8}Kind +Choice +3$`, b.String())
	require.Regexp(t, `(?m)^ {10}rule #3 → Small +2 +\(same Next as rule #1: counted together\)$`, b.String())
	require.Regexp(t, `(?m)^ {10}Sign +Choice +5$`, b.String())
	require.Regexp(t, `(?m)^ {12}Default → Wait +2$`, b.String())
}

// TestCoverageDistributedMap: the states of a distributed Map's item
// processor are listed apart, out of the totals.
func TestCoverageDistributedMap(t *testing.T) {
	t.Parallel()
	rep := runFile(t, "../examples/distributed-map.test.json")
	for _, r := range rep.Results {
		require.True(t, r.Passed, "%s: %s", r.Name, r.Failure)
	}
	entered, states, taken, rules := rep.Coverage[0].Totals()
	require.Equal(t, []int{1, 1, 0, 0}, []int{entered, states, taken, rules})
	var b bytes.Buffer
	require.NoError(t, rep.Coverage[0].Write(&b, false))
	require.Contains(t, b.String(), "not counted (distributed Map child executions): Check, BadScore, Grade\n")
	require.NotContains(t, b.String(), "Choice rules taken")
}

// TestJUnit parses the JUnit report back.
func TestJUnit(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"greet.asl.json": greet,
		"a.test.json": `{"definition": "greet.asl.json", "cases": [
			{"name": "ok", "input": {"name": "Ada", "hour": 9}, "expect": {"outputContains": {"note": "Good morning"}}},
			{"name": "<wrong> & \"quoted\"", "input": {"name": "Ada", "hour": 9}, "expect": {"outputContains": {"note": "Good <day>\u0001"}}}]}`,
		"b.test.json": `{"definition": "greet.asl.json", "cases": [{"name": "fine", "input": {"name": "x", "hour": 20}}]}`,
		"c.test.json": `{"definition": "greet.asl.json", "cases": 1}`,
	})
	rep := (&Runner{}).RunFiles([]string{filepath.Join(dir, "a.test.json"), filepath.Join(dir, "c.test.json"), filepath.Join(dir, "b.test.json")}, nil)
	var b bytes.Buffer
	require.NoError(t, WriteJUnit(&b, rep.Results, rep.Errors))
	require.True(t, strings.HasPrefix(b.String(), `<?xml version="1.0" encoding="UTF-8"?>`))
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(b.Bytes(), &doc), b.String())
	require.Equal(t, []int{4, 1, 1}, []int{doc.Tests, doc.Failures, doc.Errors})
	require.Len(t, doc.Suites, 3)
	a := doc.Suites[0]
	require.Equal(t, filepath.Join(dir, "a.test.json"), a.Name)
	require.Equal(t, []int{2, 1, 0}, []int{a.Tests, a.Failures, a.Errors})
	require.Equal(t, "ok", a.Cases[0].Name)
	require.Nil(t, a.Cases[0].Failure)
	require.Regexp(t, `^\d+\.\d{3}$`, a.Cases[0].Time)
	require.Equal(t, `<wrong> & "quoted"`, a.Cases[1].Name)
	require.Equal(t, `output.note: expected "Good <day>\u0001", got "Good morning"`, a.Cases[1].Failure.Message)
	require.Contains(t, a.Cases[1].Failure.Text, "\npath: [Greet TimeOfDay Morning]")
	require.Equal(t, filepath.Join(dir, "b.test.json"), doc.Suites[1].Name)
	require.Equal(t, 1, doc.Suites[1].Tests)
	c := doc.Suites[2]
	require.Equal(t, []int{1, 0, 1}, []int{c.Tests, c.Failures, c.Errors})
	require.Equal(t, "cases: must be an array of cases", c.Cases[0].Error.Message)
}

func TestParseYAML(t *testing.T) {
	t.Parallel()
	v, err := ParseYAML([]byte(`
base: &base {x: 1, y: two}
obj:
  <<: *base
  y: 2
  z: [1.50, 0x10, -3, 1e3, 12345678901234567890123]
when: 2025-06-30
flag: yes
on: true
none: ~
text: |
  two
  lines
quoted: "007"
`))
	require.NoError(t, err)
	require.Equal(t, `{"base":{"x":1,"y":"two"},"obj":{"y":2,"z":[1.50,16,-3,1e3,12345678901234567890123],"x":1},"when":"2025-06-30","flag":"yes","on":true,"none":null,"text":"two\nlines\n","quoted":"007"}`,
		jsonvalue.String(v))
	for _, bad := range []string{"a: .inf", "a: 1\na: 2", "a: 1\n---\nb: 2", "? [1]\n: x", "a: [", "a: !custom x"} {
		_, err := ParseYAML([]byte(bad))
		require.Error(t, err, bad)
	}
}

// TestYAMLTestFile runs a test file written in YAML, with its mocks in a
// YAML file.
func TestYAMLTestFile(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"greet.asl.json": greet,
		"ship.asl.yaml": `
StartAt: Ship
States:
  Ship: {Type: Task, Resource: "arn:aws:states:::sqs:sendMessage", Parameters: {QueueUrl: q, MessageBody.$: $}, End: true}
`,
		"ship-mocks.yaml": "Ship: {Return: {MessageId: m-1}}\n",
		"greet.test.yaml": `
# comments are fine
definition: greet.asl.json
cases:
  - name: morning
    input: {name: Ada, hour: 9}
    expect:
      status: SUCCEEDED
      outputContains: {note: Good morning, items: [1, 2, 3]}
      path: [Greet, TimeOfDay, Morning]
  - name: wrong
    input: {name: Ada, hour: 13}
    expect:
      outputContains: {note: Good morning}
`,
		"ship.test.yml": `
definition: ship.asl.yaml
mocks: ship-mocks.yaml
cases:
  - name: shipped
    expect: {output: {MessageId: m-1}}
`,
	})
	rep := runFile(t, filepath.Join(dir, "greet.test.yaml"))
	res := byName(rep)
	require.True(t, res["morning"].Passed, res["morning"].Failure)
	require.Equal(t, `output.note: expected "Good morning", got "Good day"`, res["wrong"].Failure)
	rep = runFile(t, filepath.Join(dir, "ship.test.yml"))
	require.True(t, rep.Results[0].Passed, rep.Results[0].Failure)
}

func TestFind(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"a.test.json":              "",
		"b.json":                   "",
		"sub/c.test.yaml":          "",
		"sub/deeper/d.test.yml":    "",
		"sub/testdata/e.test.json": "",
		".hidden/f.test.json":      "",
		"_skip/g.test.json":        "",
		"empty/h.txt":              "",
	})
	files, err := Find([]string{dir})
	require.NoError(t, err)
	require.Equal(t, []string{
		filepath.Join(dir, "a.test.json"),
		filepath.Join(dir, "sub/c.test.yaml"),
		filepath.Join(dir, "sub/deeper/d.test.yml"),
	}, files)
	// A file is taken as it is, whatever its name.
	files, err = Find([]string{filepath.Join(dir, "b.json"), filepath.Join(dir, "sub")})
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "b.json"), filepath.Join(dir, "sub/c.test.yaml"), filepath.Join(dir, "sub/deeper/d.test.yml")}, files)
	_, err = Find([]string{filepath.Join(dir, "empty")})
	require.ErrorContains(t, err, "no test files (*.test.json, *.test.yaml) in "+filepath.Join(dir, "empty"))
	_, err = Find([]string{filepath.Join(dir, "missing")})
	require.Error(t, err)
}

// TestFilterAndOutput: the runner's filter, and the go test style lines.
func TestFilterAndOutput(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"greet.asl.json": greet,
		"g.test.json": `{"definition": "greet.asl.json", "cases": [
			{"name": "morning", "input": {"name": "A", "hour": 1}, "expect": {"outputContains": {"note": "Good morning"}}},
			{"name": "evening", "input": {"name": "A", "hour": 20}, "expect": {"outputContains": {"note": "Good morning"}}}]}`,
	})
	r := &Runner{Filter: regexp.MustCompile("^even")}
	rep := r.RunFiles([]string{filepath.Join(dir, "g.test.json")}, nil)
	require.Len(t, rep.Results, 1)
	var b bytes.Buffer
	require.NoError(t, WriteResult(&b, rep.Results[0], false))
	require.Regexp(t, `^--- FAIL: .*/g\.test\.json/evening \(\d+\.\d\ds\)
    output\.note: expected "Good morning", got "Good day"
        got: SUCCEEDED, output \{.*\}
        path: \[Greet TimeOfDay Later\]
$`, b.String())

	rep = (&Runner{}).RunFiles([]string{filepath.Join(dir, "g.test.json")}, nil)
	b.Reset()
	require.NoError(t, WriteResult(&b, rep.Results[0], false))
	require.Empty(t, b.String(), "a passing case is quiet")
	require.NoError(t, WriteResult(&b, rep.Results[0], true))
	require.Regexp(t, `^--- PASS: .*/g\.test\.json/morning \(\d+\.\d\ds\)\n$`, b.String())
	require.Equal(t, "1 passed, 1 failed", Summary(rep.Results))
}

// TestEndlessLoop: MaxSteps ends a run that never would.
func TestEndlessLoop(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"loop.asl.json":  `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 1, "Next": "C"}, "C": {"Type": "Choice", "Choices": [{"Variable": "$.stop", "IsPresent": true, "Next": "E"}], "Default": "W"}, "E": {"Type": "Succeed"}}}`,
		"loop.test.json": `{"definition": "loop.asl.json", "cases": [{"name": "forever"}]}`,
	})
	rep := (&Runner{MaxSteps: 100}).RunFiles([]string{filepath.Join(dir, "loop.test.json")}, nil)
	require.Empty(t, rep.Errors)
	require.Equal(t, "status: expected SUCCEEDED, got RUNNING (error \"States.Runtime\")", rep.Results[0].Failure)
	require.Contains(t, rep.Results[0].Got[0], "did not end within 100 steps")
}
