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
	statusCaught    = "caught"  // failed, and handled by a Catch
	statusWarning   = "warning" // succeeded, with a result its warning rule judges a warning
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
	last         time.Time // its latest event's: when it failed or was cancelled
	input        string
	output       string
	err, cause   string
	retries      int
	failedBefore bool
	iterations   map[int]string // Map iteration index → status
	iteration    int            // the index of the container's iteration it runs in, or -1
	// attempt is the container's attempt it was entered in: a retried
	// Parallel or Map starts its branches or iterations again
	// (ParallelStateStarted, MapStateStarted), a new attempt.
	attempt int
	// For a Parallel or Map: its attempts so far, and the attempt each
	// of a Map's iterations last started in.
	attempts     int
	iterAttempts map[int]int
	// tries are its attempts that failed and were retried or redriven
	// in place.
	tries []try
	// tryStarted is when its current try started (entered, retried or
	// redriven).
	tryStarted time.Time
	// childExecution is the execution a states:startExecution task
	// started.
	childExecution string
	// mapRun is the map run a distributed Map started.
	mapRun string
}

// try is an attempt of an occurrence that failed and was retried or
// redriven.
type try struct {
	started    time.Time
	err, cause string
}

// again records that the occurrence runs again at t: its try so far
// failed and becomes an earlier one.
func (o *occurrence) again(t time.Time) {
	o.tries = append(o.tries, try{started: o.tryStarted, err: o.err, cause: o.cause})
	o.status, o.failedBefore, o.err, o.cause = statusRunning, false, "", ""
	o.tryStarted = t
}

func (o *occurrence) open() bool { return o.exited.IsZero() }

// ended is when the occurrence stopped running: when it exited, or when
// it failed or was cancelled; false while it runs.
func (o *occurrence) ended() (time.Time, bool) {
	switch {
	case !o.exited.IsZero():
		return o.exited, true
	case o.status == statusRunning || o.last.IsZero():
		return time.Time{}, false
	}
	return o.last, true
}

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
	current     map[*occurrence]bool  // computed by currentSet
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
			o := &occurrence{state: ev.detail("name"), kind: kind, status: statusRunning, entered: ev.Timestamp, tryStarted: ev.Timestamp,
				input: ev.detail("input"), iteration: -1}
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
			if o.container != nil {
				o.attempt = o.container.attempts
			}
			a.occurrences[o.state] = append(a.occurrences[o.state], o)
			o.last = ev.Timestamp
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
		if ev.Type != "ExecutionRedriven" {
			o.last = ev.Timestamp
		}
		switch {
		case ev.Type == "ExecutionRedriven":
			a.redrive(ev.Timestamp)
		case ev.Type == "ParallelStateStarted" || ev.Type == "MapStateStarted":
			// A Parallel or Map starts (again, when retried).
			if o.attempts > 0 {
				o.retries++
				o.again(ev.Timestamp)
			}
			o.attempts++
		case ev.Type == "MapRunRedriven" && o.failedBefore:
			// A distributed Map retried redrives its map run.
			o.retries++
			o.again(ev.Timestamp)
		case failureEvents[ev.Type]:
			o.status, o.failedBefore = statusFailed, true
			if e, c := ev.detail("error"), ev.detail("cause"); e != "" || c != "" || ev.Type != "ExecutionFailed" {
				o.err, o.cause = e, c
			}
			if prev != o && prev.status == statusRunning {
				// A branch's state failed its Parallel or Map.
				prev.status, prev.err, prev.cause = statusFailed, o.err, o.cause
				prev.last = ev.Timestamp
			}
		case abortedEvents[ev.Type]:
			if o.status == statusRunning {
				o.status = statusCancelled
			} else if o.container != nil {
				// Linked to the failure that stopped its branch or
				// iteration, as AWS links it: what still runs beside the
				// failure was stopped.
				a.cancelInside(o.container, ev.Timestamp)
			}
		case rescheduledEvents[ev.Type] && o.failedBefore:
			o.retries++
			o.again(ev.Timestamp)
		case strings.HasPrefix(ev.Type, "MapIteration"):
			var index int
			_ = json.Unmarshal(ev.Details["index"], &index)
			if ev.Type == "MapIterationStarted" {
				iterationStarts[ev.ID] = index
				if o.iterAttempts == nil {
					o.iterAttempts = map[int]int{}
				}
				o.iterAttempts[index] = o.attempts
			}
			if o.iterations == nil {
				o.iterations = map[int]string{}
			}
			o.iterations[index] = iterationStatus(ev.Type)
		case ev.Type == "MapRunStarted":
			o.mapRun = ev.detail("mapRunArn")
		case ev.Type == "TaskSubmitted" || ev.Type == "TaskSucceeded":
			if arn := childExecution(ev); arn != "" {
				o.childExecution = arn
			}
		}
	}
	// States still in progress when the execution ended: they ran until
	// its last event.
	var end time.Time
	if len(events) > 0 {
		end = events[len(events)-1].Timestamp
	}
	for _, list := range a.occurrences {
		for _, o := range list {
			if o.status != statusRunning || executionStatus == "RUNNING" {
				continue
			}
			o.last = end
			if executionStatus == "FAILED" {
				o.status = statusFailed
			} else {
				o.status = statusCancelled
			}
		}
	}
	return a
}

// redrive: the execution runs again from where it stopped. A Parallel or
// Map that failed because of its branches or iterations runs again in
// place (those that did not succeed start again, no new attempt); any
// other state that failed is entered again (a new occurrence).
func (a *analysis) redrive(t time.Time) {
	for _, list := range a.occurrences {
		for _, o := range list {
			if o.open() && (o.kind == "Parallel" || o.kind == "Map") {
				o.again(t)
			}
		}
	}
}

// childExecution is the ARN of the execution a states:startExecution
// task started, from its TaskSubmitted or TaskSucceeded output
// (ExecutionArn for .sync, executionArn otherwise).
func childExecution(ev *event) string {
	if ev.detail("resourceType") != "states" || !strings.HasPrefix(ev.detail("resource"), "startExecution") {
		return ""
	}
	var out struct {
		ExecutionArn string
		Lower        string `json:"executionArn"`
	}
	if json.Unmarshal([]byte(ev.detail("output")), &out) != nil {
		return ""
	}
	if out.ExecutionArn != "" {
		return out.ExecutionArn
	}
	return out.Lower
}

// cancelInside marks cancelled the occurrences still running inside
// container, at any depth, at t.
func (a *analysis) cancelInside(container *occurrence, t time.Time) {
	for _, list := range a.occurrences {
		for _, o := range list {
			if o.status != statusRunning {
				continue
			}
			for c := o.container; c != nil; c = c.container {
				if c == container {
					o.status, o.last = statusCancelled, t
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

// precedence orders the statuses of a state's current occurrences: a
// state run many times at once (in a Map's iterations) shows the most
// telling.
var precedence = map[string]int{statusRunning: 5, statusFailed: 4, statusCaught: 3, statusCancelled: 2, statusSucceeded: 1}

// attemptKey groups the occurrences of a state that are attempts of one
// run: the same state in the same attempt of the same container (and
// iteration). The last of a group is the one that counts; those before it
// failed and were redriven.
type attemptKey struct {
	state     string
	container *occurrence
	attempt   int
	iteration int
}

func keyOf(o *occurrence) attemptKey {
	return attemptKey{o.state, o.container, o.attempt, o.iteration}
}

// currentSet computes which occurrences are current: the last attempt
// of their run, in the current attempt of a current container. The
// graph shows those; the others are earlier attempts.
func (a *analysis) currentSet() map[*occurrence]bool {
	if a.current != nil {
		return a.current
	}
	last := map[attemptKey]*occurrence{}
	for _, list := range a.occurrences {
		for _, o := range list {
			last[keyOf(o)] = o // in the order entered
		}
	}
	a.current = map[*occurrence]bool{}
	memo := map[*occurrence]bool{}
	var cur func(o *occurrence) bool
	cur = func(o *occurrence) bool {
		if v, ok := memo[o]; ok {
			return v
		}
		v := last[keyOf(o)] == o
		if v && o.container != nil {
			c := o.container
			if o.iteration >= 0 && c.iterAttempts != nil {
				v = o.attempt >= c.iterAttempts[o.iteration]
			} else {
				v = o.attempt == c.attempts
			}
			v = v && cur(c)
		}
		memo[o] = v
		return v
	}
	for _, list := range a.occurrences {
		for _, o := range list {
			if cur(o) {
				a.current[o] = true
			}
		}
	}
	return a.current
}

// statuses returns the status of every state whose current attempt ran
// (a state that ran in earlier attempts only is left out: not run).
func (a *analysis) statuses() map[string]string {
	cur := a.currentSet()
	out := make(map[string]string, len(a.occurrences))
	for name, list := range a.occurrences {
		best := ""
		for _, o := range list {
			if cur[o] && precedence[o.status] > precedence[best] {
				best = o.status
			}
		}
		if best != "" {
			out[name] = best
		}
	}
	return out
}

// retries returns how many times each state that can retry (Task,
// Parallel, Map) was retried, in all its occurrences.
func (a *analysis) retries() map[string]int {
	out := map[string]int{}
	for name, list := range a.occurrences {
		for _, o := range list {
			switch o.kind {
			case "Task", "Parallel", "Map":
				out[name] += o.retries
			}
		}
	}
	return out
}

// latest returns the last current occurrence of a state (the one the
// graph shows), or nil.
func (a *analysis) latest(state string) *occurrence {
	cur := a.currentSet()
	list := a.occurrences[state]
	for i := len(list) - 1; i >= 0; i-- {
		if cur[list[i]] {
			return list[i]
		}
	}
	return nil
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
