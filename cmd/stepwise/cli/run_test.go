package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/integration/standard"
	"stepwise/internal/testkit/conformance"
	"stepwise/internal/testkit/slowtest"
	"stepwise/jsonvalue"
)

type testBundle struct {
	dir string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	return &testBundle{dir: t.TempDir()}
}

func (b *testBundle) write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(b.dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// execute runs the CLI in-process and returns stdout, stderr and the exit
// status.
func execute(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := (&CLI{Out: &out, Err: &errOut}).Execute(args)
	return out.String(), errOut.String(), code
}

func TestRunSucceeded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"sum.$":"States.MathAdd($.a, 2)"},"Next":"W"},"W":{"Type":"Wait","Seconds":3600,"End":true}}}`)
	out, errOut, code := execute("run", def, "--input", `{"a": 40}`, "--wait-time-scale", "0", "--history")
	require.Equal(t, 0, code, errOut)
	var res struct {
		Status string
		Output json.RawMessage
		Error  *string
		Events []struct {
			Type      string
			ID        int64
			Timestamp float64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, "SUCCEEDED", res.Status)
	require.JSONEq(t, `{"sum": 42}`, string(res.Output))
	require.Nil(t, res.Error)
	var types []string
	for _, e := range res.Events {
		types = append(types, e.Type)
	}
	require.Equal(t, []string{"ExecutionStarted", "PassStateEntered", "PassStateExited", "WaitStateEntered", "WaitStateExited", "ExecutionSucceeded"}, types)
	// The hour-long wait passed in virtual time.
	require.InDelta(t, 3600, res.Events[5].Timestamp-res.Events[0].Timestamp, 0.001)
}

func TestRunFailedExitsOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"Boom","Cause":"it broke"}}}`)
	out, _, code := execute("run", def)
	require.Equal(t, 1, code)
	require.JSONEq(t, `{"status":"FAILED","output":null,"error":"Boom","cause":"it broke"}`, out)
}

func TestRunInvalidDefinitionExitsTwo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"Parallel","States":{"parallel":{"Type":"Pass","End":true}}}`)
	out, errOut, code := execute("run", def)
	require.Equal(t, 2, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "sm.json: ERROR")
	require.Contains(t, errOut, "parallel")
}

func TestRunBadUsage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)
	for _, args := range [][]string{
		{"run"},
		{"run", def, "--input", "{not json"},
		{"run", def, "--input", "{}", "--input-file", def},
		{"run", filepath.Join(b.dir, "missing.json")},
		{"run", def, "--no-such-flag"},
	} {
		_, errOut, code := execute(args...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
		require.NotEmpty(t, errOut)
	}
}

func TestRunMockedTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Retry":[{"ErrorEquals":["Flaky"],"IntervalSeconds":1}],"ResultSelector":{"v.$":"$.Payload"},"End":true}}}`)
	mock := b.write(t, "mock.json", `{"T":[{"Throw":{"Error":"Flaky","Cause":"try again"}},{"Return":{"Payload":7}}]}`)
	out, errOut, code := execute("run", def, "--mock", mock, "--wait-time-scale", "0", "--history")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"output":{"v":7}`)
	require.Contains(t, out, `"TaskFailed"`)
}

// executeRun runs `stepwise run ARGS` with sleep standing for real waits
// and returns stdout, stderr and the exit status.
func executeRun(sleep func(time.Duration), args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	cmd := (&runCommand{CommandBase: &CommandBase{Logger: slog.New(slog.NewTextHandler(&errOut, nil)), Out: &out, Err: &errOut}, sleep: sleep}).command()
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	err := cmd.Execute()
	var exit *ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &exit):
		return out.String(), errOut.String(), exit.Code
	default:
		fmt.Fprintln(&errOut, err)
		return out.String(), errOut.String(), 2
	}
}

// waitSeconds is the time between the Wait state's entry and exit in a
// run's history, in seconds.
func waitSeconds(t *testing.T, out string) float64 {
	t.Helper()
	var res struct {
		Status string
		Events []struct {
			Type      string
			Timestamp float64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, "SUCCEEDED", res.Status)
	var entered, exited []float64
	for _, e := range res.Events {
		switch e.Type {
		case "WaitStateEntered":
			entered = append(entered, e.Timestamp)
		case "WaitStateExited":
			exited = append(exited, e.Timestamp)
		}
	}
	require.Len(t, entered, 1)
	require.Len(t, exited, 1)
	return exited[0] - entered[0]
}

func TestRunVirtualTimeByDefault(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Next":"W"},"W":{"Type":"Wait","Seconds":300,"End":true}}}`)
	mock := b.write(t, "mock.json", `{"T":{"Return":{"Payload":1}}}`)

	var slept []time.Duration
	record := func(d time.Duration) { slept = append(slept, d) }

	// No flag: the five minutes pass at once, and the history shows them.
	out, errOut, code := executeRun(record, def, "--mock", mock, "--history")
	require.Equal(t, 0, code, errOut)
	require.InDelta(t, 300, waitSeconds(t, out), 0.001)
	require.Empty(t, slept)

	// As through the program itself (a real five-minute sleep would not
	// end within the test's time).
	out, errOut, code = execute("run", def, "--mock", mock, "--history")
	require.Equal(t, 0, code, errOut)
	require.InDelta(t, 300, waitSeconds(t, out), 0.001)

	// --real-time waits for the Wait for real, and the history is the same.
	out, errOut, code = executeRun(record, def, "--mock", mock, "--history", "--real-time")
	require.Equal(t, 0, code, errOut)
	require.InDelta(t, 300, waitSeconds(t, out), 0.001)
	require.Equal(t, []time.Duration{300 * time.Second}, slept)

	// --wait-time-scale still scales the real wait.
	slept = nil
	out, errOut, code = executeRun(record, def, "--mock", mock, "--history", "--wait-time-scale", "0.5")
	require.Equal(t, 0, code, errOut)
	require.InDelta(t, 300, waitSeconds(t, out), 0.001)
	require.Equal(t, []time.Duration{150 * time.Second}, slept)

	slept = nil
	_, _, code = executeRun(record, def, "--mock", mock, "--wait-time-scale", "0")
	require.Equal(t, 0, code)
	require.Empty(t, slept)
}

// A call that leaves the process takes real time, which the history
// shows, while Waits stay virtual around it.
func TestRunCallsOutTakeRealTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"A","States":{
		"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"echo","Payload":{}},"Next":"W"},
		"W":{"Type":"Wait","Seconds":60,"Next":"B"},
		"B":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"echo","Payload":{}},"End":true}}}`)
	base := time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)
	reads := 0
	clock := func() time.Time { // each call takes 7 s of real time
		t := base.Add(time.Duration(reads) * 7 * time.Second)
		reads++
		return t
	}
	var out, errOut bytes.Buffer
	cmd := (&runCommand{CommandBase: &CommandBase{Logger: slog.New(slog.NewTextHandler(&errOut, nil)), Out: &out, Err: &errOut},
		now: clock, sleep: func(time.Duration) { t.Error("slept in virtual time") }}).command()
	cmd.SetArgs([]string{def, "--function", "echo=cat", "--history"})
	require.NoError(t, cmd.Execute(), errOut.String())
	var res struct {
		Status string
		Events []struct {
			Type      string
			Timestamp float64
		}
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &res))
	require.Equal(t, "SUCCEEDED", res.Status)
	at := map[string][]float64{}
	for _, e := range res.Events {
		at[e.Type] = append(at[e.Type], e.Timestamp-float64(base.Unix()))
	}
	require.Equal(t, []float64{0, 67}, at["TaskScheduled"])
	require.Equal(t, []float64{0, 67}, at["TaskStarted"])
	require.Equal(t, []float64{7, 74}, at["TaskSucceeded"])
	require.Equal(t, []float64{7}, at["WaitStateEntered"])
	require.Equal(t, []float64{67}, at["WaitStateExited"])
	require.Equal(t, []float64{74}, at["ExecutionSucceeded"])
}

func TestRunRealTimeRetryBackoff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Retry":[{"ErrorEquals":["Flaky"],"IntervalSeconds":2,"BackoffRate":3}],"End":true}}}`)
	mock := b.write(t, "mock.json", `{"T":[{"Throw":{"Error":"Flaky"}},{"Throw":{"Error":"Flaky"}},{"Return":{"Payload":7}}]}`)
	var slept []time.Duration
	out, errOut, code := executeRun(func(d time.Duration) { slept = append(slept, d) }, def, "--mock", mock, "--real-time")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"status":"SUCCEEDED"`)
	require.Equal(t, []time.Duration{2 * time.Second, 6 * time.Second}, slept)
}

func TestRunRealTimeAndScaleConflict(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"End":true}}}`)
	for _, scale := range []string{"0", "1", "2"} {
		out, errOut, code := execute("run", def, "--real-time", "--wait-time-scale", scale)
		require.Equal(t, 2, code)
		require.Empty(t, out)
		require.Equal(t, "stepwise: use --real-time or --wait-time-scale, not both\n", errOut)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	good := b.write(t, "good.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)
	bad := b.write(t, "bad.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nowhere"}}}`)
	out, _, code := execute("validate", good)
	require.Equal(t, 0, code)
	require.Empty(t, out)
	out, _, code = execute("validate", good, bad)
	require.Equal(t, 1, code)
	require.Contains(t, out, "bad.json: ERROR ")
	require.Contains(t, out, "/States/A/Next")
	out, _, code = execute("validate", "--format", "json", bad)
	require.Equal(t, 1, code)
	var resp struct {
		Result      string
		Diagnostics []struct{ Severity, Code, Message, Location string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &resp))
	require.Equal(t, "FAIL", resp.Result)
	require.NotEmpty(t, resp.Diagnostics)
}

// TestRunConformance replays every execution case of the recorded corpus
// through "stepwise run --history", and reports the JSONPath and JSONata
// cases' pass rates apart.
func TestRunConformance(t *testing.T) {
	t.Parallel()
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("conformance corpus not found: expected ../shared/conformance beside the repository (or set " + conformance.EnvDir + ")")
	}
	cases, err := conformance.Load(dir, "execution")
	require.NoError(t, err)
	b := setup(t)
	failures := map[bool][]string{}
	total := map[bool]int{}
	for _, c := range cases {
		jsonata := c.HasFeature("jsonata")
		total[jsonata]++
		def := b.write(t, "def.json", c.DefinitionText())
		in := b.write(t, "in.json", c.InputText())
		out, errOut, code := execute("run", def, "--input-file", in, "--history", "--wait-time-scale", "0")
		if code == 2 {
			failures[jsonata] = append(failures[jsonata], c.Name+": exit 2: "+errOut)
			continue
		}
		var res struct {
			Status string
			Output json.RawMessage
			Error  *string
			Cause  *string
			Events []struct{ Type string }
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			failures[jsonata] = append(failures[jsonata], c.Name+": bad output: "+err.Error())
			continue
		}
		r := &conformance.Result{Status: res.Status, Output: string(res.Output), Error: res.Error, Cause: res.Cause}
		for _, e := range res.Events {
			r.Events = append(r.Events, e.Type)
		}
		if d := c.CheckExecution(r); d != "" {
			failures[jsonata] = append(failures[jsonata], c.Name+"\n    "+strings.ReplaceAll(d, "\n", "\n    "))
		}
	}
	for _, jsonata := range []bool{false, true} {
		label := "non-JSONata"
		if jsonata {
			label = "JSONata"
		}
		fails := failures[jsonata]
		sort.Strings(fails)
		passed := total[jsonata] - len(fails)
		rate := float64(passed) * 100 / float64(total[jsonata])
		t.Logf("conformance (stepwise run --history, %s execution cases): %d/%d passed (%.1f%%)", label, passed, total[jsonata], rate)
		for _, f := range fails {
			t.Logf("FAIL %s", f)
		}
		require.GreaterOrEqual(t, rate, minPassRate, label)
	}
}

// TestBinary builds the real binary once and runs the example through it.
func TestBinary(t *testing.T) {
	t.Parallel()
	slowtest.Require(t, "building the stepwise binary")
	bin := filepath.Join(t.TempDir(), "stepwise")
	build := exec.Command("go", "build", "-o", bin, "stepwise/cmd/stepwise")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	cmd := exec.Command(bin, "run", "../../../examples/hello.asl.json", "--input", `{"name": "Ada", "hour": 9}`)
	out, err := cmd.Output()
	require.NoError(t, err)
	require.JSONEq(t, `{"status":"SUCCEEDED","output":{"greeting":"Hello, Ada!","hour":9,"note":"Good morning"},"error":null,"cause":null}`, string(out))
	cmd = exec.Command(bin, "run", "../../../examples/hello.asl.json", "--input", `[`)
	err = cmd.Run()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	require.Equal(t, 2, exitErr.ExitCode())
}

func TestRunBadInputs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}`)

	huge := b.write(t, "huge.json", `{"s":"`+strings.Repeat("x", 300*1024)+`"}`)
	_, errOut, code := execute("run", def, "--input-file", huge)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "more than the payload limit of 262144 bytes")

	deep := b.write(t, "deep.json", strings.Repeat("[", 5000)+strings.Repeat("]", 5000))
	_, errOut, code = execute("run", def, "--input-file", deep)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "JSON nested too deeply")

	_, errOut, code = execute("run", def, "--input", "\"\xff\"")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "invalid UTF-8")

	big := b.write(t, "big.json", `{"StartAt":"A","States":{"A":{"Type":"Pass","Result":"0123456789","End":true}}}`)
	out, _, code := execute("run", big, "--input", `{}`, "--payload-limit", "10")
	require.Equal(t, 1, code)
	require.Contains(t, out, `"error":"States.DataLimitExceeded"`)

	notJSON := b.write(t, "bad.json", `{"StartAt": "A", "States": {`)
	_, errOut, code = execute("run", notJSON)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "INVALID_JSON_DESCRIPTION")
}

func TestRunEndlessLoopStops(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "loop.json", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"Next":"C"},"C":{"Type":"Choice","Choices":[{"Variable":"$.stop","IsPresent":true,"Next":"E"}],"Default":"W"},"E":{"Type":"Succeed"}}}`)
	out, _, code := execute("run", def, "--wait-time-scale", "0", "--max-steps", "50")
	require.Equal(t, 1, code)
	require.Contains(t, out, `"status":"RUNNING"`)
	require.Contains(t, out, "did not end within 50 steps")
}

// TestRunJSONataExample runs the JSONata nested-loop example: Assign
// counters drive both loops, and the mocked task's result feeds Assign.
func TestRunJSONataExample(t *testing.T) {
	t.Parallel()
	out, errOut, code := execute("run", "../../../examples/nested-loop.jsonata.asl.json",
		"--input", `{"batches": 2, "users": ["ada", "grace"]}`, "--mock", "../../../examples/nested-loop.mock.json", "--history")
	require.Equal(t, 0, code, errOut)
	var res struct {
		Status string
		Output json.RawMessage
		Events []struct {
			Type                    string
			StateExitedEventDetails *struct {
				Name              string
				AssignedVariables map[string]string
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, "SUCCEEDED", res.Status)
	require.JSONEq(t, `{"batches": 2, "notifications": 4, "sent": ["ada in batch 0: 200", "grace in batch 0: 200", "ada in batch 1: 200", "grace in batch 1: 200"]}`, string(res.Output))
	var incremented []string
	for _, e := range res.Events {
		if d := e.StateExitedEventDetails; d != nil && d.Name == "IncrementOuter" {
			incremented = append(incremented, d.AssignedVariables["batch"])
		}
	}
	require.Equal(t, []string{"1", "2"}, incremented, "assignedVariables in the exit events")
}

// "stepwise run" answers Tasks from a MockConfigFile's test case and runs
// Lambda functions given with --function locally, as the server does.
func TestRunMockConfigAndLocalFunctions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "jobs.asl.json", `{"StartAt": "Charge", "States": {
		"Charge": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "charge", "Payload.$": "$"},
			"ResultSelector": {"p.$": "$.Payload"}, "Next": "Ship"},
		"Ship": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:ship", "End": true}}}`)
	mocks := b.write(t, "mocks.json", `{"StateMachines": {"jobs": {"TestCases": {"Happy": {"Charge": "ok"}, "Sad": {"Charge": "no"}}}},
		"MockedResponses": {"ok": {"0": {"Return": {"StatusCode": 200, "Payload": {"charged": 1}}}},
		                    "no": {"0": {"Throw": {"Error": "Declined", "Cause": "card"}}}}}`)
	out, errOut, code := execute("run", def, "--mock-config", mocks, "--test-case", "Happy", "--function", `ship=sed 's/^/{"shipped": /; s/$/}/'`, "--input", `{"order": 1}`)
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"status": "SUCCEEDED", "output": {"shipped": {"p": {"charged": 1}}}, "error": null, "cause": null}`, out)

	out, _, code = execute("run", def, "--mock-config", mocks, "--test-case", "Sad")
	require.Equal(t, 1, code)
	require.JSONEq(t, `{"status": "FAILED", "output": null, "error": "Declined", "cause": "card"}`, out)

	_, errOut, code = execute("run", def, "--mock-config", mocks, "--test-case", "Nope")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `has no test case "Nope" for state machine "jobs"`)
	_, errOut, code = execute("run", def, "--test-case", "Happy")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--mock-config and --test-case go together")
}

// TestRunDistributedMapExample runs the distributed Map example
// in-process: batches of two, a failed batch within the tolerance shows
// as its child's description.
func TestRunDistributedMapExample(t *testing.T) {
	t.Parallel()
	out, errOut, code := execute("run", "../../../examples/distributed-map.asl.json", "--input",
		`{"class": "7b", "passMark": 50, "students": [{"name": "ada", "score": 91}, {"name": "alan", "score": 40},
		{"name": "grace", "score": -1}, {"name": "edsger", "score": 77}, {"name": "barbara", "score": 66}]}`)
	require.Equal(t, 0, code, errOut)
	var res struct {
		Status string
		Output []map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, "SUCCEEDED", res.Status)
	require.Len(t, res.Output, 3)
	require.Equal(t, map[string]any{"class": "7b", "graded": []any{"ada"}}, res.Output[0])
	require.Equal(t, "BadScore", res.Output[1]["Error"])
	require.Equal(t, "FAILED", res.Output[1]["Status"])
	require.Equal(t, map[string]any{"class": "7b", "graded": []any{"barbara"}}, res.Output[2])
}

// validate checks the failure policies the --tag flags set against the
// definition, and with --aws warns that they are not AWS's behaviour.
func TestValidatePolicyTags(t *testing.T) {
	t.Parallel()
	out, errOut, code := execute("validate", "--aws", "--tag", "stepwise:policy/GradeAll=finish-running", "--tag", "team=night",
		"../../../examples/distributed-map.asl.json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "WARNING NOT_AWS /States/GradeAll: GradeAll runs with the failure policy finish-running, which AWS does not have")
	out, _, code = execute("validate", "--tag", "stepwise:policy/GradeAll=finish-running", "../../../examples/distributed-map.asl.json")
	require.Equal(t, 0, code)
	require.NotContains(t, out, "NOT_AWS")
	out, _, code = execute("validate", "--tag", "stepwise:policy/Check=retry-failed-items", "../../../examples/distributed-map.asl.json")
	require.Equal(t, 1, code)
	require.Contains(t, out, "ERROR INVALID_POLICY /States/Check: retry-failed-items applies to Map states; Check is a Choice state")
	out, _, code = execute("validate", "--tag", "stepwise:policy/Nope=finish-running", "../../../examples/distributed-map.asl.json")
	require.Equal(t, 1, code)
	require.Contains(t, out, "names no state of the definition")
	out, _, code = execute("validate", "--tag", "stepwise:policy/GradeAll=later", "../../../examples/distributed-map.asl.json")
	require.Equal(t, 1, code)
	require.Contains(t, out, `unknown policy "later"`)
}

// --cost adds what the run would cost on AWS: hello enters three states
// (Greet, TimeOfDay, Morning), 3 × $0.000025.
func TestRunCost(t *testing.T) {
	t.Parallel()
	out, errOut, code := execute("run", "--cost", "../../../examples/hello.asl.json", "--input", `{"name": "Ada", "hour": 9}`)
	require.Equal(t, 0, code, errOut)
	var res struct{ Billing map[string]float64 }
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, map[string]float64{"stateTransitions": 3, "transitionPriceUSD": 0.000025, "estimatedCostUSD": 0.000075}, res.Billing)
	out, _, code = execute("run", "--cost", "--transition-price", "0.01", "../../../examples/hello.asl.json", "--input", `{"name": "Ada", "hour": 15}`)
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, 0.03, res.Billing["estimatedCostUSD"])
	out, _, _ = execute("run", "../../../examples/hello.asl.json", "--input", `{"name": "Ada", "hour": 9}`)
	require.NotContains(t, out, "billing")
}

// A distributed Map in `stepwise run --aws-endpoint` reads its items from
// S3 and writes its results there, through the same integrations as the
// server (moto standing in for S3).
func TestRunDistributedMapOnS3(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	s3 := func(action, params string) any {
		t.Helper()
		res := integrationtest.Call(t, s3Services(t, moto), "arn:aws:states:::aws-sdk:s3:"+action, params)
		require.Nil(t, res.Failure, "s3 %s", action)
		return res.Output
	}
	s3("createBucket", `{"Bucket": "run-items"}`)
	s3("putObject", `{"Bucket": "run-items", "Key": "in/items.json", "Body": [{"n": 1}, {"n": 2}, {"n": 3}]}`)

	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt": "Each", "States": {"Each": {"Type": "Map",
		"ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "JSON"},
			"Parameters": {"Bucket": "run-items", "Key": "in/items.json"}},
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
			"StartAt": "Double", "States": {"Double": {"Type": "Pass", "Parameters": {"m.$": "States.MathAdd($.n, $.n)"}, "End": true}}},
		"ResultWriter": {"Resource": "arn:aws:states:::s3:putObject", "Parameters": {"Bucket": "run-items", "Prefix": "out"}},
		"End": true}}}`)

	// Without an endpoint the reader has nobody to ask.
	out, errOut, code := execute("run", def)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, out, "--aws-endpoint")

	out, errOut, code = execute("run", def, "--aws-endpoint", moto)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	var res struct {
		Status string
		Output struct {
			ResultWriterDetails struct{ Bucket, Key string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.Equal(t, "SUCCEEDED", res.Status, out)
	require.Equal(t, "run-items", res.Output.ResultWriterDetails.Bucket)
	require.True(t, strings.HasPrefix(res.Output.ResultWriterDetails.Key, "out/"), res.Output.ResultWriterDetails.Key)

	manifest := s3("getObject", `{"Bucket": "run-items", "Key": "`+res.Output.ResultWriterDetails.Key+`"}`)
	body, _ := manifest.(*jsonvalue.Object).Get("Body")
	require.Contains(t, body, `"SUCCEEDED"`)
	dir := strings.TrimSuffix(res.Output.ResultWriterDetails.Key, "manifest.json")
	results := s3("getObject", `{"Bucket": "run-items", "Key": "`+dir+`SUCCEEDED_0.json"}`)
	body, _ = results.(*jsonvalue.Object).Get("Body")
	for _, m := range []string{`\"m\":2`, `\"m\":4`, `\"m\":6`} {
		require.Contains(t, strings.ReplaceAll(fmt.Sprint(body), " ", ""), m, "results: %v", body)
	}

	// An --endpoint for a service no integration calls is refused.
	_, errOut, code = execute("run", def, "--endpoint", "nosuch=http://127.0.0.1:1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no integration calls a service named nosuch")
}

// s3Services is a registry of the integrations calling moto.
func s3Services(t *testing.T, moto string) *integration.Registry {
	t.Helper()
	reg, err := standard.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoint: moto})
	require.NoError(t, err)
	return reg
}

// A run written with --record passes as a test and replays the same,
// its distributed Map's children included.
func TestRunRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := b.write(t, "sm.json", `{"StartAt":"T","States":{
		"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Retry":[{"ErrorEquals":["Flaky"]}],"ResultSelector":{"v.$":"$.Payload"},"ResultPath":"$.t","Next":"M"},
		"M":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},
			"StartAt":"Double","States":{"Double":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","OutputPath":"$.Payload","End":true}}},"End":true}}}`)
	mock := b.write(t, "mock.json", `{"T":[{"Throw":{"Error":"Flaky","Cause":"again"}},{"Return":{"Payload":7}}],"Double":[{"Return":{"Payload":2}}]}`)
	rec := filepath.Join(b.dir, "night.test.json")
	out, errOut, code := execute("run", def, "--mock", mock, "--input", `{"items":[1,2]}`, "--record", rec)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"output":[2,2]`)
	text, err := os.ReadFile(rec)
	require.NoError(t, err)
	require.Contains(t, string(text), `"Flaky"`, "the retried error is recorded")
	out, errOut, code = execute("test", rec)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	out, errOut, code = execute("replay", "--recording", rec)
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "same path, same output")
}
