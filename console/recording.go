package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"

	"stepwise/history"
	"stepwise/service"
	"stepwise/workflowtest"
)

// recording answers an execution's page's download: the execution as a
// test file of `stepwise test` (workflowtest.Record), read from the
// service in process as `stepwise test --record` reads it over HTTP.
func (c *Console) recording(w http.ResponseWriter, r *http.Request) {
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
	events, err := c.rawHistory(r, arn)
	if err != nil {
		c.jsonError(w, err)
		return
	}
	src := &workflowtest.Source{StateMachineName: sm.Name, Definition: sm.Definition, ExecutionName: x.Name, Events: events}
	// The map runs of the execution and, in turn, of its children (a
	// distributed Map inside a distributed Map's processor).
	if err := c.recordChildren(r, src, events); err != nil {
		c.jsonError(w, err)
		return
	}
	for i := 0; i < len(src.Children); i++ {
		if err := c.recordChildren(r, src, src.Children[i]); err != nil {
			c.jsonError(w, err)
			return
		}
	}
	data, err := workflowtest.Record(src)
	if err != nil {
		writeJSON(w, http.StatusConflict, map[string]string{"message": fmt.Sprintf("cannot record %s: %v", arn, err)})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fileName(x.Name)+".test.json"))
	w.Write(data)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func fileName(s string) string { return unsafeName.ReplaceAllString(s, "-") }

// rawHistory is an execution's whole history as workflowtest reads it.
func (c *Console) rawHistory(r *http.Request, arn string) ([]*history.Event, error) {
	var events []*history.Event
	in := &service.GetExecutionHistoryInput{ExecutionArn: arn, MaxResults: ptr(1000)}
	for {
		out, err := c.svc.GetExecutionHistory(r.Context(), in)
		if err != nil {
			return nil, err
		}
		for _, raw := range out.Events {
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

// recordChildren adds to src the histories of the child executions of
// the map runs that events started.
func (c *Console) recordChildren(r *http.Request, src *workflowtest.Source, events []*history.Event) error {
	for _, ev := range events {
		if ev.MapRunStartedEventDetails == nil {
			continue
		}
		in := &service.ListExecutionsInput{MapRunArn: ev.MapRunStartedEventDetails.MapRunArn, MaxResults: ptr(1000)}
		for {
			out, err := c.svc.ListExecutions(r.Context(), in)
			if err != nil {
				return err
			}
			for _, child := range out.Executions {
				h, err := c.rawHistory(r, child.ExecutionArn)
				if err != nil {
					return err
				}
				src.Children = append(src.Children, h)
			}
			if out.NextToken == "" {
				return nil
			}
			in.NextToken = &out.NextToken
		}
	}
	return nil
}
