package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"stepwise/jsonvalue"
	"stepwise/service"
	"stepwise/stepwisetype"
	"stepwise/store"
)

// The states:startExecution integration starts a child execution on this
// engine. Its four forms differ in when the parent's task ends:
//
//	arn:aws:states:::states:startExecution                   at once: {ExecutionArn, StartDate}
//	arn:aws:states:::states:startExecution.sync              when the child ends: its description, Output as text
//	arn:aws:states:::states:startExecution.sync:2            when the child ends: its description, Output as JSON
//	arn:aws:states:::states:startExecution.waitForTaskToken  when SendTask* is called with the token
//
// A task dispatched again after a restart starts no second child: the
// child's name derives from the parent's task unless the Parameters name
// one, and an execution that exists already is joined.
const startExecutionResource = "arn:aws:states:::states:startExecution"

// children tracks the parents waiting for .sync children to end.
type children struct {
	mu      sync.Mutex
	waiters map[string][]childWaiter // child ARN → waiting parent tasks
}

type childWaiter struct {
	parentArn, taskID string
	v2                bool
	done              func(TaskResult)
}

func isStartExecution(resource string) bool {
	return resource == startExecutionResource || strings.HasPrefix(resource, startExecutionResource+".")
}

// startChild carries out a states:startExecution task.
func (e *Engine) startChild(ctx context.Context, t *Task, done func(TaskResult)) {
	mode := strings.TrimPrefix(t.Request.Resource, startExecutionResource)
	fail := func(format string, args ...any) {
		done(TaskResult{Failure: stepwisetype.Failuref(stepwisetype.ErrorTaskFailed, format, args...)})
	}
	params, _ := t.Request.Parameters.(*jsonvalue.Object)
	smArnV, _ := params.Get("StateMachineArn")
	smArn, _ := smArnV.(string)
	if smArn == "" {
		fail("The field 'StateMachineArn' is required.")
		return
	}
	input := "{}"
	if v, ok := params.Get("Input"); ok {
		if s, isString := v.(string); isString {
			input = s
		} else {
			input = jsonvalue.String(v)
		}
	}
	name := ""
	if v, ok := params.Get("Name"); ok {
		name, _ = v.(string)
	}
	if name == "" {
		sum := sha256.Sum256([]byte(t.ExecutionArn + "\x00" + t.ID))
		h := hex.EncodeToString(sum[:16])
		name = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	sm, err := e.store.Executor().StateMachineGet(ctx, smArn)
	if errors.Is(err, store.ErrNotFound) {
		fail("State Machine Does Not Exist: '%s'", smArn)
		return
	}
	if err != nil {
		fail("%v", err)
		return
	}
	m, err := e.machine(ctx, sm.Arn, sm.RevisionID)
	if err != nil {
		fail("%v", err)
		return
	}
	childArn := fmt.Sprintf("arn:aws:states:%s:%s:execution:%s:%s", e.cfg.Region, e.cfg.Account, sm.Name, name)
	row, err := e.StartExecution(ctx, &service.StartParams{StateMachine: sm, Machine: m, ExecutionArn: childArn, Name: name, Input: input})
	if errors.Is(err, store.ErrAlreadyExists) {
		row, err = e.store.Executor().ExecutionGet(ctx, childArn)
	}
	if err != nil {
		fail("%v", err)
		return
	}
	switch mode {
	case "":
		out := jsonvalue.NewObject(2)
		out.Set("ExecutionArn", row.Arn)
		out.Set("StartDate", row.StartDate.UTC().Format("2006-01-02T15:04:05.000Z"))
		done(TaskResult{Output: out})
	case ".sync", ".sync:2":
		w := childWaiter{parentArn: t.ExecutionArn, taskID: t.ID, v2: mode == ".sync:2", done: done}
		e.children.mu.Lock()
		if e.children.waiters == nil {
			e.children.waiters = map[string][]childWaiter{}
		}
		e.children.waiters[childArn] = append(e.children.waiters[childArn], w)
		e.children.mu.Unlock()
		// The child may have ended already (at once, or before a restart).
		if cur, err := e.store.Executor().ExecutionGet(ctx, childArn); err == nil && cur.Status != stepwisetype.StatusRunning {
			e.childEnded(cur)
		}
	case ".waitForTaskToken":
		// The child (or whoever it tells) answers with the token.
	default:
		fail("Unknown resource '%s'.", t.Request.Resource)
	}
}

// childEnded answers the parents waiting for a child that ended.
func (e *Engine) childEnded(row *store.Execution) {
	e.children.mu.Lock()
	ws := e.children.waiters[row.Arn]
	delete(e.children.waiters, row.Arn)
	e.children.mu.Unlock()
	for _, w := range ws {
		desc := describeForParent(row, w.v2)
		if row.Status == stepwisetype.StatusSucceeded {
			w.done(TaskResult{Output: desc})
			continue
		}
		w.done(TaskResult{Failure: stepwisetype.NewFailure(stepwisetype.ErrorTaskFailed, jsonvalue.String(desc))})
	}
}

// cancelChild stops the .sync child a cancelled parent task waits for.
func (e *Engine) cancelChild(parentArn, taskID string) {
	e.children.mu.Lock()
	var child string
	for arn, ws := range e.children.waiters {
		for i, w := range ws {
			if w.parentArn == parentArn && w.taskID == taskID {
				child = arn
				e.children.waiters[arn] = append(ws[:i:i], ws[i+1:]...)
				break
			}
		}
	}
	e.children.mu.Unlock()
	if child != "" {
		go func() {
			if _, err := e.StopExecution(e.ctx, child, "", "The parent execution stopped its child."); err != nil && !errors.Is(err, errStopped) {
				e.log.ErrorContext(e.ctx, "engine: stop child failed", "execution_arn", child, "error", err)
			}
		}()
	}
}

// describeForParent is the child's description as a .sync task returns
// it: DescribeExecution's members, PascalCase; Input and Output as JSON
// text, or parsed for .sync:2.
func describeForParent(row *store.Execution, v2 bool) *jsonvalue.Object {
	d := jsonvalue.NewObject(12)
	d.Set("ExecutionArn", row.Arn)
	d.Set("StateMachineArn", row.StateMachineArn)
	d.Set("Name", row.Name)
	d.Set("Status", string(row.Status))
	d.Set("StartDate", jsonvalue.NumberFromInt(row.StartDate.UnixMilli()))
	if row.StopDate != nil {
		d.Set("StopDate", jsonvalue.NumberFromInt(row.StopDate.UnixMilli()))
	}
	text := func(s string) any {
		if !v2 {
			return s
		}
		v, err := jsonvalue.ParseString(s)
		if err != nil {
			return s
		}
		return v
	}
	d.Set("Input", text(row.Input))
	included := jsonvalue.NewObject(1)
	included.Set("Included", true)
	d.Set("InputDetails", included)
	if row.Output != nil {
		d.Set("Output", text(*row.Output))
		d.Set("OutputDetails", included)
	}
	if row.Error != nil {
		d.Set("Error", *row.Error)
	}
	if row.Cause != nil {
		d.Set("Cause", *row.Cause)
	}
	return d
}
