package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"stepwise/asl"
	"stepwise/service"
	"stepwise/sfnapi"
)

// eventRow is an event in the history table.
type eventRow struct {
	*event
	State     string
	ElapsedMs int64
	Details   string
}

func (c *Console) execution(w http.ResponseWriter, r *http.Request) {
	arn := r.PathValue("arn")
	x, err := c.svc.DescribeExecution(r.Context(), &service.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		c.fail(w, r, arn, err)
		return
	}
	events, err := c.history(r, arn)
	if err != nil {
		c.fail(w, r, arn, err)
		return
	}
	a := analyze(events, x.Status)
	def := c.definitionOf(r, x)
	g := graphOf(def)
	runs, parent := c.mapRuns(r, x)
	statuses := a.statuses()
	showMapRuns(a, def, g, statuses, runs)
	warnings := c.warnings(r, arn)
	markWarnings(statuses, warnings)
	ops := c.operatorOf(r, x, g)
	markHeld(statuses, ops)
	var stop *time.Time
	if x.StopDate != nil {
		stop = (*time.Time)(x.StopDate)
	}
	// The history table shows a page of events at a time.
	from := 0
	if v := r.URL.Query().Get("from"); v != "" {
		fmt.Sscan(v, &from)
	}
	from = max(0, min(from, len(events)))
	to := min(from+historyPage, len(events))
	rows := make([]eventRow, 0, to-from)
	start := time.Time(x.StartDate)
	for _, ev := range events[from:to] {
		rows = append(rows, eventRow{event: ev, State: stateOf(ev, a), ElapsedMs: elapsedMs(start, ev.Timestamp), Details: prettyJSON(string(ev.Raw))})
	}
	end := c.now()
	if stop != nil {
		end = *stop
	}
	var late []LateJob
	lateStates := map[string]bool{}
	if x.Status == "RUNNING" {
		late = c.lateJobs(r.Context(), x.StateMachineArn, arn, events, x.Status)
		for _, j := range late {
			lateStates[j.State] = true
		}
	}
	lang := language(r)
	c.render(w, http.StatusOK, "execution", struct {
		page
		Timeline *Timeline
		Late     []LateJob
		X        *service.DescribeExecutionOutput
		Graph    *graph
		States   map[string]string
		Retries  map[string]int
		Events   []eventRow
		Total    int
		From, To int
		Next     int
		Input    string
		Output   string
		MapRuns  []mapRunView
		Parent   string // the parent execution of a map run's child
		Machine  string // the state machine's page (the parent's, for a child)
		Name     string // the state machine's name, for the breadcrumb
		By       string // the execution that started this one (states:startExecution)
		Cost     costView
		Duration string
		Warnings []service.ExecutionWarning
		Ops      *operatorView
	}{c.newPage(r, x.Name), timelineOf(a, start, end, lateStates, lang), late, x, g, statuses, a.retries(), rows, len(events), from + 1, to, nextFrom(to, len(events)),
		prettyJSON(deref(x.Input)), prettyJSON(deref(x.Output)), runs, parent, machineOf(x.StateMachineArn),
		nameOf(machineOf(x.StateMachineArn)), startedBy(deref(x.Input)), c.cost(x, events),
		formatDuration(language(r), runningFor(time.Time(x.StartDate), stop, events, c.now())), warnings, ops})
}

// mapRunView is a map run on its execution's page: its counts and its
// first children.
type mapRunView struct {
	Run        *service.DescribeMapRunOutput
	Anchor     string // the id of its section
	Items      mapRunCounts
	Executions mapRunCounts
	Children   []service.ExecutionListItem
	More       bool
}

type mapRunCounts struct {
	Pending, Running, Succeeded, Failed, TimedOut, Aborted, Total int64
}

// mapRunChildren is how many children of a map run its execution's page
// lists.
const mapRunChildren = 100

// mapRuns are the map runs an execution started, and for a map run's
// child the execution that started it. What cannot be read is left out.
func (c *Console) mapRuns(r *http.Request, x *service.DescribeExecutionOutput) ([]mapRunView, string) {
	ctx := r.Context()
	parent := ""
	if x.MapRunArn != "" {
		if d, err := c.svc.DescribeMapRun(ctx, &service.DescribeMapRunInput{MapRunArn: x.MapRunArn}); err == nil {
			parent = d.ExecutionArn
		}
	}
	list, err := c.svc.ListMapRuns(ctx, &service.ListMapRunsInput{ExecutionArn: x.ExecutionArn})
	if err != nil {
		return nil, parent
	}
	var out []mapRunView
	for _, it := range list.MapRuns {
		d, err := c.svc.DescribeMapRun(ctx, &service.DescribeMapRunInput{MapRunArn: it.MapRunArn})
		if err != nil {
			continue
		}
		v := mapRunView{Run: d, Anchor: mapRunAnchor(d.MapRunArn)}
		_ = json.Unmarshal(d.ItemCounts, &v.Items)
		_ = json.Unmarshal(d.ExecutionCounts, &v.Executions)
		if kids, err := c.svc.ListExecutions(ctx, &service.ListExecutionsInput{MapRunArn: it.MapRunArn, MaxResults: ptr(mapRunChildren)}); err == nil {
			v.Children, v.More = kids.Executions, kids.NextToken != ""
		}
		out = append(out, v)
	}
	return out, parent
}

func nextFrom(to, total int) int {
	if to < total {
		return to
	}
	return -1
}

// stateOf names the state an event belongs to, for the history table.
func stateOf(ev *event, a *analysis) string { return a.owners[ev.ID] }

// history reads an execution's whole history.
func (c *Console) history(r *http.Request, arn string) ([]*event, error) {
	var events []*event
	in := &service.GetExecutionHistoryInput{ExecutionArn: arn, MaxResults: ptr(1000)}
	for {
		out, err := c.svc.GetExecutionHistory(r.Context(), in)
		if err != nil {
			return nil, err
		}
		for _, raw := range out.Events {
			ev, err := parseEvent(raw)
			if err != nil {
				return nil, err
			}
			events = append(events, ev)
		}
		if out.NextToken == "" {
			return events, nil
		}
		in.NextToken = &out.NextToken
	}
}

// executionStatus answers the live graph's poll.
func (c *Console) executionStatus(w http.ResponseWriter, r *http.Request) {
	arn := r.URL.Query().Get("arn")
	x, err := c.svc.DescribeExecution(r.Context(), &service.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		c.jsonError(w, err)
		return
	}
	events, err := c.history(r, arn)
	if err != nil {
		c.jsonError(w, err)
		return
	}
	a := analyze(events, x.Status)
	statuses := a.statuses()
	if a.hasMapRun() {
		runs, _ := c.mapRuns(r, x)
		showMapRuns(a, c.definitionOf(r, x), nil, statuses, runs)
	}
	warnings := c.warnings(r, arn)
	markWarnings(statuses, warnings)
	ops := c.operatorOf(r, x, nil)
	markHeld(statuses, ops)
	out := map[string]any{"status": x.Status, "states": statuses, "warnings": len(warnings), "retries": a.retries(),
		"output": prettyJSON(deref(x.Output)), "error": deref(x.Error), "cause": deref(x.Cause)}
	if x.StopDate != nil {
		out["stopDate"] = formatTime(time.Time(*x.StopDate))
	}
	if ops != nil {
		out["held"], out["suspended"] = ops.Held, ops.Suspended
	}
	writeJSON(w, http.StatusOK, out)
}

// stateDetails answers a click on a node: the state's latest entry.
func (c *Console) stateDetails(w http.ResponseWriter, r *http.Request) {
	arn, state := r.URL.Query().Get("arn"), r.URL.Query().Get("state")
	x, err := c.svc.DescribeExecution(r.Context(), &service.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		c.jsonError(w, err)
		return
	}
	events, err := c.history(r, arn)
	if err != nil {
		c.jsonError(w, err)
		return
	}
	a := analyze(events, x.Status)
	if v := r.URL.Query().Get("iteration"); v != "" {
		c.iterationDetails(w, r, a, x, state, v)
		return
	}
	out := map[string]any{"state": state, "status": statusNotRun}
	if list := a.occurrences[state]; len(list) > 0 {
		out["retries"] = a.retries()[state]
		out["runs"] = len(list)
		if at := a.attempts(state); at != nil {
			out["attempts"] = at
		}
	}
	if a.latest(state) == nil && a.hasMapRun() {
		// A distributed Map's inner state ran in its map run.
		for m, inner := range distributedMaps(c.definitionOf(r, x)) {
			if mo := a.latest(m); mo != nil && slices.Contains(inner, state) {
				if run := c.mapRunOf(r, x, mo); run != nil {
					out["status"], out["mapRun"] = statusMapRun, run
				}
			}
		}
	}
	if o := a.latest(state); o != nil {
		out["status"] = o.status
		out["input"] = prettyJSON(o.input)
		out["output"] = prettyJSON(o.output)
		out["error"], out["cause"] = o.err, o.cause
		st := c.definitionState(r, x.StateMachineArn, state)
		if o.kind == "Fail" && o.err == "" && st != nil {
			// A Fail state's error is its own, written in the definition.
			out["error"], out["cause"] = st.Error, st.Cause
		}
		if st != nil && len(st.Branches) > 0 {
			// A Parallel's branches, each with the most telling status
			// of its states.
			statuses := a.statuses()
			var branches []map[string]any
			for i, b := range st.Branches {
				best := statusNotRun
				for _, name := range b.Order {
					if s := statuses[name]; precedence[s] > precedence[best] {
						best = s
					}
				}
				// Numbered from 1, as the graph numbers them.
				branches = append(branches, map[string]any{"index": i, "number": i + 1, "start": b.StartAt, "status": best})
			}
			out["branches"] = branches
		}
		if o.childExecution != "" {
			out["child"] = map[string]string{"arn": o.childExecution, "href": executionHref(o.childExecution)}
		}
		if run := c.mapRunOf(r, x, o); run != nil {
			out["mapRun"] = run
		}
		if end, ok := o.ended(); ok {
			out["durationMs"] = elapsedMs(o.entered, end)
		}
		var its []map[string]any
		for i := 0; i < len(o.iterations); i++ {
			its = append(its, map[string]any{"index": i, "status": o.iterations[i]})
		}
		if its != nil {
			out["iterations"] = its
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// iterationEventLimit bounds the events an iteration's details list.
const iterationEventLimit = 1000

// iterationDetails answers a click on one of a Map's iterations: the
// states that ran within it, each with its input, output and error, and
// its events.
func (c *Console) iterationDetails(w http.ResponseWriter, r *http.Request, a *analysis, x *service.DescribeExecutionOutput, state, v string) {
	start := time.Time(x.StartDate)
	index, err := strconv.Atoi(v)
	m := a.latest(state)
	if err != nil || m == nil || m.kind != "Map" {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "No iteration " + v + " of state " + state})
		return
	}
	status, ok := m.iterations[index]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "No iteration " + v + " of state " + state})
		return
	}
	states := []map[string]any{}
	for _, o := range a.iterationOccurrences(m, index) {
		st := map[string]any{"state": o.state, "type": o.kind, "status": o.status, "retries": o.retries,
			"input": prettyJSON(o.input), "output": prettyJSON(o.output), "error": o.err, "cause": o.cause}
		if o.kind == "Fail" && o.err == "" {
			// A Fail state's error is its own, written in the definition.
			if def := c.definitionState(r, x.StateMachineArn, o.state); def != nil {
				st["error"], st["cause"] = def.Error, def.Cause
			}
		}
		if end, ok := o.ended(); ok {
			st["durationMs"] = elapsedMs(o.entered, end)
		}
		states = append(states, st)
	}
	evs := a.iterationEvents(m, index)
	list := make([]map[string]any, 0, min(len(evs), iterationEventLimit))
	for _, ev := range evs[:min(len(evs), iterationEventLimit)] {
		list = append(list, map[string]any{"id": ev.ID, "type": ev.Type, "step": a.owners[ev.ID],
			"elapsedMs": elapsedMs(start, ev.Timestamp), "timestamp": formatTime(ev.Timestamp)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"state": state, "iteration": index, "status": status,
		"states": states, "events": list, "totalEvents": len(evs)})
}

// definitionState returns a state of a state machine's definition.
func (c *Console) definitionState(r *http.Request, smArn, name string) *asl.State {
	sm, err := c.svc.DescribeStateMachine(r.Context(), &service.DescribeStateMachineInput{StateMachineArn: smArn})
	if err != nil {
		return nil
	}
	m, _ := asl.ParseWith([]byte(sm.Definition), asl.Options{Type: sm.Type})
	if m == nil {
		return nil
	}
	var find func(m *asl.StateMachine) *asl.State
	find = func(m *asl.StateMachine) *asl.State {
		if st, ok := m.States[name]; ok {
			return st
		}
		for _, st := range m.States {
			for _, b := range st.Branches {
				if found := find(b); found != nil {
					return found
				}
			}
			if st.ItemProcessor != nil {
				if found := find(st.ItemProcessor); found != nil {
					return found
				}
			}
		}
		return nil
	}
	return find(m)
}

func (c *Console) jsonError(w http.ResponseWriter, err error) {
	var apiErr *sfnapi.Error
	if errors.As(err, &apiErr) {
		status := http.StatusBadRequest
		if strings.HasSuffix(apiErr.Code, "DoesNotExist") {
			status = http.StatusNotFound
		}
		writeJSON(w, status, map[string]string{"__type": apiErr.Code, "message": apiErr.Message})
		return
	}
	writeJSON(w, http.StatusInternalServerError, map[string]string{"message": err.Error()})
}
