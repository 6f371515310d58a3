package engine

import (
	"context"
	"errors"
	"strings"

	"stepwise/engine/nested"
	"stepwise/engine/task"
	"stepwise/interp"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Nested executions (states:startExecution) are package nested's task
// runner; the engine is its host: it starts the children, records their
// parents' tasks submitted, and says when an execution ends.
type nestedHost struct{ e *Engine }

func (h nestedHost) Executor() store.Executor { return h.e.store.Executor() }

// Start starts a child as StartExecution does: its definition parsed, its
// failure policies read from its state machine's tags.
func (h nestedHost) Start(ctx context.Context, c *nested.Child) (*store.Execution, error) {
	e := h.e
	row, err := func() (*store.Execution, error) {
		m, err := e.machine(ctx, c.StateMachine.Arn, c.StateMachine.RevisionID)
		if err != nil {
			return nil, err
		}
		policies, err := PoliciesOf(ctx, e.store.Executor(), c.StateMachine.Arn)
		if err != nil {
			return nil, err
		}
		return e.StartExecution(ctx, &StartParams{StateMachine: c.StateMachine, Machine: m, ExecutionArn: c.Arn, Name: c.Name,
			Input: c.Input, InputValue: c.InputValue, InputParsed: true, VersionArn: c.VersionArn, AliasArn: c.AliasArn, Policies: policies, TraceHeader: c.TraceHeader})
	}()
	if errors.Is(err, task.ErrStopped) {
		return nil, sfnapi.NewError(sfnapi.CodeServiceUnavailable, "the server is shutting down")
	}
	return row, err
}

func (h nestedHost) Submitted(ctx context.Context, t *task.Task, output any) {
	_, _ = h.e.applyEvent(ctx, t.ExecutionArn, interp.Event{Kind: interp.TaskSubmitted, ID: t.ID, Output: output})
}

func (h nestedHost) WaitOn(parentArn, taskID, childArn string) bool {
	h.e.work.taskOnChild(parentArn, taskID, childArn)
	return h.e.work.has(parentArn, taskID)
}

func (h nestedHost) NotRunning(childArn string) { h.e.work.childEnded(childArn) }

// Stop stops a child as work: the clock must not skip the child on
// meanwhile.
func (h nestedHost) Stop(childArn string) {
	e := h.e
	e.work.stepBegan()
	go func() {
		defer e.work.stepEnded()
		if _, err := e.StopExecution(e.ctx, childArn, "", "The parent execution stopped its child."); err != nil && !errors.Is(err, errStopped) {
			e.log.ErrorContext(e.ctx, "engine: stop child failed", "execution_arn", childArn, "error", err)
		}
	}()
}

// childEnded tells what waits for an execution that ended: its map run,
// the clock's count of work, and the parents of package nested.
func (e *Engine) childEnded(row *store.Execution) {
	if row.MapRunArn != "" {
		e.mapRuns.ChildEnded(row)
	}
	e.work.childEnded(row.Arn)
	e.nested.ChildEnded(row)
}

// PoliciesOf reads the failure policies a state machine's tags set
// (interp.PoliciesFromTags); a tag that sets none that is known is
// ignored, as TagResource refuses it.
func PoliciesOf(ctx context.Context, ex store.Executor, smArn string) (interp.Policies, error) {
	tags, err := ex.TagList(ctx, smArn)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, t := range tags {
		if strings.HasPrefix(t.Key, interp.PolicyTagPrefix) {
			m[t.Key] = t.Value
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	ps, _ := interp.PoliciesFromTags(m)
	return ps, nil
}
