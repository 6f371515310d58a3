package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/maprun"
	"stepwise/store"
)

// A distributed Map's map run (interp.MapRunRequest) runs here as child
// executions, on the map run's bookkeeping (maprun.Run: which child
// starts next, the items failed, the tolerance, the counts) and its
// children's names (maprun.Names), which the in-process Driver shares.
// What is the engine's is durability and concurrency: each child is an
// execution of its own, with its history, recorded with the map run's ARN
// and run on the state machine <parent's>/<label> (the Map's
// ItemProcessor in the parent's revision); a run picked up again (after a
// restart, or redriven) finds the children it started by their names and
// starts exactly those it did not (maprun.Run.Resume), so each child is
// started once. A run keeps at most MaxConcurrency children running
// (mapRunConcurrency when unbounded), fails as soon as more items fail
// than it tolerates (stopping the children still running), and otherwise
// answers the parent's task with the children's outputs in order. Its row
// (store.MapRun) holds its settings and counts, written when it starts,
// at most every mapRunSaveEvery while it runs, and when it ends
// (maprun_row.go).

// mapRunConcurrency bounds the children of one map run running at once
// when its MaxConcurrency does not (AWS's bound); mapRunStarters bounds
// the child starts in flight across the engine, so that a large map run
// does not crowd out other work.
const (
	mapRunConcurrency = 10000
	mapRunStarters    = 32
	mapRunSaveEvery   = time.Second
)

type mapRuns struct {
	mu   sync.Mutex
	runs map[string]*mapRun // by ARN
	sem  chan struct{}      // child starts in flight
}

// mapRun is a map run in progress on this node.
type mapRun struct {
	e      *Engine
	req    *interp.MapRunRequest
	parent *store.Execution
	taskID string
	done   func(TaskResult)
	// policies are the parent's, which its children run with.
	policies interp.Policies
	names    *maprun.Names

	mu    sync.Mutex
	run   *maprun.Run
	row   store.MapRun
	seq   uint64 // of the latest snapshot of row (snapshot)
	dirty bool
	// ended: the run is over (answered, or answering); superseded: a
	// dispatch of the same task again took it over, and it answers
	// nothing; writing: its ResultWriter is under way.
	ended, superseded, writing, cancelled bool

	saveMu    sync.Mutex
	savedSeq  uint64
	saved     store.MapRun // the settings last written, to see others' updates
	haveSaved bool
}

func (m *mapRuns) get(arn string) *mapRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs[arn]
}

// runMapRun carries out a map-run task.
func (e *Engine) runMapRun(ctx context.Context, t *Task, done func(TaskResult)) {
	req := t.Request.MapRun
	parent, err := e.store.Executor().ExecutionGet(ctx, t.ExecutionArn)
	if err != nil {
		done(TaskResult{Failure: failure.Newf(failure.Runtime, "map run: %v", err)})
		return
	}
	r := &mapRun{e: e, req: req, parent: parent, taskID: t.ID, done: done,
		names: maprun.NewNames(req.Arn, e.cfg.Region, e.cfg.Account, arnName(parent.StateMachineArn), req.Label,
			req.ExecutionType == asl.TypeExpress)}
	// The children run the ItemProcessor's states with the parent's
	// policies (state names are unique in a definition).
	r.policies, _ = interp.ParsePolicies(parent.Policies)
	batched, per := req.BatchSize()
	r.run = maprun.NewRun(req.Count, batched, per, req.Tolerance, req.Planner(func(from int64, limit int) ([]any, error) {
		texts, err := e.store.Executor().MapItemsList(e.ctx, req.Arn, from, limit)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(texts))
		for i, t := range texts {
			if out[i], err = jsonvalue.ParseString(t); err != nil {
				return nil, fmt.Errorf("spooled item %d: %w", from+int64(i), err)
			}
		}
		return out, nil
	}))
	e.mapRuns.mu.Lock()
	old := e.mapRuns.runs[req.Arn]
	e.mapRuns.runs[req.Arn] = r
	e.mapRuns.mu.Unlock()
	if old != nil {
		// The same task dispatched again (its parent rebuilt): the new run
		// takes over; the old one neither answers nor stops children.
		old.mu.Lock()
		old.ended, old.superseded = true, true
		old.mu.Unlock()
	}
	// The run is registered before it lists its children, and lists them
	// holding its lock: a child's end is heard once, by the list or after.
	r.mu.Lock()
	defer r.mu.Unlock()
	if !e.work.has(t.ExecutionArn, t.ID) {
		// Cancelled before it was registered (its Map state aborted).
		r.ended, r.superseded = true, true
		r.unregister()
		return
	}
	// The task waits on the children's work, not on the outside.
	e.work.taskOnChild(t.ExecutionArn, t.ID, req.Arn)
	if err := r.load(ctx); err != nil {
		r.finishLocked(TaskResult{Failure: failure.Newf(failure.Runtime, "map run: %v", err)}, "FAILED", nil)
		return
	}
	r.pump()
	go r.watch()
}

// unregister forgets the run, unless another took its place. r.mu may be
// held (the order is r.mu, then mapRuns.mu).
func (r *mapRun) unregister() {
	m := &r.e.mapRuns
	m.mu.Lock()
	if m.runs[r.req.Arn] == r {
		delete(m.runs, r.req.Arn)
	}
	m.mu.Unlock()
}

// load creates the run's row, or picks up the run from it and the
// children it finds by the run's ARN (maprun.Run.Resume). r.mu is held.
func (r *mapRun) load(ctx context.Context) error {
	ex := r.e.store.Executor()
	now := r.e.now()
	row, err := ex.MapRunGet(ctx, r.req.Arn)
	if errors.Is(err, store.ErrNotFound) {
		r.row = store.MapRun{Arn: r.req.Arn, ExecutionArn: r.parent.Arn, StateMachineArn: r.parent.StateMachineArn + "/" + r.req.Label,
			Status: "RUNNING", StartDate: now, MaxConcurrency: int(r.req.MaxConcurrency)}
		r.settingsToRow()
		return r.save(r.snapshot())
	}
	if err != nil {
		return err
	}
	r.row = *row
	// The run's settings are the row's: an UpdateMapRun holds.
	r.rowToSettings(row)
	// A redrive redrives the run once: a task dispatched again after a
	// restart finds it RUNNING already.
	redrive := r.req.Redrive && row.Status != "RUNNING"
	r.row.Status, r.row.StopDate = "RUNNING", nil
	if redrive {
		r.row.RedriveCount++
		r.row.RedriveDate = &now
	}
	found, err := r.children(ctx)
	if err != nil {
		return err
	}
	if err := r.run.Resume(found, redrive); err != nil {
		return err
	}
	return r.save(r.snapshot())
}

// children lists the run's children in the store, by index.
func (r *mapRun) children(ctx context.Context) ([]maprun.Found, error) {
	var found []maprun.Found
	p := &store.ExecutionListParams{MapRunArn: r.req.Arn, Limit: 1000}
	for {
		rows, err := r.e.store.Executor().ExecutionList(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, c := range rows {
			if i, ok := r.names.Index(c.Name); ok {
				found = append(found, maprun.Found{Index: i, Child: childSummary(c)})
			}
		}
		if len(rows) < p.Limit {
			return found, nil
		}
		last := rows[len(rows)-1]
		p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
	}
}

// childSummary is what the run knows of a child from its row.
func childSummary(c *store.Execution) *maprun.ChildSummary {
	return &maprun.ChildSummary{Arn: c.Arn, Name: c.Name, StateMachineArn: c.StateMachineArn,
		Status: c.Status, Input: c.Input, Output: c.Output, Error: c.Error, Cause: c.Cause,
		StartDate: c.StartDate, StopDate: c.StopDate, RedriveCount: c.RedriveCount}
}

// concurrency is how many children may run at once.
func (r *mapRun) concurrency() int {
	if c := r.row.MaxConcurrency; c > 0 && c < mapRunConcurrency {
		return c
	}
	return mapRunConcurrency
}

// pump starts children while the run's concurrency allows, and ends the
// run once none is left. At most mapRunStarters starts of a run are in
// flight (each goes on with the next). r.mu is held.
func (r *mapRun) pump() {
	if r.ended {
		return
	}
	if r.run.Exceeded() {
		if r.req.FinishRunning && r.run.Active() > 0 {
			return // the children running end first; none starts
		}
		r.failWith(maprun.Failure())
		return
	}
	for r.run.Active() < r.concurrency() && r.run.Starting() < mapRunStarters {
		s, ok, err := r.run.Next()
		if err != nil {
			r.failWith(failure.As(fmt.Errorf("map run: %w", err)))
			return
		}
		if !ok {
			break
		}
		r.e.work.stepBegan() // the start is work: the clock waits for it
		go r.start(s)
	}
	if r.run.Done() {
		if err := r.run.Check(); err != nil {
			// A bug, not a result: the run must not answer for items
			// it never ran.
			r.e.log.ErrorContext(r.e.ctx, "engine: map run would succeed with items not run", "map_run_arn", r.req.Arn, "error", err)
			r.failWith(failure.Newf(failure.Runtime, "map run: %v", err))
			return
		}
		r.succeed()
	}
}

// start starts (or redrives) a child.
func (r *mapRun) start(s maprun.Start) {
	e := r.e
	defer e.work.stepEnded()
	i := s.Index
	if lose := e.cfg.loseChildStart; lose != nil && !s.Redrive && lose(r.req.Arn, i) {
		return
	}
	e.mapRuns.sem <- struct{}{}
	arn := r.names.Arn(i)
	var row *store.Execution
	var err error
	if s.Redrive {
		row, err = e.RedriveExecution(e.ctx, arn)
	} else {
		row, err = e.StartExecution(e.ctx, &StartParams{
			StateMachine: &store.StateMachine{Arn: r.parent.StateMachineArn + "/" + r.req.Label, RevisionID: r.parent.RevisionID,
				RoleArn: r.parent.RoleArn, Type: r.req.ExecutionType},
			Machine: r.req.Processor, ExecutionArn: arn, Name: r.names.Name(i),
			Input: jsonvalue.String(s.Input), InputValue: s.Input, InputParsed: true,
			TestCase: r.parent.TestCase, MapRunArn: r.req.Arn, Policies: r.policies,
		})
		if errors.Is(err, store.ErrAlreadyExists) {
			row, err = e.store.Executor().ExecutionGet(e.ctx, arn)
		}
	}
	<-e.mapRuns.sem
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		r.run.StartDropped(i)
		if err == nil && row.Status == history.StatusRunning && !r.superseded {
			// Started as the run ended: it stops with it.
			e.work.stepBegan()
			go func() {
				defer e.work.stepEnded()
				_, _ = e.StopExecution(e.ctx, arn, "", "The Map Run ended.")
			}()
		}
		return
	}
	if err != nil {
		if errors.Is(err, errStopped) || e.ctx.Err() != nil {
			r.run.StartDropped(i)
			return // picked up again when the parent's task is
		}
		e.log.ErrorContext(e.ctx, "engine: map run child start failed", "map_run_arn", r.req.Arn, "index", i, "error", err)
		r.run.StartFailed(i)
	} else {
		r.run.Started(i, childSummary(row))
	}
	r.dirty = true
	r.pump()
}

// childEnded records the end of one of the run's children.
func (m *mapRuns) childEnded(row *store.Execution) {
	r := m.get(row.MapRunArn)
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.names.Index(row.Name)
	if !ok || r.ended || !r.run.Ended(i, childSummary(row)) {
		return
	}
	r.dirty = true
	r.pump()
}

// stopRunning marks the children running or starting aborted and returns
// their ARNs, for the run to stop them. r.mu is held.
func (r *mapRun) stopRunning() []string {
	var arns []string
	for _, i := range r.run.StopRunning() {
		arns = append(arns, r.names.Arn(i))
	}
	return arns
}

// failWith ends the run with a failure. r.mu is held.
func (r *mapRun) failWith(fl *failure.Failure) {
	r.finishLocked(TaskResult{Failure: fl}, "FAILED", r.stopRunning())
}

// succeed ends the run whose children all ended within its tolerance:
// its result is the children's outputs, or what its ResultWriter makes
// of them. r.mu is held.
func (r *mapRun) succeed() {
	w := r.req.Writer
	if w == nil {
		r.finishLocked(TaskResult{Output: r.run.Results()}, "SUCCEEDED", nil)
		return
	}
	// Writing needs the children's rows: the run ends once it is done.
	r.writing = true
	r.e.work.stepBegan()
	go func() {
		defer r.e.work.stepEnded()
		res := r.write(w)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.writing = false
		if r.superseded || r.cancelled {
			return
		}
		status := "SUCCEEDED"
		if res.Failure != nil {
			status = "FAILED"
		}
		r.finishLocked(res, status, nil)
	}()
}

// write carries out the run's ResultWriter (maprun.Run.Outcome): the
// results transformed, and with a Resource written by the integrations
// as a task of the parent's (interp.TaskRequest.Write).
func (r *mapRun) write(w *maprun.Writer) TaskResult {
	e := r.e
	var entries []*jsonvalue.Object
	if w.NeedsEntries() {
		found, err := r.children(e.ctx)
		if err != nil {
			return TaskResult{Failure: failure.Newf(failure.ResultWriterFailed, "The map run's results could not be read: %v", err)}
		}
		r.mu.Lock()
		entries = make([]*jsonvalue.Object, len(r.run.Results()))
		r.mu.Unlock()
		for _, c := range found {
			if c.Index < len(entries) {
				entries[c.Index] = maprun.ChildEntry(c.Child)
			}
		}
	}
	r.mu.Lock()
	out, write := r.run.Outcome(w, entries)
	r.mu.Unlock()
	if write == nil {
		return TaskResult{Output: out}
	}
	write.MapRunArn = r.req.Arn
	done := make(chan TaskResult, 1)
	t := &Task{ExecutionArn: r.parent.Arn, ID: r.taskID + "-write", StateMachineArn: r.parent.StateMachineArn,
		Request: &interp.TaskRequest{Resource: w.Resource, Write: write}}
	e.cfg.Tasks.Run(e.ctx, t, func(res TaskResult) { done <- res })
	select {
	case res := <-done:
		return res
	case <-e.ctx.Done():
		return TaskResult{Failure: failure.New(failure.ResultWriterFailed, "The server stopped while the results were written.")}
	}
}

// finishLocked ends the run: its children in stop are stopped, its row
// says how it ended, and the parent's task is answered. r.mu is held.
func (r *mapRun) finishLocked(res TaskResult, status string, stop []string) {
	if r.ended {
		return
	}
	r.ended = true
	now := r.e.now()
	r.row.Status, r.row.StopDate = status, &now
	row, seq := r.snapshot()
	r.unregister()
	e := r.e
	e.work.stepBegan()
	go func() {
		defer e.work.stepEnded()
		r.stopAll(stop, "The Map Run failed.")
		if err := r.save(row, seq); err != nil && e.ctx.Err() == nil {
			e.log.ErrorContext(e.ctx, "engine: map run row", "map_run_arn", row.Arn, "error", err)
		}
		if status == "SUCCEEDED" && r.req.Spooled {
			// A run that succeeded is never run again: its spool goes.
			if err := e.store.Executor().MapItemsDelete(e.ctx, r.req.Arn); err != nil && e.ctx.Err() == nil {
				e.log.ErrorContext(e.ctx, "engine: map run items", "map_run_arn", row.Arn, "error", err)
			}
		}
		e.work.childEnded(r.req.Arn)
		r.done(res)
	}()
}
