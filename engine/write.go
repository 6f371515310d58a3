package engine

import (
	"time"

	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// The write stage: the store work of a step, written in one transaction
// at the commit (store.Step): the execution's row when the step changes
// it (inserted for a start, updated with its version checked otherwise),
// the history events, the replay log entry, the timers armed and
// removed, and the outbox notices of a status change.

// stepWrite builds the store work of a step and the execution row it leaves.
// ev is nil for the start, which inserts the execution; en is the step's
// replay log entry when it was made already (claimPollers), nil to make it
// from the execution now.
func (e *Engine) stepWrite(l *liveExecution, now time.Time, ev *interp.Event, en *entry, events []*history.Event, cmds []interp.Command) (*store.Step, store.Execution) {
	x := l.x
	next := l.row
	next.Status = x.Status
	next.RedriveCount = x.Info.RedriveCount
	if ev != nil && interp.IsRedrive(ev.Kind) {
		redriven := now
		next.RedriveDate = &redriven
		next.StopDate, next.Output, next.Error, next.Cause = nil, nil, nil, nil
	}
	if x.Status != history.StatusRunning {
		setEnd(&next, x, now)
	}
	// A step that leaves the execution RUNNING as it was only appends to
	// its history and replay log; the others write its row.
	rowChanged := ev == nil || interp.IsRedrive(ev.Kind) || next.Status != l.row.Status ||
		next.RedriveCount != l.row.RedriveCount
	if rowChanged {
		next.LastEventID = x.LastEventID()
		next.Version++
	}

	evRows := make([]*store.Event, len(events))
	size := 0
	for _, he := range events {
		size += he.JSONSizeHint()
	}
	buf := make([]byte, 0, size) // one buffer for the step's events, sized once
	for i, he := range events {
		start := len(buf)
		buf = he.AppendJSON(buf)
		evRows[i] = &store.Event{ExecutionArn: l.arn, ID: he.ID, Type: he.Type, Timestamp: he.Timestamp, Body: buf[start:len(buf):len(buf)]}
	}
	// Tasks are not stored: the replay log determines them (see fill).
	var addTimers []*store.Timer
	var delTimers, delTasks []string
	for _, c := range cmds {
		switch c.Kind {
		case interp.StartTimer:
			addTimers = append(addTimers, &store.Timer{ExecutionArn: l.arn, ID: c.ID, FireAt: c.At})
		case interp.CancelTimer:
			delTimers = append(delTimers, c.ID)
		}
	}
	// The replay log holds the step's event and the evaluations it cut
	// short; a start has no event, and an entry of its own (seq 0) only
	// when it cut an evaluation short.
	var input *store.Input
	if en == nil {
		en = stepEntry(x, ev)
	}
	if ev != nil {
		input = &store.Input{ExecutionArn: l.arn, Seq: l.seq + 1, At: now, Body: encodeEntry(en)}
		if ev.Kind == interp.TimerFired {
			delTimers = append(delTimers, ev.ID)
		}
	} else if len(en.Marks) > 0 || len(en.Missing) > 0 {
		input = &store.Input{ExecutionArn: l.arn, Seq: 0, At: now, Body: encodeEntry(en)}
	}
	if x.Status != history.StatusRunning {
		for id := range l.timers {
			delTimers = append(delTimers, id)
		}
		// Task rows were written by earlier versions: an execution's
		// last step removes those of the tasks it still had.
		for id := range l.tasks {
			delTasks = append(delTasks, id)
		}
		// Nothing the step itself armed outlives the execution.
		for _, t := range addTimers {
			delTimers = append(delTimers, t.ID)
		}
		addTimers = nil
	}
	step := &store.Step{Input: input, Events: evRows, DeleteTimers: delTimers, AddTimers: addTimers, DeleteTasks: delTasks,
		ExecutionID: l.rowID}
	if e.cl != nil {
		fence := e.cl.Fence()
		step.Fence = &fence
	}
	if e.cfg.StatusNotice != nil && !isExpressArn(l.arn) {
		step.Outbox = statusNotices(e.cfg.StatusNotice, l.row.Status, &next, ev, now)
	}
	switch {
	case ev == nil:
		row := next
		step.Insert = &row
	case rowChanged:
		step.Update = &store.ExecutionUpdateParams{
			Arn: l.arn, ExpectedVersion: l.row.Version, Status: next.Status,
			Output: next.Output, Error: next.Error, Cause: next.Cause, StopDate: next.StopDate,
			LastEventID: next.LastEventID, RedriveCount: next.RedriveCount, RedriveDate: next.RedriveDate,
		}
	}
	return step, next
}

// setEnd records how x ended in its row: status, stop date, and output or
// error and cause.
func setEnd(row *store.Execution, x *interp.Execution, stop time.Time) {
	row.Status = x.Status
	row.StopDate = &stop
	if x.Status == history.StatusSucceeded {
		out := x.OutputText // its event's text: not written out again
		if out == "" {
			out = jsonvalue.String(x.Output)
		}
		row.Output = &out
	}
	if fl := x.Failure; fl != nil {
		if fl.Name != "" {
			row.Error = &fl.Name
		}
		if fl.HasCause && fl.Cause != "" {
			// As the end event shows it (no empty cause).
			row.Cause = &fl.Cause
		}
	}
}

// statusNotices are the notices of a step of an execution whose status
// was previous (ev nil: its start), which left its row as next: none when
// the status stays as it was, RUNNING for a start or a redrive, and the
// end when it ended (a start or redrive that ends at once tells of both).
// render makes a notice's body.
func statusNotices(render func(*store.Execution, time.Time) []byte, previous history.ExecutionStatus, next *store.Execution, ev *interp.Event, now time.Time) []*store.OutboxEvent {
	began := ev == nil || interp.IsRedrive(ev.Kind)
	if !began && next.Status == previous {
		return nil
	}
	var out []*store.OutboxEvent
	if began && next.Status != history.StatusRunning {
		running := *next
		running.Status = history.StatusRunning
		running.StopDate, running.Output, running.Error, running.Cause = nil, nil, nil, nil
		out = append(out, &store.OutboxEvent{CreatedAt: now, Body: render(&running, now)})
	}
	return append(out, &store.OutboxEvent{CreatedAt: now, Body: render(next, now)})
}
