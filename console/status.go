package console

import (
	"encoding/json"
	"strings"
	"time"
)

// What the history says of each state, for the colors of the graph and the
// details of a state: every event is traced back, through its
// previousEventId, to the state it belongs to (the last StateEntered on
// its chain), and each entry of a state (an occurrence) follows what
// happened to it until it exited.

// Node statuses, as data-status values.
const (
	statusSucceeded = "succeeded"
	statusFailed    = "failed"
	statusCaught    = "caught" // failed, and handled by a Catch
	statusRunning   = "running"
	statusCancelled = "cancelled" // stopped because a sibling failed, or the execution was stopped
	statusNotRun    = "not-run"
)

// event is a history event as GetExecutionHistory gives it.
type event struct {
	ID        int64
	Prev      int64
	Type      string
	Timestamp time.Time
	// Details is the event's *EventDetails member.
	Details map[string]json.RawMessage
	Raw     json.RawMessage
}

// parseEvent reads one event of a history.
func parseEvent(raw json.RawMessage) (*event, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, err
	}
	ev := &event{Raw: raw}
	var ts float64
	_ = json.Unmarshal(members["timestamp"], &ts)
	_ = json.Unmarshal(members["type"], &ev.Type)
	_ = json.Unmarshal(members["id"], &ev.ID)
	_ = json.Unmarshal(members["previousEventId"], &ev.Prev)
	ev.Timestamp = time.UnixMilli(int64(ts*1000 + 0.5)).UTC()
	for k, v := range members {
		if strings.HasSuffix(k, "EventDetails") {
			_ = json.Unmarshal(v, &ev.Details)
		}
	}
	return ev, nil
}

// detail returns a string member of the event's details.
func (ev *event) detail(name string) string {
	var s string
	if raw, ok := ev.Details[name]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// occurrence is one entry of a state.
type occurrence struct {
	state        string
	kind         string // the state's type: Task, Parallel, Map, ...
	container    *occurrence
	status       string
	entered      time.Time
	exited       time.Time
	input        string
	output       string
	err, cause   string
	retries      int
	failedBefore bool
	iterations   map[int]string // Map iteration index → status
	iteration    int            // the index of the container's iteration it runs in, or -1
}

func (o *occurrence) open() bool { return o.exited.IsZero() }

// isContainer reports whether an occurrence is a Parallel or Map state
// still running its branches or iterations.
func (o *occurrence) isContainer() bool {
	return (o.kind == "Parallel" || o.kind == "Map") && o.open()
}

// analysis is what a history says of its states.
type analysis struct {
	occurrences map[string][]*occurrence // by state, in order
	owners      map[int64]string         // event id → the state it belongs to
	events      []*event
	byID        map[int64]*occurrence // event id → the occurrence it belongs to
}

// failure events: the state in progress failed (it may still be retried
// or caught).
var failureEvents = map[string]bool{
	"TaskFailed": true, "TaskTimedOut": true, "TaskStartFailed": true, "TaskSubmitFailed": true,
	"ActivityFailed": true, "ActivityTimedOut": true, "ActivityScheduleFailed": true,
	"LambdaFunctionFailed": true, "LambdaFunctionTimedOut": true, "LambdaFunctionScheduleFailed": true, "LambdaFunctionStartFailed": true,
	"ParallelStateFailed": true, "MapStateFailed": true, "ExecutionFailed": true, "ExecutionTimedOut": true,
	"EvaluationFailed": true,
}

// aborted events: the state in progress was stopped.
var abortedEvents = map[string]bool{
	"TaskStateAborted": true, "WaitStateAborted": true, "ParallelStateAborted": true, "MapStateAborted": true,
	"ExecutionAborted": true,
}

// rescheduled events: a retried task runs again.
var rescheduledEvents = map[string]bool{
	"TaskScheduled": true, "ActivityScheduled": true, "LambdaFunctionScheduled": true,
}

// ofContainer reports whether an event is a Parallel's or a Map's own (it
// chains from the state inside that ran last).
func ofContainer(typ string) bool {
	return strings.HasPrefix(typ, "ParallelState") || strings.HasPrefix(typ, "MapState") ||
		strings.HasPrefix(typ, "MapIteration") || strings.HasPrefix(typ, "MapRun")
}

// analyze reads a whole history; executionStatus is the execution's
// status now (what becomes of states still in progress).
func analyze(events []*event, executionStatus string) *analysis {
	byID := map[int64]*occurrence{} // the occurrence an event belongs to
	a := &analysis{occurrences: map[string][]*occurrence{}, owners: map[int64]string{}, events: events, byID: byID}
	iterationStarts := map[int64]int{} // MapIterationStarted event id → index
	for _, ev := range events {
		prev := byID[ev.Prev]
		if kind, ok := strings.CutSuffix(ev.Type, "StateEntered"); ok {
			o := &occurrence{state: ev.detail("name"), kind: kind, status: statusRunning, entered: ev.Timestamp, input: ev.detail("input"), iteration: -1}
			if kind == "Fail" {
				o.status = statusFailed // it fails as it is entered
			}
			if prev != nil {
				// Entered from a Parallel or Map that starts its branches or
				// iterations, or after a state inside one.
				o.container, o.iteration = prev.container, prev.iteration
				if prev.isContainer() {
					o.container, o.iteration = prev, -1
				}
				if index, ok := iterationStarts[ev.Prev]; ok {
					o.iteration = index
				}
			}
			a.occurrences[o.state] = append(a.occurrences[o.state], o)
			byID[ev.ID] = o
			a.owners[ev.ID] = o.state
			continue
		}
		if strings.HasSuffix(ev.Type, "StateExited") {
			o := a.open(ev.detail("name"))
			if o == nil {
				continue
			}
			o.exited, o.output = ev.Timestamp, ev.detail("output")
			if o.failedBefore {
				o.status = statusCaught
			} else {
				o.status = statusSucceeded
			}
			byID[ev.ID] = o
			a.owners[ev.ID] = o.state
			continue
		}
		o := prev
		if ofContainer(ev.Type) {
			for o != nil && !o.isContainer() {
				o = o.container
			}
		}
		if o == nil {
			continue
		}
		byID[ev.ID] = o
		a.owners[ev.ID] = o.state
		switch {
		case failureEvents[ev.Type]:
			o.status, o.failedBefore = statusFailed, true
			o.err, o.cause = ev.detail("error"), ev.detail("cause")
			if prev != o && prev.status == statusRunning {
				// A branch's state failed its Parallel or Map.
				prev.status, prev.err, prev.cause = statusFailed, o.err, o.cause
			}
		case abortedEvents[ev.Type]:
			if o.status == statusRunning {
				o.status = statusCancelled
			} else if o.container != nil {
				// Linked to the failure that stopped its branch or
				// iteration, as AWS links it: what still runs beside the
				// failure was stopped.
				a.cancelInside(o.container)
			}
		case rescheduledEvents[ev.Type] && o.failedBefore:
			o.status, o.failedBefore = statusRunning, false
			o.retries++
		case strings.HasPrefix(ev.Type, "MapIteration"):
			var index int
			_ = json.Unmarshal(ev.Details["index"], &index)
			if ev.Type == "MapIterationStarted" {
				iterationStarts[ev.ID] = index
			}
			if o.iterations == nil {
				o.iterations = map[int]string{}
			}
			o.iterations[index] = iterationStatus(ev.Type)
		}
	}
	// States still in progress when the execution ended.
	for _, list := range a.occurrences {
		for _, o := range list {
			if o.status != statusRunning || executionStatus == "RUNNING" {
				continue
			}
			if executionStatus == "FAILED" {
				o.status = statusFailed
			} else {
				o.status = statusCancelled
			}
		}
	}
	return a
}

// cancelInside marks cancelled the occurrences still running inside
// container, at any depth.
func (a *analysis) cancelInside(container *occurrence) {
	for _, list := range a.occurrences {
		for _, o := range list {
			if o.status != statusRunning {
				continue
			}
			for c := o.container; c != nil; c = c.container {
				if c == container {
					o.status = statusCancelled
					break
				}
			}
		}
	}
}

// open returns the latest occurrence of a state that has not exited.
func (a *analysis) open(state string) *occurrence {
	list := a.occurrences[state]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].open() {
			return list[i]
		}
	}
	return nil
}

func iterationStatus(typ string) string {
	switch typ {
	case "MapIterationSucceeded":
		return statusSucceeded
	case "MapIterationFailed":
		return statusFailed
	case "MapIterationAborted":
		return statusCancelled
	}
	return statusRunning
}

// precedence orders the statuses of a state's occurrences: a state run
// many times (a Map's iterations) shows the most telling.
var precedence = map[string]int{statusRunning: 5, statusFailed: 4, statusCaught: 3, statusCancelled: 2, statusSucceeded: 1}

// statuses returns the status of every state that ran.
func (a *analysis) statuses() map[string]string {
	out := make(map[string]string, len(a.occurrences))
	for name, list := range a.occurrences {
		best := ""
		for _, o := range list {
			if precedence[o.status] > precedence[best] {
				best = o.status
			}
		}
		out[name] = best
	}
	return out
}

// latest returns the last occurrence of a state, or nil.
func (a *analysis) latest(state string) *occurrence {
	list := a.occurrences[state]
	if len(list) == 0 {
		return nil
	}
	return list[len(list)-1]
}

// inIteration reports whether an occurrence ran within iteration index of
// the Map occurrence m, directly or nested deeper.
func (o *occurrence) inIteration(m *occurrence, index int) bool {
	for x := o; x != nil && x.container != nil; x = x.container {
		if x.container == m {
			return x.iteration == index
		}
	}
	return false
}

// iterationEvents returns the events of iteration index of the Map
// occurrence m: its own MapIteration events and those of the states that
// ran within it.
func (a *analysis) iterationEvents(m *occurrence, index int) []*event {
	var out []*event
	for _, ev := range a.events {
		o := a.byID[ev.ID]
		if o == nil {
			continue
		}
		if o == m && strings.HasPrefix(ev.Type, "MapIteration") {
			var i int
			if json.Unmarshal(ev.Details["index"], &i) == nil && i == index {
				out = append(out, ev)
			}
			continue
		}
		if o.inIteration(m, index) {
			out = append(out, ev)
		}
	}
	return out
}

// iterationOccurrences returns the entries of states within iteration
// index of the Map occurrence m, in the order they were entered.
func (a *analysis) iterationOccurrences(m *occurrence, index int) []*occurrence {
	var out []*occurrence
	for _, ev := range a.events {
		if !strings.HasSuffix(ev.Type, "StateEntered") {
			continue
		}
		if o := a.byID[ev.ID]; o != nil && o.inIteration(m, index) {
			out = append(out, o)
		}
	}
	return out
}
