package interp_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl/budget"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
)

const runaway = `($f := function($n){ $n = 0 ? 0 : $f($n-1) + $f($n-1) }; $f(60))`

// A Task waits for its result; its result is evaluated by a state that
// runs away, with a Catch that keeps the error in the output.
const runawayAfterTask = `{"QueryLanguage": "JSONata", "StartAt": "T", "States": {
	"T": {` + taskState + `, "Next": "Par"},
	"Par": {"Type": "Parallel", "End": true,
		"Branches": [{"StartAt": "P", "States": {"P": {"Type": "Pass", "Output": "{% ` + runaway + ` %}", "End": true}}}],
		"Catch": [{"ErrorEquals": ["States.ALL"], "Output": "{% $states.errorOutput %}", "Next": "After"}]},
	"After": {"Type": "Pass", "End": true}}}`

func TestBudgetFailsRunawayState(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"QueryLanguage": "JSONata", "StartAt": "P", "States": {
		"P": {"Type": "Pass", "Output": "{% `+runaway+` %}", "End": true}}}`, `{}`,
		interp.Options{Limits: budget.Limits{Steps: 100_000}})
	require.Equal(t, history.StatusFailed, b.x.Status)
	require.Equal(t, failure.QueryEvaluationError, b.x.Failure.Name)
	require.Contains(t, b.x.Failure.Cause, "the evaluation took more than its limit of 100000 steps")
}

func TestBudgetFailsHugeValue(t *testing.T) {
	t.Parallel()
	for _, def := range []string{
		`{"QueryLanguage": "JSONata", "StartAt": "P", "States": {"P": {"Type": "Pass", "Output": "{% [1..10000000] %}", "End": true}}}`,
		// Intrinsics nested: each doubles what the one inside built.
		`{"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": {"v.$":
			"States.Format('{}{}', States.Format('{}{}', States.Format('{}{}', States.Format('{}{}', States.Format('{}{}', $.s, $.s), States.Format('{}{}', $.s, $.s)), States.Format('{}{}', $.s, $.s)), States.Format('{}{}', $.s, $.s)), States.Format('{}{}', $.s, $.s))"}, "End": true}}}`,
	} {
		b := setup(t, def, `{"s": "`+string(make([]byte, 0))+`0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}`,
			interp.Options{Limits: budget.Limits{Bytes: 1000}})
		require.Equal(t, history.StatusFailed, b.x.Status)
		require.Equal(t, failure.DataLimitExceeded, b.x.Failure.Name, "%s", b.x.Failure.Cause)
		require.Contains(t, b.x.Failure.Cause, "limit of 1000 bytes")
	}
}

// jumpClock moves a second on at every reading.
func jumpClock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return time.Unix(n.Add(1), 0) }
}

// An evaluation that runs out of time fails its state; the step reports
// where, and a replay without a clock fails it at the same point, so the
// caught error (and what follows from it) is the same.
func TestTimeLimitMarksReplay(t *testing.T) {
	t.Parallel()
	opts := interp.Options{Limits: budget.Limits{Steps: -1, Time: 5 * time.Second}, Clock: jumpClock()}
	b := setup(t, runawayAfterTask, `{}`, opts)
	task := b.only(t, interp.RunTask)[0]
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: task.ID, Output: "r"})
	require.Equal(t, history.StatusSucceeded, b.x.Status)
	require.Contains(t, b.output(t), "the evaluation ran longer than its time limit of 5s")
	marks := b.x.Marks()
	require.Len(t, marks, 1)
	require.False(t, marks[0].Stop)

	// Replayed with the marks and no clock: the same history.
	r := setup(t, runawayAfterTask, `{}`, interp.Options{Limits: budget.Limits{Steps: -1}})
	r.x.ReplayMarks(marks)
	r.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: task.ID, Output: "r"})
	require.Equal(t, b.output(t), r.output(t))
	require.Equal(t, eventsText(b.events), eventsText(r.events))
	require.Empty(t, r.x.Marks()[0].Error)
}

// eventsText is the JSON of each event, every member included.
func eventsText(evs []*history.Event) []string {
	var out []string
	for _, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			panic(err)
		}
		out = append(out, string(b))
	}
	return out
}

// A stop asked for during a long evaluation stops the execution where it
// is; replaying the step with its marks stops it at the same point.
func TestStopInterruptsEvaluation(t *testing.T) {
	t.Parallel()
	var stop atomic.Pointer[interp.Interruption]
	polls := 0
	opts := interp.Options{Limits: budget.Limits{Steps: -1, Time: -1}, Interrupt: func() *interp.Interruption {
		if polls++; polls == 50 {
			stop.Store(&interp.Interruption{Stop: true, Error: "Halt", Cause: "asked to"})
		}
		return stop.Load()
	}}
	b := setup(t, runawayAfterTask, `{}`, opts)
	task := b.only(t, interp.RunTask)[0]
	b.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: task.ID, Output: "r"})
	require.Equal(t, history.StatusAborted, b.x.Status)
	require.Equal(t, "Halt", b.x.Failure.Name)
	require.Equal(t, []string{"TaskSucceeded", "TaskStateExited", "ParallelStateEntered", "ParallelStateStarted",
		"PassStateEntered", "ExecutionAborted"}, b.types()[4:], "the pass was entered, and stopped in its evaluation")
	marks := b.x.Marks()
	require.Equal(t, []interp.Mark{{Eval: marks[0].Eval, Steps: 50 * budget.CheckEvery, Stop: true, Error: "Halt", Cause: "asked to"}}, marks)

	r := setup(t, runawayAfterTask, `{}`, interp.Options{Limits: budget.Limits{Steps: -1, Time: -1}})
	r.x.ReplayMarks(marks)
	r.step(t, interp.Event{Kind: interp.TaskSucceeded, ID: task.ID, Output: "r"})
	require.Equal(t, history.StatusAborted, r.x.Status)
	require.Equal(t, eventsText(b.events), eventsText(r.events))
	require.Equal(t, "asked to", r.x.Failure.Cause)
}

// An interruption without a stop abandons the step: the execution must be
// rebuilt, and says so.
func TestAbandonedStep(t *testing.T) {
	t.Parallel()
	opts := interp.Options{Limits: budget.Limits{Steps: -1, Time: -1}, Interrupt: func() *interp.Interruption {
		return &interp.Interruption{}
	}}
	b := setup(t, runawayAfterTask, `{}`, opts)
	task := b.only(t, interp.RunTask)[0]
	evs, cmds, err := b.x.Step(interp.Event{Kind: interp.TaskSucceeded, ID: task.ID, Output: "r"}, b.now)
	require.ErrorIs(t, err, interp.ErrInterrupted)
	require.Nil(t, evs)
	require.Nil(t, cmds)
	_, _, err = b.x.Step(interp.Event{Kind: interp.Stop}, b.now)
	require.ErrorIs(t, err, interp.ErrInterrupted)
}

// A value that holds the same large value many times over (intrinsics
// nested, or a template naming the input again and again) fails its
// state without being written out whole.
func TestSharedValuesFailWithoutExpanding(t *testing.T) {
	// Not parallel: it measures the process's allocations, which other
	// tests running beside it would add to.
	arr := "$.s"
	for range 10 {
		arr = "States.Array(" + arr + ", " + arr + ")"
	}
	var keys strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&keys, `"k%d.$": "$.s", `, i)
	}
	input := `{"s": "` + strings.Repeat("x", 40000) + `"}`
	for name, def := range map[string]string{
		"intrinsics": `{"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": {"v.$": "` + arr + `"}, "End": true}}}`,
		"template":   `{"StartAt": "T", "States": {"T": {` + taskState + `, "Parameters": {` + keys.String() + `"last": 1}, "End": true}}}`,
		"map items":  `{"StartAt": "M", "States": {"M": {"Type": "Map", "ItemsPath": "$.items", "ItemSelector": {"v.$": "` + arr + `"}, "ItemProcessor": {"StartAt": "I", "States": {"I": {"Type": "Succeed"}}}, "End": true}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			in := input
			if name == "map items" {
				in = `{"items": [1], "s": "` + strings.Repeat("x", 40000) + `"}`
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b := setup(t, def, in, interp.Options{})
			runtime.ReadMemStats(&after)
			require.Equal(t, history.StatusFailed, b.x.Status)
			require.Equal(t, failure.DataLimitExceeded, b.x.Failure.Name, b.x.Failure.Cause)
			// Written out whole it would take 40 MB.
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20))
		})
	}
}
