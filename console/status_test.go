package console

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hist builds a history event by event: each event chains to the one
// given (0: the previous event), with timestamps a second apart.
type hist struct {
	events []*event
	start  time.Time
}

func newHist() *hist {
	return &hist{start: time.Date(2026, 11, 27, 2, 0, 0, 0, time.UTC)}
}

// add appends an event of type typ after prev (0: the last event) with
// details (a JSON object, or "") and returns its id.
func (h *hist) add(typ string, prev int64, details string) int64 {
	id := int64(len(h.events) + 1)
	if prev == 0 {
		prev = id - 1
	}
	ev := &event{ID: id, Prev: prev, Type: typ, Timestamp: h.start.Add(time.Duration(id) * time.Second)}
	if details != "" {
		if err := json.Unmarshal([]byte(details), &ev.Details); err != nil {
			panic(err)
		}
	}
	h.events = append(h.events, ev)
	return id
}

func (h *hist) enter(kind, name string, prev int64) int64 {
	return h.add(kind+"StateEntered", prev, fmt.Sprintf(`{"name": %q, "input": "{}"}`, name))
}

func (h *hist) exit(kind, name string, prev int64) int64 {
	return h.add(kind+"StateExited", prev, fmt.Sprintf(`{"name": %q, "output": "{}"}`, name))
}

// task runs a Task state that fails fails times (retried after each
// but the last when succeed is false) and then succeeds when succeed.
func (h *hist) task(name string, prev int64, fails int, succeed bool) int64 {
	h.enter("Task", name, prev)
	for i := 0; i < fails; i++ {
		h.add("TaskScheduled", 0, `{"resourceType": "lambda", "resource": "invoke"}`)
		h.add("TaskStarted", 0, "")
		h.add("TaskFailed", 0, `{"error": "Oops", "cause": "attempt failed"}`)
	}
	if !succeed {
		return int64(len(h.events))
	}
	h.add("TaskScheduled", 0, `{"resourceType": "lambda", "resource": "invoke"}`)
	h.add("TaskStarted", 0, "")
	h.add("TaskSucceeded", 0, `{"output": "{}"}`)
	return h.exit("Task", name, 0)
}

// A Parallel whose job fails, fails the execution, and succeeds once
// redriven: the job is green, the Parallel green (not caught), and the
// job's failed attempt is an earlier one.
func TestRedriveShowsLastAttempt(t *testing.T) {
	h := newHist()
	h.add("ExecutionStarted", 0, `{"input": "{}"}`)
	h.enter("Parallel", "Par", 1)
	started := h.add("ParallelStateStarted", 0, "")
	ok := h.enter("Pass", "Ok", started)
	h.exit("Pass", "Ok", ok)
	h.task("Job", started, 1, false)
	h.add("ParallelStateFailed", 0, "")
	h.add("ExecutionFailed", 0, `{"error": "Oops", "cause": "attempt failed"}`)
	h.add("ExecutionRedriven", 0, `{"redriveCount": 1}`)
	last := h.task("Job", 0, 0, true)
	h.add("ParallelStateSucceeded", last, "")
	h.exit("Parallel", "Par", last)
	h.add("ExecutionSucceeded", 0, `{"output": "{}"}`)

	a := analyze(h.events, "SUCCEEDED")
	require.Equal(t, map[string]string{"Par": "succeeded", "Ok": "succeeded", "Job": "succeeded"}, a.statuses())
	require.Len(t, a.occurrences["Job"], 2)
	require.Equal(t, statusFailed, a.occurrences["Job"][0].status)
	require.False(t, a.currentSet()[a.occurrences["Job"][0]], "the failed attempt is an earlier one")
	require.Same(t, a.occurrences["Job"][1], a.latest("Job"))
}

// A top-level task that fails and is redriven: its last attempt shows.
func TestRedriveTopLevelTask(t *testing.T) {
	h := newHist()
	h.add("ExecutionStarted", 0, `{"input": "{}"}`)
	h.task("Job", 1, 1, false)
	h.add("ExecutionFailed", 0, `{"error": "Oops"}`)
	h.add("ExecutionRedriven", 0, `{"redriveCount": 1}`)
	h.task("Job", 0, 0, true)
	h.add("ExecutionSucceeded", 0, `{"output": "{}"}`)
	a := analyze(h.events, "SUCCEEDED")
	require.Equal(t, map[string]string{"Job": "succeeded"}, a.statuses())
}

// Retries are counted for a Task (TaskScheduled again), a Parallel
// (ParallelStateStarted again) and a Map (MapStateStarted again), and
// the states inside a retried Parallel show its last attempt.
func TestRetriesCounted(t *testing.T) {
	h := newHist()
	h.add("ExecutionStarted", 0, `{"input": "{}"}`)
	h.task("T", 1, 3, true)
	h.enter("Parallel", "P", 0)
	for i := 0; i < 5; i++ {
		s := h.add("ParallelStateStarted", 0, "")
		if i < 4 {
			// Boom fails the branch; the Parallel's Retry starts it again.
			h.enter("Fail", "Boom", s)
			continue
		}
		e := h.enter("Pass", "Fine", s)
		x := h.exit("Pass", "Fine", e)
		h.add("ParallelStateSucceeded", x, "")
		h.exit("Parallel", "P", x)
	}
	h.enter("Map", "M", 0)
	for i := 0; i < 7; i++ {
		s := h.add("MapStateStarted", 0, `{"length": 1}`)
		it := h.add("MapIterationStarted", s, `{"name": "M", "index": 0}`)
		if i < 6 {
			h.task("Inner", it, 1, false)
			h.add("MapIterationFailed", 0, `{"name": "M", "index": 0}`)
			continue
		}
		x := h.task("Inner", it, 0, true)
		h.add("MapIterationSucceeded", x, `{"name": "M", "index": 0}`)
		h.add("MapStateSucceeded", 0, "")
		h.exit("Map", "M", 0)
	}
	h.add("ExecutionSucceeded", 0, `{"output": "{}"}`)
	a := analyze(h.events, "SUCCEEDED")
	require.Equal(t, map[string]int{"T": 3, "P": 4, "M": 6, "Inner": 0}, a.retries())
	require.Equal(t, map[string]string{"T": "succeeded", "P": "succeeded", "Fine": "succeeded", "M": "succeeded", "Inner": "succeeded"},
		a.statuses(), "Boom failed only in the Parallel's earlier attempts")
	require.Len(t, a.occurrences["Boom"], 4)
}

// A Map redriven in place: only its failed iteration runs again; the
// other iterations' states keep their status, the rerun one its last.
func TestRedriveMapIteration(t *testing.T) {
	h := newHist()
	h.add("ExecutionStarted", 0, `{"input": "[1, 2]"}`)
	h.enter("Map", "M", 1)
	s := h.add("MapStateStarted", 0, `{"length": 2}`)
	i0 := h.add("MapIterationStarted", s, `{"name": "M", "index": 0}`)
	x0 := h.task("Inner", i0, 0, true)
	h.add("MapIterationSucceeded", x0, `{"name": "M", "index": 0}`)
	i1 := h.add("MapIterationStarted", s, `{"name": "M", "index": 1}`)
	h.task("Inner", i1, 1, false)
	h.add("MapIterationFailed", 0, `{"name": "M", "index": 1}`)
	h.add("MapStateFailed", 0, "")
	h.add("ExecutionFailed", 0, `{"error": "Oops"}`)
	r := h.add("ExecutionRedriven", 0, `{"redriveCount": 1}`)
	a := analyze(h.events, "FAILED")
	require.Equal(t, "failed", a.statuses()["Inner"])

	i1 = h.add("MapIterationStarted", r, `{"name": "M", "index": 1}`)
	x1 := h.task("Inner", i1, 0, true)
	h.add("MapIterationSucceeded", x1, `{"name": "M", "index": 1}`)
	h.add("MapStateSucceeded", 0, "")
	h.exit("Map", "M", 0)
	h.add("ExecutionSucceeded", 0, `{"output": "[]"}`)
	a = analyze(h.events, "SUCCEEDED")
	require.Equal(t, map[string]string{"M": "succeeded", "Inner": "succeeded"}, a.statuses())
	require.Equal(t, map[int]string{0: "succeeded", 1: "succeeded"}, a.latest("M").iterations)
}

// A states:startExecution task records the child it started, from
// TaskSubmitted (.sync: ExecutionArn) or TaskSucceeded (executionArn).
func TestStartExecutionChild(t *testing.T) {
	child := "arn:aws:states:us-east-1:123456789012:execution:kid:one"
	for _, tc := range []struct{ resource, typ, output string }{
		{"startExecution.sync:2", "TaskSubmitted", `{\"ExecutionArn\": \"` + child + `\", \"StartDate\": 1}`},
		{"startExecution", "TaskSucceeded", `{\"executionArn\": \"` + child + `\", \"startDate\": 1}`},
	} {
		h := newHist()
		h.add("ExecutionStarted", 0, `{"input": "{}"}`)
		h.enter("Task", "Kick", 1)
		h.add("TaskScheduled", 0, `{"resourceType": "states", "resource": "`+tc.resource+`"}`)
		h.add(tc.typ, 0, `{"resourceType": "states", "resource": "`+tc.resource+`", "output": "`+tc.output+`"}`)
		a := analyze(h.events, "RUNNING")
		require.Equal(t, child, a.latest("Kick").childExecution, tc.resource)
	}
	// Another service's output is no child.
	h := newHist()
	h.add("ExecutionStarted", 0, `{"input": "{}"}`)
	h.enter("Task", "L", 1)
	h.add("TaskSucceeded", 0, `{"resourceType": "lambda", "resource": "invoke", "output": "{\"ExecutionArn\": \"x\"}"}`)
	require.Empty(t, analyze(h.events, "RUNNING").latest("L").childExecution)
}

// A running execution's duration is measured in the history's time: a
// scaled clock puts its events ahead of the wall clock, and the duration
// is never negative.
func TestRunningForUsesTheHistory(t *testing.T) {
	h := newHist()
	h.add("ExecutionStarted", 0, `{"input": "{}"}`)
	h.enter("Wait", "W", 1) // the last event, two seconds after h.start
	wall := h.start.Add(-4 * time.Hour)
	require.Equal(t, 2*time.Second, runningFor(h.start, nil, h.events, wall))
	require.Equal(t, time.Duration(0), runningFor(h.start.Add(time.Hour), nil, h.events, wall), "never negative")
	require.Equal(t, time.Hour, runningFor(h.start, nil, h.events, h.start.Add(time.Hour)), "a clock ahead of the history")
	stop := h.start.Add(10 * time.Second)
	require.Equal(t, 10*time.Second, runningFor(h.start, &stop, h.events, wall))
}
