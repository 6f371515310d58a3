package interp_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/internal/testkit/conformance"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// runCase runs an execution case through the interpreter and returns the
// difference from the recording ("" when it matches) and the difference of
// the full history.
func runCase(c *conformance.Case) (string, string) {
	m, diags := asl.ParseWith([]byte(c.DefinitionText()), asl.Options{Type: c.StateMachineType})
	if m == nil {
		d := fmt.Sprintf("definition rejected: %v", diags)
		return d, d
	}
	input, err := jsonvalue.ParseString(c.InputText())
	if err != nil {
		return "input: " + err.Error(), ""
	}
	start := time.Date(2024, 11, 18, 11, 14, 18, 0, time.UTC)
	info := interp.Info{
		ExecutionArn:     "arn:aws:states:us-east-1:111111111111:execution:sm:exec",
		Name:             "exec",
		RoleArn:          "arn:aws:iam::111111111111:role/sfn",
		StartTime:        start,
		StateMachineArn:  "arn:aws:states:us-east-1:111111111111:stateMachine:sm",
		StateMachineName: "sm",
		Region:           "us-east-1",
		Account:          "111111111111",
	}
	x := interp.New(m, info, input, interp.Options{})
	x.InputText = c.InputText()
	d := &interp.Driver{MaxSteps: 100_000}
	events := d.Run(x, start)
	r := &conformance.Result{Status: string(x.Status)}
	if x.Output != nil || x.Status == "SUCCEEDED" {
		r.Output = jsonvalue.String(x.Output)
	}
	if fl := x.Failure; fl != nil {
		if fl.Name != "" {
			r.Error = &fl.Name
		}
		if fl.HasCause {
			r.Cause = &fl.Cause
		}
	}
	for _, e := range events {
		r.Events = append(r.Events, string(e.Type))
	}
	text, err := json.Marshal(events)
	if err != nil {
		return err.Error(), err.Error()
	}
	return c.CheckExecution(r), c.CheckHistory(text)
}

// TestConformanceExecutions runs every recorded execution case that does
// not use JSONata through the interpreter and reports the pass rate.
func TestConformanceExecutions(t *testing.T) {
	t.Parallel()
	runConformance(t, false)
}

// TestConformanceJSONata runs every recorded execution case that uses
// JSONata through the interpreter and reports the pass rate.
func TestConformanceJSONata(t *testing.T) {
	t.Parallel()
	runConformance(t, true)
}

// runConformance runs the execution cases that use JSONata (or those that
// do not), reports the pass rate and lists the failures and the cases
// whose full history differs.
func runConformance(t *testing.T, jsonata bool) {
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("conformance corpus not found: expected ../shared/conformance beside the repository (or set " + conformance.EnvDir + ")")
	}
	cases, err := conformance.Load(dir, "execution")
	require.NoError(t, err)
	var failures, historyDiffs []string
	total, withHistory := 0, 0
	for _, c := range cases {
		if c.HasFeature("jsonata") != jsonata {
			continue
		}
		total++
		d, h := runCase(c)
		if d != "" {
			failures = append(failures, c.Name+"\n    "+strings.ReplaceAll(d, "\n", "\n    "))
		}
		if len(c.History) > 0 && !c.ParallelEventsSorted {
			withHistory++
			if h != "" {
				historyDiffs = append(historyDiffs, c.Name+"\n    "+h)
			}
		}
	}
	sort.Strings(historyDiffs)
	t.Logf("full histories (ids, previousEventId, details): %d/%d identical", withHistory-len(historyDiffs), withHistory)
	for _, h := range historyDiffs {
		t.Logf("HISTORY %s", h)
	}
	sort.Strings(failures)
	passed := total - len(failures)
	rate := float64(passed) * 100 / float64(total)
	label := "non-JSONata"
	if jsonata {
		label = "JSONata"
	}
	t.Logf("conformance (interpreter, %s execution cases): %d/%d passed (%.1f%%)", label, passed, total, rate)
	for _, f := range failures {
		t.Logf("FAIL %s", f)
	}
	require.GreaterOrEqual(t, rate, minPassRate, "pass rate below the bar")
}
