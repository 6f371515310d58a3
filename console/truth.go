package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"stepwise/asl"
	"stepwise/service"
)

// What the execution page adds to the history's colors: the map runs of
// distributed Maps on their inner states, a state's earlier attempts, the
// child a states:startExecution task started and the parent that started
// an execution.

// statusMapRun colors the inner states of a distributed Map: they ran in
// the map run's child executions, not in this history.
const statusMapRun = "map-run"

// attemptLimit bounds the earlier attempts a state's details list.
const attemptLimit = 50

// attemptView is one attempt of a state in its details.
type attemptView struct {
	Status     string `json:"status"`
	Started    string `json:"started"`
	DurationMs *int64 `json:"durationMs,omitempty"`
	Error      string `json:"error,omitempty"`
	Cause      string `json:"cause,omitempty"`
	Current    bool   `json:"current,omitempty"`
}

// attempts lists the attempts of a state, oldest first: the tries each
// occurrence failed and retried, and the occurrences the graph no longer
// shows (failed and redriven, or run in a container's earlier attempt),
// then the one it shows. Nil when the state ran once.
func (a *analysis) attempts(state string) []attemptView {
	cur := a.currentSet()
	shown := a.latest(state)
	var out []attemptView
	for _, o := range a.occurrences[state] {
		if cur[o] && o != shown {
			continue // another iteration's run, not an attempt of this one
		}
		for _, t := range o.tries {
			out = append(out, attemptView{Status: statusFailed, Started: formatTime(t.started), Error: t.err, Cause: t.cause})
		}
		v := attemptView{Status: o.status, Started: formatTime(o.tryStarted), Error: o.err, Cause: o.cause, Current: o == shown}
		if end, ok := o.ended(); ok {
			ms := elapsedMs(o.tryStarted, end)
			v.DurationMs = &ms
		}
		out = append(out, v)
	}
	if len(out) < 2 {
		return nil
	}
	if len(out) > attemptLimit {
		out = out[len(out)-attemptLimit:]
	}
	return out
}

// summary is a map run's child executions' counts, in a line.
func (v *mapRunView) summary() string {
	e := v.Executions
	return fmt.Sprintf("%d/%d ✓ · %d ✕ · %d ●", e.Succeeded, e.Total, e.Failed+e.TimedOut+e.Aborted, e.Running+e.Pending)
}

// distributedMaps returns the distributed Map states of a definition, at
// any depth, with the names of the states inside each.
func distributedMaps(m *asl.StateMachine) map[string][]string {
	out := map[string][]string{}
	var inner func(m *asl.StateMachine, into *[]string)
	inner = func(m *asl.StateMachine, into *[]string) {
		for _, name := range m.Order {
			*into = append(*into, name)
			st := m.States[name]
			for _, b := range st.Branches {
				inner(b, into)
			}
			if st.ItemProcessor != nil {
				inner(st.ItemProcessor, into)
			}
		}
	}
	var walk func(m *asl.StateMachine)
	walk = func(m *asl.StateMachine) {
		for _, name := range m.Order {
			st := m.States[name]
			for _, b := range st.Branches {
				walk(b)
			}
			if st.ItemProcessor == nil {
				continue
			}
			if st.ProcessorMode == asl.ModeDistributed {
				var names []string
				inner(st.ItemProcessor, &names)
				out[name] = names
			} else {
				walk(st.ItemProcessor)
			}
		}
	}
	if m != nil {
		walk(m)
	}
	return out
}

// showMapRuns colors the inner states of each distributed Map whose map
// run this page lists (statusMapRun: their runs are the map run's
// children) and labels the Map's processor with the map run's counts.
func showMapRuns(a *analysis, def *asl.StateMachine, g *graph, statuses map[string]string, runs []mapRunView) {
	if g == nil {
		return
	}
	for mapState, inner := range distributedMaps(def) {
		o := a.latest(mapState)
		if o == nil || o.mapRun == "" {
			continue
		}
		for i := range runs {
			if runs[i].Run.MapRunArn != o.mapRun {
				continue
			}
			for _, name := range inner {
				if _, ran := statuses[name]; !ran {
					statuses[name] = statusMapRun
				}
			}
			for k := range g.Groups {
				if g.Groups[k].ID == mapState+"/processor" {
					g.Groups[k].Label = mapState + " · " + runs[i].summary()
				}
			}
		}
	}
}

// definitionOf is the definition an execution runs: for a map run's
// child, the Map's ItemProcessor. Nil when it cannot be read.
func (c *Console) definitionOf(r *http.Request, x *service.DescribeExecutionOutput) *asl.StateMachine {
	var def *asl.StateMachine
	if x.MapRunArn != "" {
		if d, err := c.svc.DescribeStateMachineForExecution(r.Context(), &service.DescribeStateMachineForExecutionInput{ExecutionArn: x.ExecutionArn}); err == nil {
			def, _ = asl.ParseWith([]byte(d.Definition), asl.Options{})
		}
	} else if sm, err := c.svc.DescribeStateMachine(r.Context(), &service.DescribeStateMachineInput{StateMachineArn: x.StateMachineArn}); err == nil {
		def, _ = asl.ParseWith([]byte(sm.Definition), asl.Options{Type: sm.Type})
	}
	return def
}

// mapRunOf is the map run a distributed Map's occurrence started, for
// its details: its counts and its section of the page. Nil when it
// started none, or the map run cannot be read.
func (c *Console) mapRunOf(r *http.Request, x *service.DescribeExecutionOutput, o *occurrence) map[string]any {
	if o.mapRun == "" {
		return nil
	}
	runs, _ := c.mapRuns(r, x)
	for _, v := range runs {
		if v.Run.MapRunArn == o.mapRun {
			return map[string]any{"arn": o.mapRun, "href": "#" + v.Anchor, "status": v.Run.Status,
				"items": v.Items, "executions": v.Executions, "summary": v.summary()}
		}
	}
	return nil
}

// hasMapRun reports whether a distributed Map of the history started a
// map run.
func (a *analysis) hasMapRun() bool {
	for _, list := range a.occurrences {
		for _, o := range list {
			if o.mapRun != "" {
				return true
			}
		}
	}
	return false
}

// mapRunAnchor is the id of a map run's section on its execution's page.
func mapRunAnchor(arn string) string {
	return "map-run-" + arn[strings.LastIndexByte(arn, ':')+1:]
}

// startedBy is the execution that started this one with
// states:startExecution, as its input names it
// (AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID), or "".
func startedBy(input string) string {
	var in struct {
		Parent string `json:"AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID"`
	}
	if json.Unmarshal([]byte(input), &in) != nil || !strings.HasPrefix(in.Parent, "arn:") {
		return ""
	}
	return in.Parent
}

// executionHref is an execution's page.
func executionHref(arn string) string { return "/executions/" + url.PathEscape(arn) }

// nameOf is what follows a state machine's ARN's resource type (its
// name, and a version's number or an alias's name), for the breadcrumb.
func nameOf(arn string) string {
	if parts := strings.Split(arn, ":"); len(parts) >= 7 {
		return strings.Join(parts[6:], ":")
	}
	return arn
}

// runningFor is how long an execution has run: from its start to its
// stop, or while it runs to the later of its last event's time and now,
// both execution time (a scaled clock runs ahead of the wall clock);
// never negative.
func runningFor(start time.Time, stop *time.Time, events []*event, now time.Time) time.Duration {
	end := now
	if stop != nil {
		end = *stop
	} else if len(events) > 0 && events[len(events)-1].Timestamp.After(end) {
		end = events[len(events)-1].Timestamp
	}
	return max(0, end.Sub(start))
}
