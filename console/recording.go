package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"stepwise/history"
	"stepwise/internal/boundedfile"
	"stepwise/internal/security/crossorigin"
	"stepwise/service"
	"stepwise/workflowtest"
)

// RecordingLimits bound what an execution's download as a test reads:
// a GET any page could make (an <img> of another site's, when the
// browser does not say where it comes from) must not cost the server
// more than this.
type RecordingLimits struct {
	// Children is the most child executions (of its distributed Maps,
	// nested ones included) a recording holds.
	Children int
	// Events is the most history events, the execution's and its
	// children's together, a recording reads.
	Events int
	// Bytes is the most bytes of those events (an event may hold 256 KiB
	// of input or output).
	Bytes int
}

// DefaultRecordingLimits are the console's limits: 1,000 child
// executions (a recording reads about 10 KB a child), 100,000 events and
// 64 MiB of them.
var DefaultRecordingLimits = RecordingLimits{Children: 1000, Events: 100000, Bytes: 64 << 20}

// recordingTooLarge is the refusal of an execution whose recording would
// pass the limits.
type recordingTooLarge struct{ what string }

func (e *recordingTooLarge) Error() string { return e.what }

// recording answers an execution's page's download: the execution as a
// test file of `stepwise test` (workflowtest.Record), read from the
// service in process as `stepwise test --record` reads it over HTTP.
// Only the console's own page may ask (a browser that says the request
// comes from another site is refused), and it reads at most the
// RecordingLimits, a page of histories and of child executions at a
// time: an execution past them is refused whole, with a message naming
// `stepwise test --record`, since a recording without some children's
// tasks would not replay.
func (c *Console) recording(w http.ResponseWriter, r *http.Request) {
	if crossorigin.Refused(r) {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "The download of an execution as a test is only for the console's own page: "+crossorigin.Message, http.StatusForbidden)
		return
	}
	arn := r.URL.Query().Get("arn")
	x, err := c.svc.DescribeExecution(r.Context(), &service.DescribeExecutionInput{ExecutionArn: arn})
	if err != nil {
		c.jsonError(w, err)
		return
	}
	sm, err := c.svc.DescribeStateMachineForExecution(r.Context(), &service.DescribeStateMachineForExecutionInput{ExecutionArn: arn})
	if err != nil {
		c.jsonError(w, err)
		return
	}
	// The run of a redriven execution: ?run=N (1 for the first), else
	// the latest.
	run := 0
	if v := r.URL.Query().Get("run"); v != "" {
		if run, err = strconv.Atoi(v); err != nil || run < 1 || run > x.RedriveCount+1 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": fmt.Sprintf("run %q: the execution has runs 1 to %d", v, x.RedriveCount+1)})
			return
		}
	}
	rec := &recorder{c: c, r: r, limits: c.recordingLimits}
	src, err := rec.read(arn, sm.Name, sm.Definition, x.Name)
	if src != nil {
		src.Run = run
	}
	var large *recordingTooLarge
	if errors.As(err, &large) {
		writeJSON(w, http.StatusConflict, map[string]string{"message": fmt.Sprintf("cannot record %s here: %s; "+
			"record it with `stepwise test --record %s --endpoint URL --out FILE`", arn, large.what, arn)})
		return
	}
	if err != nil {
		c.jsonError(w, err)
		return
	}
	data, err := workflowtest.Record(src)
	if err != nil {
		writeJSON(w, http.StatusConflict, map[string]string{"message": fmt.Sprintf("cannot record %s: %v", arn, err)})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	file := fileName(x.Name)
	if n, runs := workflowtest.RecordedRun(src); runs > 1 {
		// Which run it holds: in its name, its case's name and a header.
		file += "-run-" + strconv.Itoa(n)
		w.Header().Set("X-Stepwise-Recorded-Run", fmt.Sprintf("%d of %d", n, runs))
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", file+".test.json"))
	w.Write(data)
}

func init() {
	// runs are the runs of an execution redriven n times: 1 to n+1.
	funcs["runs"] = func(redrives int) []int {
		out := make([]int, 0, redrives+1)
		for i := 1; i <= redrives+1; i++ {
			out = append(out, i)
		}
		return out
	}
}

// recorder reads an execution for its recording, counting what it read
// against the limits.
type recorder struct {
	c                *Console
	r                *http.Request
	limits           RecordingLimits
	children, events int
	bytes            int
}

// read reads the execution and, in turn, the children of its map runs
// and of theirs (a distributed Map inside a distributed Map's
// processor).
func (rc *recorder) read(arn, machine, definition, name string) (*workflowtest.Source, error) {
	events, err := rc.history(arn)
	if err != nil {
		return nil, err
	}
	src := &workflowtest.Source{StateMachineName: machine, Definition: definition, ExecutionName: name, Events: events}
	if err := rc.mapChildren(src, events); err != nil {
		return nil, err
	}
	for i := 0; i < len(src.Children); i++ {
		if err := rc.mapChildren(src, src.Children[i]); err != nil {
			return nil, err
		}
	}
	return src, nil
}

// history is an execution's whole history as workflowtest reads it, a
// page at a time, within the limit of events.
func (rc *recorder) history(arn string) ([]*history.Event, error) {
	var events []*history.Event
	in := &service.GetExecutionHistoryInput{ExecutionArn: arn, MaxResults: ptr(1000)}
	for {
		out, err := rc.c.svc.GetExecutionHistory(rc.r.Context(), in)
		if err != nil {
			return nil, err
		}
		rc.events += len(out.Events)
		if rc.events > rc.limits.Events {
			return nil, &recordingTooLarge{fmt.Sprintf("its history and its child executions' hold more than %d events, "+
				"the most a recording made by the console reads", rc.limits.Events)}
		}
		for _, raw := range out.Events {
			if rc.bytes += len(raw); rc.bytes > rc.limits.Bytes {
				return nil, &recordingTooLarge{fmt.Sprintf("its history and its child executions' events hold more than %s, "+
					"the most a recording made by the console reads", boundedfile.Size(int64(rc.limits.Bytes)))}
			}
			ev, err := workflowtest.ParseEvent(json.RawMessage(raw))
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

// tooManyChildren is the refusal of more than the limit of children.
func (rc *recorder) tooManyChildren(more string) error {
	return &recordingTooLarge{fmt.Sprintf("its distributed Maps ran %s child executions, and a recording made by the console holds at most %d",
		more, rc.limits.Children)}
}

// mapChildren adds to src the histories of the child executions of the
// map runs that events started: a map run whose count of executions
// passes the limit is refused before any is read, and the children are
// listed a page at a time.
func (rc *recorder) mapChildren(src *workflowtest.Source, events []*history.Event) error {
	for _, ev := range events {
		if ev.MapRunStartedEventDetails == nil {
			continue
		}
		run := ev.MapRunStartedEventDetails.MapRunArn
		d, err := rc.c.svc.DescribeMapRun(rc.r.Context(), &service.DescribeMapRunInput{MapRunArn: run})
		if err != nil {
			return err
		}
		var counts struct {
			Total int64 `json:"total"`
		}
		if json.Unmarshal(d.ExecutionCounts, &counts) == nil && int64(rc.children)+counts.Total > int64(rc.limits.Children) {
			return rc.tooManyChildren(strconv.FormatInt(int64(rc.children)+counts.Total, 10))
		}
		in := &service.ListExecutionsInput{MapRunArn: run}
		for {
			in.MaxResults = ptr(min(1000, rc.limits.Children-rc.children+1))
			out, err := rc.c.svc.ListExecutions(rc.r.Context(), in)
			if err != nil {
				return err
			}
			for _, child := range out.Executions {
				if rc.children++; rc.children > rc.limits.Children {
					return rc.tooManyChildren("more than " + strconv.Itoa(rc.limits.Children))
				}
				h, err := rc.history(child.ExecutionArn)
				if err != nil {
					return err
				}
				src.Children = append(src.Children, h)
			}
			if out.NextToken == "" {
				break
			}
			in.NextToken = &out.NextToken
		}
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func fileName(s string) string { return unsafeName.ReplaceAllString(s, "-") }
