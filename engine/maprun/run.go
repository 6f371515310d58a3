package maprun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"stepwise/asl"
	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// Concurrency bounds the children of one map run running at once when
// its MaxConcurrency does not (AWS's bound); Starters bounds the child
// starts in flight across the runner, so that a large map run does not
// crowd out other work, and StartBytes the input of a run's starts in
// flight (one start goes whatever its input); a run's row is written at
// most every SaveEvery while it runs.
//
// Starters is the engine's largest batch of steps in one transaction
// (engine.DefaultMaxBatch): a child's start is its first step, committed
// with others, and a transaction's cost is mostly its own (the pages it
// writes to the log), so the children started together share one. With
// 32, a transaction held 19 children on average, and the children's rows
// cost a fifth more CPU each than with 256 (150 a transaction). A start
// in flight holds its input several times over (parsed, in its events),
// so large inputs (batches) go fewer at a time: 256 starts of a thousand
// items each tripled a server's peak memory.
const (
	Concurrency = 10000
	Starters    = 256
	StartBytes  = 2 << 20
	SaveEvery   = time.Second
)

// Host is what the runner needs of the engine: its children
// (start.Children, the host it shares with the nested runner), and what a
// run needs beside them.
type Host interface {
	start.Children
	// Context is the engine's: done when the engine stops. A run outlives
	// the dispatch of its task and goes on under it.
	Context() context.Context
	// Tasks carries out a task of the parent's: the writing of a run's
	// results (interp.TaskRequest.Write) goes through the engine's
	// runners.
	Tasks() task.Runner
	// Live says whether an execution runs on this node.
	Live(arn string) bool
}

// Config is where the runner's children run.
type Config struct {
	Region, Account string
	// Now is the engine's execution time, to the millisecond.
	Now func() time.Time
	// Logger logs what goes wrong out of any caller's sight; nil
	// discards.
	Logger *slog.Logger
	// Clustered says other nodes share the store: a child may run, and
	// end, on another node, and an UpdateMapRun be made there.
	Clustered bool
	// LoseStart, a test hook (nil outside tests), is asked before a run
	// starts a child: true drops the start as a server that died before
	// it committed would (the child is not stored, its start never
	// returns).
	LoseStart func(mapRunArn string, index int) bool
	// OpenLimit is the most map runs open at once (open.go); 0 for
	// DefaultOpenLimit, AWS's.
	OpenLimit int
}

// Runner carries out map-run tasks (a task.KindRunner).
type Runner struct {
	host Host
	cfg  Config

	mu      sync.Mutex
	runs    map[string]*mapRun // by ARN
	open    map[string]bool    // the ARNs of the open runs (open.go)
	backlog []waiter           // the runs waiting to open, in order
	sem     chan struct{}      // child starts in flight
}

// New returns a runner on its host.
func New(h Host, cfg Config) *Runner {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{host: h, cfg: cfg, runs: map[string]*mapRun{}, open: map[string]bool{}, sem: make(chan struct{}, Starters)}
}

// Takes takes a map run's task.
func (*Runner) Takes(t *task.Task) bool { return t.Request.MapRun != nil }

// Run runs the map run.
func (rn *Runner) Run(ctx context.Context, t *task.Task, done func(task.Result)) {
	go rn.run(ctx, t, done)
}

// mapRun is a map run in progress on this node.
type mapRun struct {
	rn     *Runner
	h      Host
	req    *interp.MapRunRequest
	parent *store.Execution
	taskID string
	done   func(task.Result)
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
	// startBytes is the input of the starts in flight.
	startBytes int

	saveMu    sync.Mutex
	savedSeq  uint64
	saved     store.MapRun // the settings last written, to see others' updates
	haveSaved bool
}

func (rn *Runner) get(arn string) *mapRun {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.runs[arn]
}

// run carries out a map-run task.
func (rn *Runner) run(ctx context.Context, t *task.Task, done func(task.Result)) {
	h := rn.host
	req := t.Request.MapRun
	parent, err := h.Executor().ExecutionGet(ctx, t.ExecutionArn)
	if err != nil {
		done(task.Result{Failure: failure.Newf(failure.Runtime, "map run: %v", err)})
		return
	}
	r := &mapRun{rn: rn, h: h, req: req, parent: parent, taskID: t.ID, done: done,
		names: maprun.NewNames(req.Arn, rn.cfg.Region, rn.cfg.Account, arnName(parent.StateMachineArn), req.Label,
			req.ExecutionType == asl.TypeExpress)}
	// The children run the ItemProcessor's states with the parent's
	// policies (state names are unique in a definition).
	r.policies, _ = interp.ParsePolicies(parent.Policies)
	batched, per := req.BatchSize()
	src := &spoolReader{ctx: h.Context(), ex: h.Executor(), arn: req.Arn}
	r.run = maprun.NewRun(req.Count, batched, per, req.Tolerance, req.Planner(src.read))
	if !rn.admit(req.Arn, parent.MapRunArn != "", t.ExecutionArn, t.ID) {
		// The engine stopped (the task is dispatched again when the
		// parent resumes), or the task was cancelled while its run
		// waited in the backlog.
		return
	}
	rn.mu.Lock()
	old := rn.runs[req.Arn]
	rn.runs[req.Arn] = r
	rn.mu.Unlock()
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
	// The task waits on the children's work, not on the outside.
	if !h.WaitOn(t.ExecutionArn, t.ID, req.Arn) {
		// Cancelled before it was registered (its Map state aborted).
		r.ended, r.superseded = true, true
		r.unregister()
		return
	}
	if err := r.load(ctx); err != nil {
		r.finishLocked(task.Result{Failure: failure.Newf(failure.Runtime, "map run: %v", err)}, "FAILED", nil)
		return
	}
	r.pump()
	go r.watch()
}

// arnName is the last part of an ARN (a state machine's name).
func arnName(arn string) string {
	if i := strings.LastIndexByte(arn, ':'); i >= 0 {
		return arn[i+1:]
	}
	return arn
}

// unregister forgets the run, unless another took its place. r.mu may be
// held (the order is r.mu, then the runner's mu).
func (r *mapRun) unregister() {
	rn := r.rn
	rn.mu.Lock()
	if rn.runs[r.req.Arn] == r {
		delete(rn.runs, r.req.Arn)
		rn.closeLocked(r.req.Arn)
	}
	rn.mu.Unlock()
}

// load creates the run's row, or picks up the run from it and the
// children it finds by the run's ARN (maprun.Run.Resume). r.mu is held.
func (r *mapRun) load(ctx context.Context) error {
	ex := r.h.Executor()
	now := r.rn.cfg.Now()
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
		rows, err := r.h.Executor().ExecutionList(ctx, p)
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
	if c := r.row.MaxConcurrency; c > 0 && c < Concurrency {
		return c
	}
	return Concurrency
}

// pump starts children while the run's concurrency allows, and ends the
// run once none is left. At most Starters starts of a run are in flight
// (each goes on with the next), and StartBytes of their input, but for
// the first. r.mu is held.
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
	for r.run.Active() < r.concurrency() && r.run.Starting() < Starters && r.startBytes < StartBytes {
		s, ok, err := r.run.Next()
		if err != nil {
			r.failWith(failure.As(fmt.Errorf("map run: %w", err)))
			return
		}
		if !ok {
			break
		}
		var input string
		if !s.Redrive {
			input = jsonvalue.String(s.Input)
			r.startBytes += len(input)
		}
		r.h.Go(func(ctx context.Context) { r.start(ctx, s, input) }) // the start is work: the clock waits for it
	}
	if r.run.Done() {
		if err := r.run.Check(); err != nil {
			// A bug, not a result: the run must not answer for items
			// it never ran.
			r.rn.cfg.Logger.ErrorContext(r.h.Context(), "engine: map run would succeed with items not run", "map_run_arn", r.req.Arn, "error", err)
			r.failWith(failure.Newf(failure.Runtime, "map run: %v", err))
			return
		}
		r.succeed()
	}
}

// start starts (or redrives) a child; input is its input's text. A start
// lost (LoseStart) holds its place in the run's starts and their bytes,
// as one in flight when its server died.
func (r *mapRun) start(ctx context.Context, s maprun.Start, input string) {
	h := r.h
	i := s.Index
	if lose := r.rn.cfg.LoseStart; lose != nil && !s.Redrive && lose(r.req.Arn, i) {
		return
	}
	r.rn.sem <- struct{}{}
	arn := r.names.Arn(i)
	var row *store.Execution
	var err error
	if s.Redrive {
		row, err = h.Redrive(ctx, arn)
	} else {
		row, err = h.Start(ctx, &start.Request{
			Target: &start.Target{
				StateMachine: &store.StateMachine{Arn: r.parent.StateMachineArn + "/" + r.req.Label, RevisionID: r.parent.RevisionID,
					RoleArn: r.parent.RoleArn, Type: r.req.ExecutionType},
				Machine: r.req.Processor, TestCase: r.parent.TestCase, Policies: r.policies,
			},
			ExecutionArn: arn, Name: r.names.Name(i),
			Input: &input, InputChecked: true, InputValue: s.Input, MapRunArn: r.req.Arn,
		})
		if errors.Is(err, store.ErrAlreadyExists) {
			row, err = h.Executor().ExecutionGet(ctx, arn)
		}
	}
	<-r.rn.sem
	r.mu.Lock()
	defer r.mu.Unlock()
	r.startBytes -= len(input)
	if r.ended {
		r.run.StartDropped(i)
		if err == nil && row.Status == history.StatusRunning && !r.superseded {
			// Started as the run ended: it stops with it.
			h.Go(func(ctx context.Context) { _ = h.Stop(ctx, arn, "The Map Run ended.") })
		}
		return
	}
	if err != nil {
		if errors.Is(err, task.ErrStopped) || ctx.Err() != nil {
			r.run.StartDropped(i)
			return // picked up again when the parent's task is
		}
		r.rn.cfg.Logger.ErrorContext(ctx, "engine: map run child start failed", "map_run_arn", r.req.Arn, "index", i, "error", err)
		r.run.StartFailed(i)
	} else {
		r.run.Started(i, childSummary(row))
	}
	r.dirty = true
	r.pump()
}

// ChildEnded records the end of one of a run's children (an execution
// whose row names its map run).
func (rn *Runner) ChildEnded(row *store.Execution) {
	r := rn.get(row.MapRunArn)
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
	r.finishLocked(task.Result{Failure: fl}, "FAILED", r.stopRunning())
}

// succeed ends the run whose children all ended within its tolerance:
// its result is the children's outputs, or what its ResultWriter makes
// of them. r.mu is held.
func (r *mapRun) succeed() {
	w := r.req.Writer
	if w == nil {
		r.finishLocked(task.Result{Output: r.run.Results()}, "SUCCEEDED", nil)
		return
	}
	// Writing needs the children's rows: the run ends once it is done.
	r.writing = true
	r.h.Go(func(context.Context) {
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
	})
}

// write carries out the run's ResultWriter (maprun.Run.Outcome): the
// results transformed, and with a Resource written by the integrations
// as a task of the parent's (interp.TaskRequest.Write).
func (r *mapRun) write(w *maprun.Writer) task.Result {
	ctx := r.h.Context()
	var entries []*jsonvalue.Object
	if w.NeedsEntries() {
		found, err := r.children(ctx)
		if err != nil {
			return task.Result{Failure: failure.Newf(failure.ResultWriterFailed, "The map run's results could not be read: %v", err)}
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
		return task.Result{Output: out}
	}
	write.MapRunArn = r.req.Arn
	done := make(chan task.Result, 1)
	t := &task.Task{ExecutionArn: r.parent.Arn, ID: r.taskID + "-write", StateMachineArn: r.parent.StateMachineArn,
		Request: &interp.TaskRequest{Resource: w.Resource, Write: write}}
	r.h.Tasks().Run(ctx, t, func(res task.Result) { done <- res })
	select {
	case res := <-done:
		return res
	case <-ctx.Done():
		return task.Result{Failure: failure.New(failure.ResultWriterFailed, "The server stopped while the results were written.")}
	}
}

// finishLocked ends the run: its children in stop are stopped, its row
// says how it ended, and the parent's task is answered. r.mu is held.
func (r *mapRun) finishLocked(res task.Result, status string, stop []string) {
	if r.ended {
		return
	}
	r.ended = true
	h, log := r.h, r.rn.cfg.Logger
	now := r.rn.cfg.Now()
	r.row.Status, r.row.StopDate = status, &now
	row, seq := r.snapshot()
	r.unregister()
	h.Go(func(ctx context.Context) {
		r.stopAll(stop, "The Map Run failed.")
		if err := r.save(row, seq); err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "engine: map run row", "map_run_arn", row.Arn, "error", err)
		}
		if status == "SUCCEEDED" && r.req.Spooled {
			// A run that succeeded is never run again: its spool goes.
			if err := h.Executor().MapItemsDelete(ctx, r.req.Arn); err != nil && ctx.Err() == nil {
				log.ErrorContext(ctx, "engine: map run items", "map_run_arn", row.Arn, "error", err)
			}
		}
		h.Ended(r.req.Arn)
		r.done(res)
	})
}
