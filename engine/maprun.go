package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"stepwise/asl"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
	"stepwise/store"
)

// A distributed Map's map run (interp.MapRunRequest) runs here as child
// executions: one per input, named from the map run and the input's
// index so that a run picked up again (after a restart, or redriven)
// finds the children it started. Each child is an execution of its own,
// with its history, recorded with the map run's ARN and run on the
// state machine <parent's>/<label> (the Map's ItemProcessor in the
// parent's revision). A run keeps at most MaxConcurrency children
// running (mapRunConcurrency when unbounded), fails as soon as more items
// fail than it tolerates (stopping the children still running), and
// otherwise answers the parent's task with the children's outputs in
// order. Its row (store.MapRun) holds its settings and counts, written
// when it starts, at most every mapRunSaveEvery while it runs, and when
// it ends.

// mapRunConcurrency bounds the children of one map run running at once
// when its MaxConcurrency does not (AWS's bound); mapRunStarters bounds
// the child starts in flight across the engine, so that a large map run
// does not crowd out other work.
const (
	mapRunConcurrency = 10000
	mapRunStarters    = 32
	mapRunSaveEvery   = time.Second
)

// Child states of a map run.
const (
	childPending = iota
	childRunning
	childSucceeded
	childFailed
	childTimedOut
	childAborted
	childStarting // its start has not returned yet
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

	mu       sync.Mutex
	row      store.MapRun
	names    map[string]int // child name → index
	state    []int8
	results  []any
	next     int   // the next input never started
	redo     []int // children to redrive
	running  int
	starting int
	failed   int // items failed, timed out or aborted
	total    int // items
	ended    bool
	dirty    bool
	saving   bool
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
		done(TaskResult{Failure: stepwisetype.Failuref(stepwisetype.ErrorRuntime, "map run: %v", err)})
		return
	}
	r := &mapRun{e: e, req: req, parent: parent, taskID: t.ID, done: done,
		names: make(map[string]int, len(req.Inputs)), state: make([]int8, len(req.Inputs)), results: make([]any, len(req.Inputs))}
	for i := range req.Inputs {
		r.names[r.childName(i)] = i
		r.total += req.Items(i)
	}
	e.mapRuns.mu.Lock()
	if old := e.mapRuns.runs[req.Arn]; old != nil {
		old.mu.Lock()
		old.ended = true // a task dispatched again: the new one takes over
		old.mu.Unlock()
	}
	e.mapRuns.runs[req.Arn] = r
	e.mapRuns.mu.Unlock()
	// The task waits on the children's work, not on the outside.
	e.work.taskOnChild(t.ExecutionArn, t.ID, req.Arn)
	// The run is registered before it lists its children, and lists them
	// holding its lock: a child's end is heard once, by the list or after.
	r.mu.Lock()
	if err := r.load(ctx); err != nil {
		r.finishLocked(TaskResult{Failure: stepwisetype.Failuref(stepwisetype.ErrorRuntime, "map run: %v", err)}, "FAILED")
		r.mu.Unlock()
		return
	}
	r.pump()
	r.mu.Unlock()
	go r.watch()
}

// childName is the name of child i: a UUID derived from the map run.
func (r *mapRun) childName(i int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", r.req.Arn, i))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// childArn is the ARN of child i, as AWS forms it.
func (r *mapRun) childArn(i int) string {
	prefix := fmt.Sprintf("arn:aws:states:%s:%s:", r.e.cfg.Region, r.e.cfg.Account)
	name := arnName(r.parent.StateMachineArn) + "/" + r.req.Label + ":" + r.childName(i)
	if r.req.ExecutionType == asl.TypeExpress {
		sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00express", r.req.Arn, i))
		h := hex.EncodeToString(sum[:16])
		return prefix + "express:" + name + ":" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	return prefix + "execution:" + name
}

// load creates the run's row, or picks up the run from it: the children
// that ended count, those running are waited for, and on a redrive
// those that did not succeed run again.
func (r *mapRun) load(ctx context.Context) error {
	ex := r.e.store.Executor()
	now := r.e.now()
	row, err := ex.MapRunGet(ctx, r.req.Arn)
	if errors.Is(err, store.ErrNotFound) {
		r.row = store.MapRun{Arn: r.req.Arn, ExecutionArn: r.parent.Arn, StateMachineArn: r.parent.StateMachineArn + "/" + r.req.Label,
			Status: "RUNNING", StartDate: now, MaxConcurrency: int(r.req.MaxConcurrency),
			ToleratedFailureCount: max(r.req.ToleratedCount, 0), ToleratedFailurePercentage: r.req.TolerancePercent}
		r.fillCounts()
		return ex.MapRunPut(ctx, &r.row)
	}
	if err != nil {
		return err
	}
	r.row = *row
	r.row.Status, r.row.StopDate = "RUNNING", nil
	if r.req.Redrive {
		r.row.RedriveCount++
		r.row.RedriveDate = &now
	}
	p := &store.ExecutionListParams{MapRunArn: r.req.Arn, Limit: 1000}
	for {
		rows, err := ex.ExecutionList(ctx, p)
		if err != nil {
			return err
		}
		for _, c := range rows {
			i, ok := r.names[c.Name]
			if !ok {
				continue
			}
			if c.Status == stepwisetype.StatusRunning {
				r.state[i] = childRunning
				r.running++
				continue
			}
			r.childDone(i, c)
			if r.req.Redrive && r.state[i] != childSucceeded {
				r.failed -= r.req.Items(i)
				r.redo = append(r.redo, i)
			}
		}
		if len(rows) < p.Limit {
			break
		}
		last := rows[len(rows)-1]
		p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
	}
	// Children never started are started in order; next skips those
	// that were.
	r.fillCounts()
	return ex.MapRunPut(ctx, &r.row)
}

// childDone records child i's end from its row.
func (r *mapRun) childDone(i int, c *store.Execution) {
	switch c.Status {
	case stepwisetype.StatusSucceeded:
		r.state[i] = childSucceeded
		if c.Output != nil {
			if v, err := jsonvalue.ParseString(*c.Output); err == nil {
				r.results[i] = v
			}
		}
		return
	case stepwisetype.StatusTimedOut:
		r.state[i] = childTimedOut
	case stepwisetype.StatusAborted:
		r.state[i] = childAborted
	default:
		r.state[i] = childFailed
	}
	// A child that did not succeed is its result as it is (AWS's NONE
	// transformation), whatever the transformation.
	r.results[i] = childEntry(c)
	r.failed += r.req.Items(i)
}

// childEntry is a child's result with its metadata (interp.ChildEntry).
func childEntry(c *store.Execution) *jsonvalue.Object {
	return interp.ChildEntry(&interp.ChildSummary{Arn: c.Arn, Name: c.Name, StateMachineArn: c.StateMachineArn,
		Status: c.Status, Input: c.Input, Output: c.Output, Error: c.Error, Cause: c.Cause,
		StartDate: c.StartDate, StopDate: c.StopDate, RedriveCount: c.RedriveCount})
}

// concurrency is how many children may run at once.
func (r *mapRun) concurrency() int {
	if c := r.row.MaxConcurrency; c > 0 && c < mapRunConcurrency {
		return c
	}
	return mapRunConcurrency
}

// pump starts children while the run's concurrency allows, and ends the
// run once none is left. r.mu is held.
func (r *mapRun) pump() {
	if r.ended {
		return
	}
	if r.exceeded() {
		r.fail()
		return
	}
	for r.running+r.starting < r.concurrency() {
		i, redrive := -1, false
		switch {
		case len(r.redo) > 0:
			i, redrive = r.redo[0], true
			r.redo = r.redo[1:]
		default:
			for r.next < len(r.state) && r.state[r.next] != childPending {
				r.next++
			}
			if r.next < len(r.state) {
				i = r.next
				r.next++
			}
		}
		if i < 0 {
			break
		}
		r.state[i] = childStarting
		r.starting++
		r.e.work.stepBegan() // the start is work: the clock waits for it
		go r.start(i, redrive)
	}
	if r.running+r.starting == 0 && len(r.redo) == 0 && r.next >= len(r.state) {
		r.succeed()
	}
}

// start starts (or redrives) child i.
func (r *mapRun) start(i int, redrive bool) {
	e := r.e
	defer e.work.stepEnded()
	e.mapRuns.sem <- struct{}{}
	defer func() { <-e.mapRuns.sem }()
	arn := r.childArn(i)
	var row *store.Execution
	var err error
	if redrive {
		row, err = e.RedriveExecution(e.ctx, arn)
	} else {
		row, err = e.StartExecution(e.ctx, &StartParams{
			StateMachine: &store.StateMachine{Arn: r.parent.StateMachineArn + "/" + r.req.Label, RevisionID: r.parent.RevisionID,
				RoleArn: r.parent.RoleArn, Type: r.req.ExecutionType},
			Machine: r.req.Processor, ExecutionArn: arn, Name: r.childName(i),
			Input: jsonvalue.String(r.req.Inputs[i]), InputValue: r.req.Inputs[i], InputParsed: true,
			TestCase: r.parent.TestCase, MapRunArn: r.req.Arn,
		})
		if errors.Is(err, store.ErrAlreadyExists) {
			row, err = e.store.Executor().ExecutionGet(e.ctx, arn)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starting--
	if r.ended {
		if err == nil && row.Status == stepwisetype.StatusRunning {
			// Started as the run ended: it stops with it.
			go func() { _, _ = e.StopExecution(e.ctx, arn, "", "The Map Run ended.") }()
		}
		return
	}
	if err != nil {
		if errors.Is(err, errStopped) || e.ctx.Err() != nil {
			return // picked up again when the parent's task is
		}
		e.log.ErrorContext(e.ctx, "engine: map run child start failed", "map_run_arn", r.req.Arn, "index", i, "error", err)
		r.state[i] = childFailed
		r.results[i] = nil
		r.failed += r.req.Items(i)
		r.dirty = true
		r.pump()
		return
	}
	if r.state[i] == childStarting { // not ended since (childEnded)
		if row.Status == stepwisetype.StatusRunning {
			r.state[i] = childRunning
			r.running++
		} else {
			r.childDone(i, row) // it ended in its first step
		}
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
	i, ok := r.names[row.Name]
	if !ok || r.ended {
		return
	}
	switch r.state[i] {
	case childRunning:
		r.running--
	case childStarting: // its start has not returned: it counts it no more
	default:
		return
	}
	r.childDone(i, row)
	r.dirty = true
	r.pump()
}

func (r *mapRun) exceeded() bool {
	return r.req.Exceeded(r.failed, r.total) || r.toleranceExceeded()
}

// toleranceExceeded applies the settings an UpdateMapRun changed.
func (r *mapRun) toleranceExceeded() bool {
	if r.row.ToleratedFailureCount == max(r.req.ToleratedCount, 0) && r.row.ToleratedFailurePercentage == r.req.TolerancePercent {
		return false
	}
	tol := *r.req
	tol.ToleratedCount, tol.TolerancePercent = r.row.ToleratedFailureCount, r.row.ToleratedFailurePercentage
	return tol.Exceeded(r.failed, r.total)
}

// fail ends the run past its tolerance: the children still running are
// stopped. r.mu is held.
func (r *mapRun) fail() {
	for i, s := range r.state {
		if s == childRunning || s == childStarting {
			r.state[i] = childAborted // stopped because the run failed
			arn := r.childArn(i)
			r.e.work.stepBegan()
			go func() {
				defer r.e.work.stepEnded()
				if _, err := r.e.StopExecution(r.e.ctx, arn, "", "The Map Run failed."); err != nil && !errors.Is(err, errStopped) {
					r.e.log.DebugContext(r.e.ctx, "engine: stop map run child", "execution_arn", arn, "error", err)
				}
			}()
		}
	}
	r.finishLocked(TaskResult{Failure: interp.ToleranceFailure()}, "FAILED")
}

// succeed ends the run whose children all ended within its tolerance:
// its result is the children's outputs, or what its ResultWriter makes
// of them. r.mu is held.
func (r *mapRun) succeed() {
	w := r.req.Writer
	if w == nil {
		r.finishLocked(TaskResult{Output: r.results}, "SUCCEEDED")
		return
	}
	// Writing needs the children's rows: the run ends once it is done.
	r.ended = true
	r.e.work.stepBegan()
	go func() {
		defer r.e.work.stepEnded()
		res := r.write(w)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ended = false
		status := "SUCCEEDED"
		if res.Failure != nil {
			status = "FAILED"
		}
		r.finishLocked(res, status)
	}()
}

// write carries out the run's ResultWriter: the results transformed,
// and written to S3 when the writer has a Resource.
func (r *mapRun) write(w *interp.ResultWriterConfig) TaskResult {
	e := r.e
	var entries []*jsonvalue.Object
	if w.Transformation == "NONE" {
		var err error
		if entries, err = r.entries(); err != nil {
			return TaskResult{Failure: stepwisetype.Failuref(stepwisetype.ErrorResultWriterFailed, "The map run's results could not be read: %v", err)}
		}
	}
	var succeeded, failed []any
	for i, s := range r.state {
		switch {
		case s != childSucceeded:
			failed = append(failed, r.results[i])
		case entries != nil:
			succeeded = append(succeeded, entries[i])
		case w.Transformation == "FLATTEN":
			if arr, ok := r.results[i].([]any); ok {
				succeeded = append(succeeded, arr...)
				continue
			}
			succeeded = append(succeeded, r.results[i])
		default:
			succeeded = append(succeeded, r.results[i])
		}
	}
	if w.Resource == "" {
		// Only a WriterConfig: the results come back as the state's.
		all := make([]any, 0, len(r.state))
		for i, s := range r.state {
			if s == childSucceeded && entries != nil {
				all = append(all, entries[i])
			} else if s == childSucceeded && w.Transformation == "FLATTEN" {
				if arr, ok := r.results[i].([]any); ok {
					all = append(all, arr...)
					continue
				}
				all = append(all, r.results[i])
			} else {
				all = append(all, r.results[i])
			}
		}
		return TaskResult{Output: all}
	}
	files := map[string][]any{}
	if len(succeeded) > 0 {
		files["SUCCEEDED"] = succeeded
	}
	if len(failed) > 0 {
		files["FAILED"] = failed
	}
	done := make(chan TaskResult, 1)
	t := &Task{ExecutionArn: r.parent.Arn, ID: r.taskID + "-write", StateMachineArn: r.parent.StateMachineArn,
		Request: &interp.TaskRequest{StateName: "", Resource: w.Resource},
		Write:   &ResultWrite{Resource: w.Resource, Bucket: w.Bucket, Prefix: w.Prefix, OutputType: w.OutputType, MapRunArn: r.req.Arn, Files: files}}
	e.cfg.Tasks.Run(e.ctx, t, func(res TaskResult) { done <- res })
	select {
	case res := <-done:
		return res
	case <-e.ctx.Done():
		return TaskResult{Failure: stepwisetype.NewFailure(stepwisetype.ErrorResultWriterFailed, "The server stopped while the results were written.")}
	}
}

// entries are the children's results with their metadata, in order.
func (r *mapRun) entries() ([]*jsonvalue.Object, error) {
	out := make([]*jsonvalue.Object, len(r.state))
	p := &store.ExecutionListParams{MapRunArn: r.req.Arn, Limit: 1000}
	for {
		rows, err := r.e.store.Executor().ExecutionList(r.e.ctx, p)
		if err != nil {
			return nil, err
		}
		for _, c := range rows {
			if i, ok := r.names[c.Name]; ok {
				out[i] = childEntry(c)
			}
		}
		if len(rows) < p.Limit {
			return out, nil
		}
		last := rows[len(rows)-1]
		p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
	}
}

func (r *mapRun) finish(res TaskResult, status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finishLocked(res, status)
}

// finishLocked ends the run: its row says how, and the parent's task is
// answered. r.mu is held.
func (r *mapRun) finishLocked(res TaskResult, status string) {
	if r.ended {
		return
	}
	r.ended = true
	now := r.e.now()
	r.row.Status, r.row.StopDate = status, &now
	r.fillCounts()
	row := r.row
	e := r.e
	e.mapRuns.mu.Lock()
	if e.mapRuns.runs[r.req.Arn] == r {
		delete(e.mapRuns.runs, r.req.Arn)
	}
	e.mapRuns.mu.Unlock()
	e.work.stepBegan()
	go func() {
		defer e.work.stepEnded()
		if err := e.store.Executor().MapRunPut(e.ctx, &row); err != nil && e.ctx.Err() == nil {
			e.log.ErrorContext(e.ctx, "engine: map run row", "map_run_arn", row.Arn, "error", err)
		}
		e.work.childEnded(r.req.Arn)
		r.done(res)
	}()
}

// cancel stops a run whose task was cancelled (its Map state aborted):
// the children still running are stopped, the run is ABORTED.
func (m *mapRuns) cancel(e *Engine, parentArn, taskID string) {
	m.mu.Lock()
	var r *mapRun
	for _, c := range m.runs {
		if c.parent.Arn == parentArn && c.taskID == taskID {
			r = c
		}
	}
	m.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	for i, s := range r.state {
		if s == childRunning || s == childStarting {
			r.state[i] = childAborted
			arn := r.childArn(i)
			e.work.stepBegan()
			go func() {
				defer e.work.stepEnded()
				_, _ = e.StopExecution(e.ctx, arn, "", "The Map Run was aborted.")
			}()
		}
	}
	r.ended = true
	now := e.now()
	r.row.Status, r.row.StopDate = "ABORTED", &now
	r.fillCounts()
	row := r.row
	m.mu.Lock()
	delete(m.runs, r.req.Arn)
	m.mu.Unlock()
	go func() {
		if err := e.store.Executor().MapRunPut(e.ctx, &row); err != nil && e.ctx.Err() == nil {
			e.log.ErrorContext(e.ctx, "engine: map run row", "map_run_arn", row.Arn, "error", err)
		}
	}()
}

// watch writes the run's row as it progresses, and finds the ends of
// children that ended where the run could not hear of them (on another
// node).
func (r *mapRun) watch() {
	e := r.e
	t := time.NewTicker(mapRunSaveEvery)
	defer t.Stop()
	polls := 0
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
		}
		r.mu.Lock()
		if r.ended {
			r.mu.Unlock()
			return
		}
		var row *store.MapRun
		if r.dirty {
			r.dirty = false
			r.fillCounts()
			c := r.row
			row = &c
		}
		var elsewhere []int
		if polls++; polls%5 == 0 && e.cl != nil {
			for i, s := range r.state {
				if s == childRunning && !e.isLive(r.childArn(i)) {
					elsewhere = append(elsewhere, i)
				}
			}
		}
		r.mu.Unlock()
		if row != nil {
			if err := e.store.Executor().MapRunPut(e.ctx, row); err != nil && e.ctx.Err() == nil {
				e.log.ErrorContext(e.ctx, "engine: map run row", "map_run_arn", row.Arn, "error", err)
			}
		}
		for _, i := range elsewhere {
			if c, err := e.store.Executor().ExecutionGet(e.ctx, r.childArn(i)); err == nil && c.Status != stepwisetype.StatusRunning {
				e.mapRuns.childEnded(c)
			}
		}
	}
}

// isLive says whether an execution runs on this node.
func (e *Engine) isLive(arn string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.live[arn] != nil
}

// fillCounts writes the run's item and execution counts into its row.
// r.mu is held (or the run is not shared yet).
func (r *mapRun) fillCounts() {
	var items, execs [6]int64
	for i, s := range r.state {
		if s == childStarting {
			s = childRunning
		}
		items[s] += int64(r.req.Items(i))
		execs[s]++
	}
	r.row.ItemCounts = countsJSON(items, int64(r.total))
	r.row.ExecutionCounts = countsJSON(execs, int64(len(r.state)))
}

func countsJSON(c [6]int64, total int64) string {
	o := jsonvalue.NewObject(10)
	o.Set("aborted", jsonvalue.NumberFromInt(c[childAborted]))
	o.Set("failed", jsonvalue.NumberFromInt(c[childFailed]))
	o.Set("failuresNotRedrivable", jsonvalue.NumberFromInt(0))
	o.Set("pending", jsonvalue.NumberFromInt(c[childPending]))
	o.Set("pendingRedrive", jsonvalue.NumberFromInt(0))
	o.Set("resultsWritten", jsonvalue.NumberFromInt(c[childSucceeded]+c[childFailed]+c[childTimedOut]+c[childAborted]))
	o.Set("running", jsonvalue.NumberFromInt(c[childRunning]))
	o.Set("succeeded", jsonvalue.NumberFromInt(c[childSucceeded]))
	o.Set("timedOut", jsonvalue.NumberFromInt(c[childTimedOut]))
	o.Set("total", jsonvalue.NumberFromInt(total))
	return jsonvalue.String(o)
}

// UpdateMapRun changes a map run's concurrency and tolerance (nil: as
// they are). A run in progress here applies them at once.
func (e *Engine) UpdateMapRun(ctx context.Context, arn string, maxConcurrency *int, percent *float64, count *int64) error {
	apply := func(row *store.MapRun) {
		if maxConcurrency != nil {
			row.MaxConcurrency = *maxConcurrency
		}
		if percent != nil {
			row.ToleratedFailurePercentage = *percent
		}
		if count != nil {
			row.ToleratedFailureCount = *count
		}
	}
	if r := e.mapRuns.get(arn); r != nil {
		r.mu.Lock()
		if !r.ended {
			apply(&r.row)
			r.fillCounts()
			row := r.row
			r.pump()
			r.mu.Unlock()
			return e.store.Executor().MapRunPut(ctx, &row)
		}
		r.mu.Unlock()
	}
	row, err := e.store.Executor().MapRunGet(ctx, arn)
	if err != nil {
		return err
	}
	apply(row)
	return e.store.Executor().MapRunPut(ctx, row)
}

// processorMachine returns the child state machine of a map run: the
// ItemProcessor of the distributed Map labelled label in m.
func processorMachine(m *asl.StateMachine, label string) *asl.StateMachine {
	for _, name := range m.Order {
		s := m.States[name]
		if s.Type == asl.TypeMap && s.ItemProcessor != nil {
			l := s.Label
			if l == "" {
				l = s.Name
			}
			if l == label && s.ProcessorMode == asl.ModeDistributed || l == label && s.ItemReader != nil {
				return s.ItemProcessor
			}
			if p := processorMachine(s.ItemProcessor, label); p != nil {
				return p
			}
		}
		for _, b := range s.Branches {
			if p := processorMachine(b, label); p != nil {
				return p
			}
		}
	}
	return nil
}

// splitLabel splits the ARN of a map run's children's state machine,
// <state machine ARN>/<label>, in two ("" when it is no such ARN).
func splitLabel(smArn string) (base, label string) {
	name := arnName(smArn)
	i := strings.IndexByte(name, '/')
	if i < 0 {
		return smArn, ""
	}
	return smArn[:len(smArn)-len(name)+i], name[i+1:]
}
