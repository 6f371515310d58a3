package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// A distributed Map's map run (interp.MapRunRequest) runs here as child
// executions: one per input, named from the map run and the input's
// index so that a run picked up again (after a restart, or redriven)
// finds the children it started, and starts exactly those it did not
// (the holes below the last found, then the rest): each child is
// started once. Each child is an execution of its own,
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
	// policies are the parent's, which its children run with.
	policies interp.Policies

	mu       sync.Mutex
	row      store.MapRun
	seq      uint64 // of the latest snapshot of row (snapshot)
	namePfx  string // the first part of the children's names
	plan     *interp.Planner
	planned  bool   // every child is planned
	state    []int8 // by child, as far as planned (or found)
	items    []int32
	results  []any
	nplanned int   // children planned
	redo     []int // children to redrive
	// holes are the children planned again on a pick-up that were never
	// started (a start in flight when the server died, below a child
	// that was stored): started before any child planned afresh.
	holes    []hole
	running  int
	starting int
	failed   int // items failed, timed out or aborted
	total    int // items
	// tolCount (-1: not set) and tolPercent (0: not set) are the
	// tolerance in effect (UpdateMapRun changes them).
	tolCount   int64
	tolPercent float64
	dirty      bool
	// ended: the run is over (answered, or answering); superseded: a
	// dispatch of the same task again took it over, and it answers
	// nothing; writing: its ResultWriter is under way.
	ended, superseded, writing, cancelled bool

	saveMu    sync.Mutex
	savedSeq  uint64
	saved     store.MapRun // the settings last written, to see others' updates
	haveSaved bool
}

// hole is a child found never started below one that was, with its
// input as planned again.
type hole struct {
	i     int
	input any
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
	r := &mapRun{e: e, req: req, parent: parent, taskID: t.ID, done: done, tolCount: req.ToleratedCount, tolPercent: req.TolerancePercent,
		total: int(req.Count)}
	// The children run the ItemProcessor's states with the parent's
	// policies (state names are unique in a definition).
	r.policies, _ = interp.ParsePolicies(parent.Policies)
	sum := sha256.Sum256([]byte(req.Arn))
	h := hex.EncodeToString(sum[:10])
	r.namePfx = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-"
	r.plan = req.Planner(func(from int64, limit int) ([]any, error) {
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
	})
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

// childName is the name of child i: a UUID whose first part derives
// from the map run and whose last part is the index.
func (r *mapRun) childName(i int) string { return fmt.Sprintf("%s%012x", r.namePfx, i) }

// childIndex is the index of the child of that name; false for a name
// that is not one of the run's.
func (r *mapRun) childIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, r.namePfx)
	if !ok || len(rest) != 12 {
		return 0, false
	}
	i, err := strconv.ParseInt(rest, 16, 64)
	return int(i), err == nil && i >= 0
}

// grow makes room for child i in the run's per-child slices.
func (r *mapRun) grow(i int) {
	for len(r.state) <= i {
		r.state = append(r.state, childPending)
		r.items = append(r.items, 0)
		r.results = append(r.results, nil)
	}
}

// planOne plans the next child: its index and input (false once every
// child is planned). r.mu is held.
func (r *mapRun) planOne() (int, any, bool, error) {
	if r.planned {
		return 0, nil, false, nil
	}
	in, n, ok, err := r.plan.Next()
	if err != nil || !ok {
		r.planned = err == nil
		return 0, nil, false, err
	}
	k := r.nplanned
	r.nplanned++
	r.grow(k)
	r.items[k] = int32(n)
	return k, in, true, nil
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
// those that did not succeed run again. r.mu is held.
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
	var found []*store.Execution
	p := &store.ExecutionListParams{MapRunArn: r.req.Arn, Limit: 1000}
	for {
		rows, err := ex.ExecutionList(ctx, p)
		if err != nil {
			return err
		}
		found = append(found, rows...)
		if len(rows) < p.Limit {
			break
		}
		last := rows[len(rows)-1]
		p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
	}
	// The children found were planned before: plan as far again, for
	// their numbers of items (their inputs are theirs already). Children
	// start concurrently, so one may be stored before another planned
	// earlier: each index below the last found that was not found is a
	// hole, started first (with its input planned again), and exactly
	// the holes are.
	last := -1
	stored := make(map[int]bool, len(found))
	for _, c := range found {
		if i, ok := r.childIndex(c.Name); ok {
			last = max(last, i)
			stored[i] = true
		}
	}
	for r.nplanned <= last {
		k, in, ok, err := r.planOne()
		if err != nil || !ok {
			return fmt.Errorf("the items no longer plan the children found: %v", err)
		}
		if !stored[k] {
			r.holes = append(r.holes, hole{i: k, input: in})
		}
	}
	for _, c := range found {
		i, ok := r.childIndex(c.Name)
		if !ok {
			continue
		}
		if c.Status == history.StatusRunning {
			r.state[i] = childRunning
			r.running++
			continue
		}
		r.childDone(i, c)
		if redrive && r.state[i] != childSucceeded {
			r.failed -= int(r.items[i])
			r.redo = append(r.redo, i)
		}
	}
	return r.save(r.snapshot())
}

// settingsToRow shows the tolerance in effect in the row, as
// DescribeMapRun does (0 for a bound not set).
func (r *mapRun) settingsToRow() {
	r.row.ToleratedFailureCount = max(r.tolCount, 0)
	r.row.ToleratedFailurePercentage = r.tolPercent
}

// rowToSettings takes the tolerance of a row written by an UpdateMapRun.
func (r *mapRun) rowToSettings(row *store.MapRun) {
	if row.ToleratedFailureCount != max(r.tolCount, 0) {
		r.tolCount = row.ToleratedFailureCount
	}
	r.tolPercent = row.ToleratedFailurePercentage
}

// childDone records child i's end from its row.
func (r *mapRun) childDone(i int, c *store.Execution) {
	switch c.Status {
	case history.StatusSucceeded:
		r.state[i] = childSucceeded
		if c.Output != nil {
			if v, err := jsonvalue.ParseString(*c.Output); err == nil {
				r.results[i] = v
			}
		}
		return
	case history.StatusTimedOut:
		r.state[i] = childTimedOut
	case history.StatusAborted:
		r.state[i] = childAborted
	default:
		r.state[i] = childFailed
	}
	// A child that did not succeed is its result as it is (AWS's NONE
	// transformation), whatever the transformation.
	r.results[i] = childEntry(c)
	r.failed += int(r.items[i])
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
// run once none is left. At most mapRunStarters starts of a run are in
// flight (each goes on with the next). r.mu is held.
func (r *mapRun) pump() {
	if r.ended {
		return
	}
	if r.exceeded() {
		if r.req.FinishRunning && r.running+r.starting > 0 {
			return // the children running end first; none starts
		}
		r.fail()
		return
	}
	for r.running+r.starting < r.concurrency() && r.starting < mapRunStarters {
		i, redrive := -1, false
		var input any
		if len(r.redo) > 0 {
			i, redrive = r.redo[0], true
			r.redo = r.redo[1:]
		} else if len(r.holes) > 0 {
			i, input = r.holes[0].i, r.holes[0].input
			r.holes[0] = hole{}
			r.holes = r.holes[1:]
		} else {
			// The next child planned that was not found started already.
			for {
				k, in, ok, err := r.planOne()
				if err != nil {
					r.failWith(failure.As(fmt.Errorf("map run: %w", err)))
					return
				}
				if !ok {
					break
				}
				if r.state[k] == childPending {
					i, input = k, in
					break
				}
			}
		}
		if i < 0 {
			break
		}
		r.state[i] = childStarting
		r.starting++
		r.e.work.stepBegan() // the start is work: the clock waits for it
		go r.start(i, input, redrive)
	}
	if r.running+r.starting == 0 && len(r.redo) == 0 && len(r.holes) == 0 && r.planned {
		if err := r.unaccounted(); err != nil {
			// A bug, not a result: the run must not answer for items
			// it never ran.
			r.e.log.ErrorContext(r.e.ctx, "engine: map run would succeed with items not run", "map_run_arn", r.req.Arn, "error", err)
			r.failWith(failure.Newf(failure.Runtime, "map run: %v", err))
			return
		}
		r.succeed()
	}
}

// unaccounted checks, before the run succeeds, that its counts cover
// every item: each child planned ended, and their items add up to the
// run's. r.mu is held.
func (r *mapRun) unaccounted() error {
	if len(r.state) != r.nplanned {
		return fmt.Errorf("%d children known, %d planned", len(r.state), r.nplanned)
	}
	var items int64
	notEnded, first := 0, -1
	for i, s := range r.state {
		switch s {
		case childSucceeded, childFailed, childTimedOut, childAborted:
			items += int64(r.items[i])
		default:
			if first < 0 {
				first = i
			}
			notEnded++
		}
	}
	if notEnded > 0 {
		return fmt.Errorf("%d of %d children never ended (the first: %d)", notEnded, len(r.state), first)
	}
	if items != int64(r.total) {
		return fmt.Errorf("the children ran %d of %d items", items, r.total)
	}
	return nil
}

// start starts (or redrives) child i.
func (r *mapRun) start(i int, input any, redrive bool) {
	e := r.e
	defer e.work.stepEnded()
	if lose := e.cfg.loseChildStart; lose != nil && !redrive && lose(r.req.Arn, i) {
		return
	}
	e.mapRuns.sem <- struct{}{}
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
			Input: jsonvalue.String(input), InputValue: input, InputParsed: true,
			TestCase: r.parent.TestCase, MapRunArn: r.req.Arn, Policies: r.policies,
		})
		if errors.Is(err, store.ErrAlreadyExists) {
			row, err = e.store.Executor().ExecutionGet(e.ctx, arn)
		}
	}
	<-e.mapRuns.sem
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starting--
	if r.ended {
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
			return // picked up again when the parent's task is
		}
		e.log.ErrorContext(e.ctx, "engine: map run child start failed", "map_run_arn", r.req.Arn, "index", i, "error", err)
		r.state[i] = childFailed
		r.results[i] = nil
		r.failed += int(r.items[i])
		r.dirty = true
		r.pump()
		return
	}
	if r.state[i] == childStarting { // not ended since (childEnded)
		if row.Status == history.StatusRunning {
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
	i, ok := r.childIndex(row.Name)
	if !ok || r.ended || i >= len(r.state) {
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

// exceeded reports whether the failed items pass the tolerance in effect.
func (r *mapRun) exceeded() bool {
	tol := interp.MapRunRequest{ToleratedCount: r.tolCount, TolerancePercent: r.tolPercent}
	return tol.Exceeded(r.failed, r.total)
}

// stopRunning marks the children running or starting aborted and returns
// their ARNs, for the run to stop them. r.mu is held.
func (r *mapRun) stopRunning() []string {
	var arns []string
	for i, s := range r.state {
		if s == childRunning || s == childStarting {
			r.state[i] = childAborted
			arns = append(arns, r.childArn(i))
		}
	}
	return arns
}

// fail ends the run past its tolerance: the children still running are
// stopped before the parent hears of it. r.mu is held.
func (r *mapRun) fail() { r.failWith(interp.ToleranceFailure()) }

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
		r.finishLocked(TaskResult{Output: r.results}, "SUCCEEDED", nil)
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

// stopAll stops the children named, and waits for it.
func (r *mapRun) stopAll(arns []string, cause string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, mapRunStarters)
	for _, arn := range arns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := r.e.StopExecution(r.e.ctx, arn, "", cause); err != nil && !errors.Is(err, errStopped) {
				r.e.log.DebugContext(r.e.ctx, "engine: stop map run child", "execution_arn", arn, "error", err)
			}
		}()
	}
	wg.Wait()
}

// snapshot is the run's row as it stands, counts filled in, and its
// sequence number. r.mu is held.
func (r *mapRun) snapshot() (store.MapRun, uint64) {
	r.fillCounts()
	r.seq++
	return r.row, r.seq
}

// save writes a snapshot of the row, unless a later one was written
// already: the writes of a run land in the order of their snapshots.
func (r *mapRun) save(row store.MapRun, seq uint64) error {
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	if seq <= r.savedSeq {
		return nil
	}
	if err := r.e.store.Executor().MapRunPut(r.e.ctx, &row); err != nil {
		return err
	}
	r.savedSeq, r.saved, r.haveSaved = seq, row, true
	return nil
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
	if r.ended && !r.writing {
		return
	}
	if r.writing {
		r.cancelled = true
		e.cfg.Tasks.Cancel(parentArn, taskID+"-write")
	}
	stop := r.stopRunning()
	r.ended = true
	now := e.now()
	r.row.Status, r.row.StopDate = "ABORTED", &now
	row, seq := r.snapshot()
	r.unregister()
	e.work.stepBegan()
	go func() {
		defer e.work.stepEnded()
		r.stopAll(stop, "The Map Run was aborted.")
		if err := r.save(row, seq); err != nil && e.ctx.Err() == nil {
			e.log.ErrorContext(e.ctx, "engine: map run row", "map_run_arn", row.Arn, "error", err)
		}
	}()
}

// watch writes the run's row as it progresses, takes the settings an
// UpdateMapRun on another node wrote, and finds the ends of children
// that ended where the run could not hear of them (on another node).
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
		polls++
		if e.cl != nil {
			r.adoptUpdate()
		}
		r.mu.Lock()
		if r.ended {
			r.mu.Unlock()
			return
		}
		var row store.MapRun
		var seq uint64
		if r.dirty {
			r.dirty = false
			row, seq = r.snapshot()
		}
		var elsewhere []int
		if polls%5 == 0 && e.cl != nil {
			for i, s := range r.state {
				if s == childRunning && !e.isLive(r.childArn(i)) {
					elsewhere = append(elsewhere, i)
				}
			}
		}
		r.mu.Unlock()
		if seq > 0 {
			if err := r.save(row, seq); err != nil && e.ctx.Err() == nil {
				e.log.ErrorContext(e.ctx, "engine: map run row", "map_run_arn", row.Arn, "error", err)
			}
		}
		for _, i := range elsewhere {
			if c, err := e.store.Executor().ExecutionGet(e.ctx, r.childArn(i)); err == nil && c.Status != history.StatusRunning {
				e.mapRuns.childEnded(c)
			}
		}
	}
}

// adoptUpdate applies the settings another node's UpdateMapRun wrote to
// the run's row (those differing from what this node last wrote).
func (r *mapRun) adoptUpdate() {
	stored, err := r.e.store.Executor().MapRunGet(r.e.ctx, r.req.Arn)
	if err != nil {
		return
	}
	r.saveMu.Lock()
	saved, ok := r.saved, r.haveSaved
	r.saveMu.Unlock()
	if !ok || (stored.MaxConcurrency == saved.MaxConcurrency && stored.ToleratedFailureCount == saved.ToleratedFailureCount &&
		stored.ToleratedFailurePercentage == saved.ToleratedFailurePercentage) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	r.row.MaxConcurrency = stored.MaxConcurrency
	r.rowToSettings(stored)
	r.settingsToRow()
	r.dirty = true
	r.pump()
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
		items[s] += int64(r.items[i])
		execs[s]++
	}
	// Items and children not planned yet are pending.
	var planned int64
	for _, n := range items {
		planned += n
	}
	items[childPending] += int64(r.total) - planned
	children := r.children()
	execs[childPending] += children - int64(len(r.state))
	r.row.ItemCounts = countsJSON(items, int64(r.total))
	r.row.ExecutionCounts = countsJSON(execs, children)
}

// children is how many children the run has: known from the start
// unless batches are bounded by bytes (then as many as planned so far,
// until all are).
func (r *mapRun) children() int64 {
	if r.planned {
		return int64(r.nplanned)
	}
	batched, per := r.req.BatchSize()
	switch {
	case !batched:
		return r.req.Count
	case per > 0:
		return (r.req.Count + per - 1) / per
	}
	return int64(len(r.state))
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
// they are). A run in progress here applies them at once; one running on
// another node takes them from its row within a second or so.
func (e *Engine) UpdateMapRun(ctx context.Context, arn string, maxConcurrency *int, percent *float64, count *int64) error {
	if r := e.mapRuns.get(arn); r != nil {
		r.mu.Lock()
		if !r.ended {
			if maxConcurrency != nil {
				r.row.MaxConcurrency = *maxConcurrency
			}
			if percent != nil {
				r.tolPercent = *percent
			}
			if count != nil {
				r.tolCount = *count
			}
			r.settingsToRow()
			r.pump()
			row, seq := r.snapshot()
			r.mu.Unlock()
			return r.save(row, seq)
		}
		r.mu.Unlock()
	}
	row, err := e.store.Executor().MapRunGet(ctx, arn)
	if err != nil {
		return err
	}
	if maxConcurrency != nil {
		row.MaxConcurrency = *maxConcurrency
	}
	if percent != nil {
		row.ToleratedFailurePercentage = *percent
	}
	if count != nil {
		row.ToleratedFailureCount = *count
	}
	return e.store.Executor().MapRunPut(ctx, row)
}

// write carries out the run's ResultWriter: the results transformed,
// and written to S3 when the writer has a Resource.
func (r *mapRun) write(w *interp.ResultWriterConfig) TaskResult {
	e := r.e
	var entries []*jsonvalue.Object
	if w.Transformation == "NONE" {
		var err error
		if entries, err = r.entries(); err != nil {
			return TaskResult{Failure: failure.Newf(failure.ResultWriterFailed, "The map run's results could not be read: %v", err)}
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
		return TaskResult{Failure: failure.New(failure.ResultWriterFailed, "The server stopped while the results were written.")}
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
			if i, ok := r.childIndex(c.Name); ok && i < len(out) {
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
// <state machine ARN>/<label>[/<label>...], in two: the state machine's
// ARN and the labels ("" when it is no such ARN).
func splitLabel(smArn string) (base, label string) {
	name := arnName(smArn)
	i := strings.IndexByte(name, '/')
	if i < 0 {
		return smArn, ""
	}
	return smArn[:len(smArn)-len(name)+i], name[i+1:]
}

// spoolItems carries out a distributed Map's ItemReader by keeping the
// items in the store as they are read (its map run's spool), a batch at a
// time, and answers with their number (interp.SpooledItems): neither the
// object nor its items are held, and the replay log keeps the count
// only. A read done again (the task dispatched again) starts afresh.
func (e *Engine) spoolItems(ctx context.Context, t *Task, st ItemStreamer, done func(TaskResult)) {
	arn := t.Request.Reader.Spool
	ex := e.store.Executor()
	if err := ex.MapItemsDelete(ctx, arn); err != nil {
		done(TaskResult{Failure: failure.Newf(failure.ItemReaderFailed, "The items could not be kept: %v", err)})
		return
	}
	var n int64
	var texts []string
	err := st.StreamItems(ctx, t, func(items []any) error {
		texts = texts[:0]
		for _, it := range items {
			texts = append(texts, jsonvalue.String(it))
		}
		if err := ex.MapItemsPut(ctx, arn, n, texts); err != nil {
			return fmt.Errorf("the items could not be kept: %w", err)
		}
		n += int64(len(items))
		return nil
	})
	if err != nil {
		var fl *failure.Failure
		if !errors.As(err, &fl) {
			fl = failure.Newf(failure.ItemReaderFailed, "%v", err)
		}
		done(TaskResult{Failure: fl})
		return
	}
	done(TaskResult{Output: interp.SpooledItems(n)})
}
