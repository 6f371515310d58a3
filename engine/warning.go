package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"stepwise/engine/start"
	"stepwise/history"
	"stepwise/internal/warnrule"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// policiesText is what an execution's row records of its start's rules:
// its failure policies, and its warning rules with them
// (warnrule.Embed), fixed for its life as policies are.
func policiesText(p *start.Params) string {
	text := p.Policies.Text()
	if with, err := warnrule.Embed(text, p.Warnings); err == nil {
		return with
	}
	return text
}

// Warning is a state of an execution that ended with warning: its Task
// succeeded with a result its warning rule judges a warning.
type Warning struct {
	// State is the state's name.
	State string
	// EventID is the id of the event of the Task's result (TaskSucceeded,
	// LambdaFunctionSucceeded or ActivitySucceeded).
	EventID int64
	// RC is the return code the result carries, when HasRC.
	RC    int64
	HasRC bool
}

// Warnings judges an execution's history with the warning rules it
// started with (stored with its policies): the states that ended with
// warning, in the order of their results.
func Warnings(ctx context.Context, ex store.Executor, row *store.Execution) ([]Warning, error) {
	rs, err := warnrule.FromPolicies(row.Policies)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	events, err := storedHistory(ctx, ex, row.Arn)
	if err != nil {
		return nil, err
	}
	return JudgeHistory(rs, events), nil
}

// decodeStoredEvent reads the parts of a stored event a judgment needs (the
// stored timestamp is the wire's epoch seconds, left out).
func decodeStoredEvent(body []byte) (*history.Event, error) {
	var ev struct {
		history.Event
		Timestamp json.RawMessage `json:"timestamp"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, err
	}
	return &ev.Event, nil
}

// JudgeHistory judges the Tasks' results in events with rs.
func JudgeHistory(rs warnrule.Rules, events []*history.Event) []Warning {
	if len(rs) == 0 {
		return nil
	}
	byID := make(map[int64]*history.Event, len(events))
	var out []Warning
	for _, ev := range events {
		byID[ev.ID] = ev
		output, ok := TaskResult(ev)
		if !ok {
			continue
		}
		state := enteredState(byID, ev)
		if w, ok := judge(rs, state, output); ok {
			w.EventID = ev.ID
			out = append(out, w)
		}
	}
	return out
}

// judge judges one Task's result (JSON text) of state with rs.
func judge(rs warnrule.Rules, state, output string) (Warning, bool) {
	r := rs[state]
	if r == nil {
		return Warning{}, false
	}
	v, err := jsonvalue.ParseString(output)
	if err != nil {
		return Warning{}, false
	}
	j := r.Judge(v)
	if !j.Warning {
		return Warning{}, false
	}
	return Warning{State: state, RC: j.RC, HasRC: j.HasRC}, true
}

// TaskResult is the result a Task's success event carries.
func TaskResult(ev *history.Event) (string, bool) {
	switch {
	case ev.Type == history.EventTaskSucceeded && ev.TaskSucceededEventDetails != nil && ev.TaskSucceededEventDetails.Output != nil:
		return *ev.TaskSucceededEventDetails.Output, true
	case ev.Type == history.EventLambdaFunctionSucceeded && ev.LambdaFunctionSucceededEventDetails != nil:
		return ev.LambdaFunctionSucceededEventDetails.Output, true
	case ev.Type == history.EventActivitySucceeded && ev.ActivitySucceededEventDetails != nil:
		return ev.ActivitySucceededEventDetails.Output, true
	}
	return "", false
}

var taskStateEntered = history.StateEnteredType("Task")

// enteredState follows ev's previous events back to the TaskStateEntered
// of its state.
func enteredState(byID map[int64]*history.Event, ev *history.Event) string {
	for i := 0; ev != nil && i < 64; i++ {
		if ev.Type == taskStateEntered && ev.StateEnteredEventDetails != nil {
			return ev.StateEnteredEventDetails.Name
		}
		ev = byID[ev.PreviousEventID]
	}
	return ""
}

// StepWarnings judges the Tasks' results a committed step added: those
// of its execution's warning rules that say warning. The observers call
// it on each step (metrics count them).
func StepWarnings(s *CommittedStep) []Warning {
	if s.Execution == nil || s.Task == nil {
		return nil
	}
	var rs warnrule.Rules
	for _, ev := range s.Events {
		output, ok := TaskResult(ev)
		if !ok {
			continue
		}
		if rs == nil {
			var err error
			if rs, err = warnrule.FromPolicies(s.Execution.Policies); err != nil || len(rs) == 0 {
				return nil
			}
		}
		if w, ok := judge(rs, s.Task.StateName, output); ok {
			w.EventID = ev.ID
			return []Warning{w}
		}
	}
	return nil
}

// storedHistory reads an execution's whole history from the store, a
// page at a time.
func storedHistory(ctx context.Context, ex store.Executor, arn string) ([]*history.Event, error) {
	var events []*history.Event
	p := &store.EventListParams{ExecutionArn: arn, Limit: 1000}
	for {
		page, err := ex.EventList(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("list history: %w", err)
		}
		for _, e := range page {
			ev, err := decodeStoredEvent(e.Body)
			if err != nil {
				return nil, fmt.Errorf("history event %d: %w", e.ID, err)
			}
			events = append(events, ev)
		}
		if len(page) < p.Limit {
			return events, nil
		}
		p.AfterID = page[len(page)-1].ID
	}
}
