package cli

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTestExamples runs the test files of the examples: all pass.
func TestTestExamples(t *testing.T) {
	t.Parallel()
	out, errOut, code := execute("test", "../../../examples")
	require.Equal(t, 0, code, out+errOut)
	require.Empty(t, errOut)
	require.NotContains(t, out, "--- FAIL")
	m := regexp.MustCompile(`(?m)^(\d+) passed, 0 failed\n\z`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 20, out)

	// Verbose: a PASS line for each case of each example file.
	out, _, code = execute("test", "-v", "../../../examples")
	require.Equal(t, 0, code)
	for _, name := range []string{
		"../../../examples/hello.test.json/morning",
		"../../../examples/hello.test.json/afternoon",
		"../../../examples/nested-loop.test.json/two batches of two users",
		"../../../examples/distributed-map.test.json/a bad batch is tolerated",
		"../../../examples/jobnet/jobnet.test.json/a job fails",
		"../../../examples/jobnet/report.test.yaml/three jobs",
		"../../../examples/nightly-batch/night.test.yaml/the whole night",
		"../../../examples/nightly-batch/job.test.yaml/the input file arrives on the third try",
	} {
		require.Regexp(t, "(?m)^--- PASS: "+regexp.QuoteMeta(name)+` \(\d+\.\d\ds\)$`, out)
	}
}

const testGreet = `{"StartAt": "Greet", "States": {
	"Greet": {"Type": "Pass", "Parameters": {"greeting.$": "States.Format('Hello, {}!', $.name)", "hour.$": "$.hour"}, "Next": "TimeOfDay"},
	"TimeOfDay": {"Type": "Choice", "Choices": [{"Variable": "$.hour", "NumericLessThan": 12, "Next": "Morning"}], "Default": "Later"},
	"Morning": {"Type": "Pass", "Result": "Good morning", "ResultPath": "$.note", "End": true},
	"Later": {"Type": "Pass", "Result": "Good day", "ResultPath": "$.note", "End": true}}}`

// TestTestExitStatus: 0 when all pass, 1 when one fails, 2 for bad usage
// or a file that cannot run.
func TestTestExitStatus(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "greet.asl.json", testGreet)
	pass := b.write(t, "pass.test.json", `{"definition": "greet.asl.json", "cases": [
		{"name": "morning", "input": {"name": "Ada", "hour": 9}, "expect": {"output": {"greeting": "Hello, Ada!", "hour": 9, "note": "Good morning"}}}]}`)
	fail := b.write(t, "fail.test.json", `{"definition": "greet.asl.json", "cases": [
		{"name": "ok", "input": {"name": "Ada", "hour": 9}},
		{"name": "evening", "input": {"name": "Ada", "hour": 20}, "expect": {"path": ["Greet", "TimeOfDay", "Morning"]}}]}`)
	bad := b.write(t, "bad.test.json", `{"definition": "greet.asl.json", "cases": [{"name": "x", "expect": {"status": "DONE"}}]}`)
	b.write(t, "invalid.asl.json", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Next": "Nowhere"}}}`)
	invalid := b.write(t, "invalid.test.json", `{"definition": "invalid.asl.json", "cases": [{"name": "x"}]}`)

	out, errOut, code := execute("test", pass)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "1 passed, 0 failed\n", out)
	require.Empty(t, errOut)

	out, _, code = execute("test", pass, fail)
	require.Equal(t, 1, code)
	require.Equal(t, "--- FAIL: "+fail+"/evening (0.00s)\n"+
		"    path: expected [Greet TimeOfDay Morning], got [Greet TimeOfDay Later] (state 3 is Later, not Morning)\n"+
		`        got: SUCCEEDED, output {"greeting":"Hello, Ada!","hour":20,"note":"Good day"}`+"\n"+
		"        path: [Greet TimeOfDay Later]\n"+
		"2 passed, 1 failed\n", regexp.MustCompile(`\(\d+\.\d\ds\)`).ReplaceAllString(out, "(0.00s)"))

	// A file that cannot run: exit 2, its problems on stderr; the others
	// still run.
	out, errOut, code = execute("test", bad, pass, invalid)
	require.Equal(t, 2, code)
	require.Equal(t, "1 passed, 0 failed\n", out)
	require.Contains(t, errOut, bad+`: cases[0].expect.status: "DONE" is not SUCCEEDED, FAILED, TIMED_OUT or ABORTED`)
	require.Contains(t, errOut, invalid+": definition: "+filepath.Join(b.dir, "invalid.asl.json")+": ERROR MISSING_TRANSITION_TARGET /States/A/Next")

	for _, args := range [][]string{
		{"test", filepath.Join(b.dir, "missing.test.json")},
		{"test", "--no-such-flag", pass},
		{"test", "--run", "(", pass},
		{"test", "--max-steps", "0", pass},
		{"test", t.TempDir()},
		{"test", "--junit", filepath.Join(b.dir, "no", "such", "dir.xml"), pass},
	} {
		_, errOut, code := execute(args...)
		require.Equal(t, 2, code, "%v: %s", args, errOut)
		require.NotEmpty(t, errOut, args)
	}
}

// TestTestVerboseAndRun: -v lists passing cases; --run picks cases.
func TestTestVerboseAndRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "greet.asl.json", testGreet)
	f := b.write(t, "g.test.json", `{"definition": "greet.asl.json", "cases": [
		{"name": "morning", "input": {"name": "Ada", "hour": 9}, "expect": {"outputContains": {"note": "Good morning"}}},
		{"name": "evening", "input": {"name": "Ada", "hour": 20}, "expect": {"outputContains": {"note": "Good morning"}}}]}`)
	out, _, code := execute("test", "-v", f)
	require.Equal(t, 1, code)
	require.Regexp(t, `(?s)^--- PASS: .*/g\.test\.json/morning \(\d\.\d\ds\)\n--- FAIL: .*/g\.test\.json/evening .*\n1 passed, 1 failed\n$`, out)

	out, _, code = execute("test", "--run", "^morn", f)
	require.Equal(t, 0, code)
	require.Equal(t, "1 passed, 0 failed\n", out)

	out, errOut, code := execute("test", "--run", "nothing", f)
	require.Equal(t, 0, code)
	require.Equal(t, "0 passed, 0 failed\n", out)
	require.Contains(t, errOut, `no case matches --run "nothing"`)
}

// TestTestJUnit writes the JUnit report and reads it back.
func TestTestJUnit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "greet.asl.json", testGreet)
	f := b.write(t, "g.test.yaml", `
definition: greet.asl.json
cases:
  - name: morning
    input: {name: Ada, hour: 9}
    expect: {outputContains: {note: Good morning}}
  - name: evening
    input: {name: Ada, hour: 20}
    expect: {outputContains: {note: Good morning}}
`)
	bad := b.write(t, "bad.test.json", `{"cases": []}`)
	report := filepath.Join(b.dir, "report.xml")
	_, _, code := execute("test", "--junit", report, f, bad)
	require.Equal(t, 2, code)
	data, err := os.ReadFile(report)
	require.NoError(t, err)
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Tests int    `xml:"tests,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(data, &doc))
	require.Equal(t, []int{3, 1, 1}, []int{doc.Tests, doc.Failures, doc.Errors})
	require.Len(t, doc.Suites, 2)
	require.Equal(t, f, doc.Suites[0].Name)
	require.Equal(t, "morning", doc.Suites[0].Cases[0].Name)
	require.Nil(t, doc.Suites[0].Cases[0].Failure)
	require.Equal(t, `output.note: expected "Good morning", got "Good day"`, doc.Suites[0].Cases[1].Failure.Message)
	require.Equal(t, bad, doc.Suites[1].Name)
	require.Equal(t, `"definition" is missing`, doc.Suites[1].Cases[0].Error.Message)
}

// TestTestCover checks the coverage numbers of a small definition by
// hand.
func TestTestCover(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "greet.asl.json", testGreet)
	f := b.write(t, "g.test.json", `{"definition": "greet.asl.json", "cases": [
		{"name": "morning", "input": {"name": "Ada", "hour": 9}},
		{"name": "early", "input": {"name": "Ada", "hour": 5}},
		{"name": "no hour", "input": {"name": "Ada"}, "expect": {"error": "States.Runtime"}}]}`)
	out, errOut, code := execute("test", "--cover", f)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "coverage: "+filepath.Join(b.dir, "greet.asl.json")+` (3 executions)
    states entered: 3/4 (75.0%)
        never entered: Later
    Choice rules taken: 1/2 (50.0%)
        never taken: TimeOfDay Default → Later
3 passed, 0 failed
`, out)
	out, _, code = execute("test", "--cover", "-v", f)
	require.Equal(t, 0, code)
	for _, line := range []string{
		`^ {8}Greet +Pass +3$`,
		`^ {8}TimeOfDay +Choice +2$`,
		`^ {10}rule #1 → Morning +2$`,
		`^ {10}Default → Later +0$`,
		`^ {8}Morning +Pass +2$`,
		`^ {8}Later +Pass +0$`,
	} {
		require.Regexp(t, "(?m)"+line, out)
	}
}

// TestTestThreeDayWait: a workflow that waits three days tests in
// milliseconds.
func TestTestThreeDayWait(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.write(t, "wait.asl.json", `{"StartAt": "Wait", "States": {
		"Wait": {"Type": "Wait", "Seconds": 259200, "Next": "Done"},
		"Done": {"Type": "Pass", "Parameters": {"at.$": "$$.State.EnteredTime"}, "End": true}}}`)
	f := b.write(t, "wait.test.json", `{"definition": "wait.asl.json", "startTime": "2025-06-30T09:00:00Z", "cases": [
		{"name": "three days", "expect": {"output": {"at": "2025-07-03T09:00:00.000Z"}, "path": ["Wait", "Done"]}}]}`)
	begin := time.Now()
	out, errOut, code := execute("test", "-v", f)
	require.Equal(t, 0, code, out+errOut)
	require.Less(t, time.Since(begin), time.Minute, "a three days' wait ran in virtual time")
	require.True(t, strings.HasSuffix(out, "1 passed, 0 failed\n"), out)
}
