// Package servicetest holds test helpers for code that uses package
// service: a func-field fake Engine, and one that keeps executions in a
// real store without running them.
package servicetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"stepwise/engine/activity"
	"stepwise/engine/start"
	"stepwise/history"
	"stepwise/service"
	"stepwise/store"
)

// Engine is a fake service.Engine: each method calls its func field, and
// fails when the field is nil.
type Engine struct {
	StartExecutionFunc     func(ctx context.Context, p *start.Params) (*store.Execution, error)
	StartSyncExecutionFunc func(ctx context.Context, p *start.Params) (*start.SyncResult, error)
	StopExecutionFunc      func(ctx context.Context, arn, errName, cause string) (*store.Execution, error)
	RedriveExecutionFunc   func(ctx context.Context, arn string) (*store.Execution, error)
	GetActivityTaskFunc    func(ctx context.Context, activityArn, workerName string) (*activity.Handout, error)
	SendTaskSuccessFunc    func(ctx context.Context, token, output string) error
	SendTaskFailureFunc    func(ctx context.Context, token, errName, cause string) error
	SendTaskHeartbeatFunc  func(ctx context.Context, token string) error
	UpdateMapRunFunc       func(ctx context.Context, arn string, maxConcurrency *int, percent *float64, count *int64) error
}

var _ service.Engine = (*Engine)(nil)

var errNotSet = errors.New("servicetest: engine func not set")

func (e *Engine) StartExecution(ctx context.Context, p *start.Params) (*store.Execution, error) {
	if e.StartExecutionFunc == nil {
		return nil, errNotSet
	}
	return e.StartExecutionFunc(ctx, p)
}

func (e *Engine) StartSyncExecution(ctx context.Context, p *start.Params) (*start.SyncResult, error) {
	if e.StartSyncExecutionFunc == nil {
		return nil, errNotSet
	}
	return e.StartSyncExecutionFunc(ctx, p)
}

func (e *Engine) StopExecution(ctx context.Context, arn, errName, cause string) (*store.Execution, error) {
	if e.StopExecutionFunc == nil {
		return nil, errNotSet
	}
	return e.StopExecutionFunc(ctx, arn, errName, cause)
}

func (e *Engine) RedriveExecution(ctx context.Context, arn string) (*store.Execution, error) {
	if e.RedriveExecutionFunc == nil {
		return nil, errNotSet
	}
	return e.RedriveExecutionFunc(ctx, arn)
}

func (e *Engine) GetActivityTask(ctx context.Context, activityArn, workerName string) (*activity.Handout, error) {
	if e.GetActivityTaskFunc == nil {
		return nil, errNotSet
	}
	return e.GetActivityTaskFunc(ctx, activityArn, workerName)
}

func (e *Engine) SendTaskSuccess(ctx context.Context, token, output string) error {
	if e.SendTaskSuccessFunc == nil {
		return errNotSet
	}
	return e.SendTaskSuccessFunc(ctx, token, output)
}

func (e *Engine) SendTaskFailure(ctx context.Context, token, errName, cause string) error {
	if e.SendTaskFailureFunc == nil {
		return errNotSet
	}
	return e.SendTaskFailureFunc(ctx, token, errName, cause)
}

func (e *Engine) SendTaskHeartbeat(ctx context.Context, token string) error {
	if e.SendTaskHeartbeatFunc == nil {
		return errNotSet
	}
	return e.SendTaskHeartbeatFunc(ctx, token)
}

// StoreEngine returns a fake engine that keeps executions in drv without
// running them: StartExecution stores a RUNNING execution and its
// ExecutionStarted event; StopExecution aborts it (ExecutionAborted);
// RedriveExecution makes it RUNNING again (ExecutionRedriven);
// StartSyncExecution succeeds at once with the input as output. Now is its
// clock (time.Now when nil). Fields may be replaced by the caller.
func StoreEngine(drv store.Driver, now func() time.Time) *Engine {
	if now == nil {
		now = time.Now
	}
	clock := func() time.Time { return now().UTC().Truncate(time.Millisecond) }
	var mu sync.Mutex // orders updates of one execution
	e := &Engine{}
	e.StartExecutionFunc = func(ctx context.Context, p *start.Params) (*store.Execution, error) {
		at := clock()
		row := &store.Execution{
			Arn: p.ExecutionArn, StateMachineArn: p.StateMachine.Arn, RevisionID: p.StateMachine.RevisionID,
			Name: p.Name, Status: history.StatusRunning, Input: p.Input, StartDate: at,
			RoleArn: p.StateMachine.RoleArn, TraceHeader: p.TraceHeader, LastEventID: 1, VersionArn: p.VersionArn, AliasArn: p.AliasArn,
		}
		tx, err := drv.Begin(ctx)
		if err != nil {
			return nil, err
		}
		defer tx.Rollback(ctx) //nolint:errcheck // after Commit it does nothing
		out, err := tx.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: row})
		if err != nil {
			return nil, err
		}
		ev := history.Event{Timestamp: at, Type: history.EventExecutionStarted, ID: 1,
			ExecutionStartedEventDetails: &history.ExecutionStartedEventDetails{Input: p.Input, RoleArn: row.RoleArn}}
		if err := tx.EventInsert(ctx, []*store.Event{event(p.ExecutionArn, ev)}); err != nil {
			return nil, err
		}
		return out, tx.Commit(ctx)
	}
	e.StopExecutionFunc = func(ctx context.Context, arn, errName, cause string) (*store.Execution, error) {
		mu.Lock()
		defer mu.Unlock()
		row, err := drv.Executor().ExecutionGet(ctx, arn)
		if err != nil || row.Status != history.StatusRunning {
			return row, err
		}
		at := clock()
		det := &history.FailureEventDetails{}
		if errName != "" {
			det.Error = &errName
		}
		if cause != "" {
			det.Cause = &cause
		}
		ev := history.Event{Timestamp: at, Type: history.EventExecutionAborted, ID: row.LastEventID + 1,
			ExecutionAbortedEventDetails: det}
		return finish(ctx, drv, row, ev, &store.ExecutionUpdateParams{
			Status: history.StatusAborted, Error: det.Error, Cause: det.Cause, StopDate: &at, RedriveCount: row.RedriveCount, RedriveDate: row.RedriveDate,
		})
	}
	e.RedriveExecutionFunc = func(ctx context.Context, arn string) (*store.Execution, error) {
		mu.Lock()
		defer mu.Unlock()
		row, err := drv.Executor().ExecutionGet(ctx, arn)
		if err != nil {
			return nil, err
		}
		at := clock()
		ev := history.Event{Timestamp: at, Type: history.EventExecutionRedriven, ID: row.LastEventID + 1}
		return finish(ctx, drv, row, ev, &store.ExecutionUpdateParams{
			Status: history.StatusRunning, RedriveCount: row.RedriveCount + 1, RedriveDate: &at,
		})
	}
	e.StartSyncExecutionFunc = func(ctx context.Context, p *start.Params) (*start.SyncResult, error) {
		at := clock()
		out := p.Input
		return &start.SyncResult{
			Execution: &store.Execution{
				Arn: p.ExecutionArn, StateMachineArn: p.StateMachine.Arn, RevisionID: p.StateMachine.RevisionID,
				Name: p.Name, Status: history.StatusSucceeded, Input: p.Input, Output: &out,
				StartDate: at, StopDate: &at, RoleArn: p.StateMachine.RoleArn, TraceHeader: p.TraceHeader,
			},
			BilledDurationMillis: 100,
			BilledMemoryMB:       64,
		}, nil
	}
	return e
}

// finish writes an execution's new status and one history event.
func finish(ctx context.Context, drv store.Driver, row *store.Execution, ev history.Event, p *store.ExecutionUpdateParams) (*store.Execution, error) {
	tx, err := drv.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it does nothing
	ev.PreviousEventID = row.LastEventID
	if err := tx.EventInsert(ctx, []*store.Event{event(row.Arn, ev)}); err != nil {
		return nil, err
	}
	p.Arn, p.ExpectedVersion, p.LastEventID = row.Arn, row.Version, ev.ID
	out, err := tx.ExecutionUpdate(ctx, p)
	if err != nil {
		return nil, err
	}
	return out, tx.Commit(ctx)
}

func event(arn string, ev history.Event) *store.Event {
	body, err := json.Marshal(ev)
	if err != nil {
		panic(fmt.Sprintf("servicetest: marshal event: %v", err))
	}
	return &store.Event{ExecutionArn: arn, ID: ev.ID, Type: ev.Type, Timestamp: ev.Timestamp, Body: body}
}

// AppendEvents stores history events after an execution's last one and
// moves its LastEventID, as the engine would; each event's ID and
// PreviousEventID are set.
func AppendEvents(ctx context.Context, drv store.Driver, arn string, events ...history.Event) error {
	row, err := drv.Executor().ExecutionGet(ctx, arn)
	if err != nil {
		return err
	}
	tx, err := drv.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it does nothing
	last := row.LastEventID
	rows := make([]*store.Event, 0, len(events))
	for _, ev := range events {
		ev.PreviousEventID = last
		ev.ID = last + 1
		last = ev.ID
		rows = append(rows, event(arn, ev))
	}
	if err := tx.EventInsert(ctx, rows); err != nil {
		return err
	}
	if _, err := tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{
		Arn: arn, ExpectedVersion: row.Version, Status: row.Status, Output: row.Output, Error: row.Error, Cause: row.Cause,
		StopDate: row.StopDate, LastEventID: last, RedriveCount: row.RedriveCount, RedriveDate: row.RedriveDate,
	}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Finish ends a RUNNING execution with a status (SUCCEEDED with output,
// or FAILED/TIMED_OUT with error and cause) and the matching event.
func Finish(ctx context.Context, drv store.Driver, arn string, status history.ExecutionStatus, output, errName, cause *string, at time.Time) (*store.Execution, error) {
	row, err := drv.Executor().ExecutionGet(ctx, arn)
	if err != nil {
		return nil, err
	}
	at = at.UTC().Truncate(time.Millisecond)
	ev := history.Event{Timestamp: at, ID: row.LastEventID + 1}
	switch status {
	case history.StatusSucceeded:
		ev.Type = history.EventExecutionSucceeded
		ev.ExecutionSucceededEventDetails = &history.OutputEventDetails{Output: deref(output)}
	case history.StatusTimedOut:
		ev.Type = history.EventExecutionTimedOut
		ev.ExecutionTimedOutEventDetails = &history.FailureEventDetails{Error: errName, Cause: cause}
	default:
		ev.Type = history.EventExecutionFailed
		ev.ExecutionFailedEventDetails = &history.FailureEventDetails{Error: errName, Cause: cause}
	}
	return finish(ctx, drv, row, ev, &store.ExecutionUpdateParams{
		Status: status, Output: output, Error: errName, Cause: cause, StopDate: &at, RedriveCount: row.RedriveCount, RedriveDate: row.RedriveDate,
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ActivityStatus reports no waiting task and no worker.
func (e *Engine) ActivityStatus(string) activity.Status { return activity.Status{} }

// ForgetActivity does nothing: the fake engine reads no activities.
func (e *Engine) ForgetActivity(string) {}

func (e *Engine) UpdateMapRun(ctx context.Context, arn string, maxConcurrency *int, percent *float64, count *int64) error {
	if e.UpdateMapRunFunc == nil {
		return errNotSet
	}
	return e.UpdateMapRunFunc(ctx, arn, maxConcurrency, percent, count)
}
