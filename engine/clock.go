package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"stepwise/engine/task"
	"stepwise/store"
)

// Execution time is virtual: the interpreter, history timestamps and
// timers all read the engine's clock, which is the real clock moved by a
// rate and by jumps.
//
//	scale F > 0   virtual time runs 1/F times as fast as real time; a timer
//	              due in d takes d·F of real time, and a task that takes r
//	              of real time takes r/F of execution time
//	scale 0       the clock jumps to the next timer as soon as no step is
//	              in flight: every timer fires at once, task timeouts
//	              included
//	skip          the clock runs at the real rate and jumps to the next
//	              timer only while the engine is idle: no step in flight
//	              and no task waiting on the outside world (see work)
//
// In every mode timers fire in the order of their virtual deadlines, and
// the timers of one execution one at a time. A jump is only ever on the
// way to a timer of an execution: the engine's alarms (a schedule's next
// slot) fire when the clock reaches them, by its run or by such a jump,
// one at a time and each at its own time, but are never jumped to for
// their own sake. An idle engine with nothing but a nightly schedule
// stays where it is.
//
// A virtual clock is also moved by hand (AdvanceClock): to a goal, the
// same way, deadline by deadline, alarms included.
//
// # A clock that never goes back
//
// A virtual clock (any scale but 1, or skip) is kept in the store
// (store.ClockStore): every half second of real time, and at once after a
// jump, the engine stores a ceiling clockAhead of real time past its
// reading, and on a graceful stop the reading itself. A restart resumes
// the clock from there (at least), not from real time: what was stamped
// before (stop dates, a schedule's last slot) stays in the past, the time
// the server was down does not count, and a crash moves the clock on by at
// most the lead it had stored. The nodes of a cluster share one anchor: a
// node that starts while another renews the clock joins it, and the first
// one to start after all stopped anchors it again at the ceiling.

// clock is the engine's virtual clock: virtual time vbase at real time
// rbase, running at rate virtual seconds per real second since.
type clock struct {
	real func() time.Time
	rate float64
	// jumped, when set, is called after advance moved the clock.
	jumped func()

	mu           sync.Mutex
	vbase, rbase time.Time
}

// clockAhead is how far, in real time, the stored ceiling leads the
// clock's reading; clockEvery is how often it is stored again.
const (
	clockAhead = 2 * time.Second
	clockEvery = 500 * time.Millisecond
)

// newClock returns a clock reading real now, running at 1/scale of real
// time (at the real rate for a scale of 0, whose clock only jumps).
func newClock(real func() time.Time, scale float64) *clock {
	rate := 1.0
	if scale > 0 {
		rate = 1 / scale
	}
	r := real()
	return &clock{real: real, rate: rate, vbase: r, rbase: r}
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at(c.real())
}

// at is the virtual time at real time r; c.mu is held.
func (c *clock) at(r time.Time) time.Time {
	return c.vbase.Add(scaleDuration(r.Sub(c.rbase), c.rate))
}

// until is the real time left until virtual time t; 0 once t has come.
func (c *clock) until(t time.Time) time.Duration {
	d := t.Sub(c.now())
	if d <= 0 {
		return 0
	}
	return max(scaleDuration(d, 1/c.rate), time.Nanosecond)
}

// advance moves the clock forward to t, if it is not there yet.
func (c *clock) advance(t time.Time) {
	c.mu.Lock()
	r := c.real()
	moved := t.After(c.at(r))
	if moved {
		c.vbase, c.rbase = t, r
	}
	c.mu.Unlock()
	if moved && c.jumped != nil {
		c.jumped()
	}
}

// rebase makes the clock read v at real time r.
func (c *clock) rebase(v, r time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vbase, c.rbase = v, r
}

// ahead is clockAhead of real time in execution time.
func (c *clock) ahead() time.Duration { return scaleDuration(clockAhead, c.rate) }

// scaleDuration is d·f, kept within the range of a Duration.
func scaleDuration(d time.Duration, f float64) time.Duration {
	v := float64(d) * f
	switch {
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(v)
}

// stored says whether the engine keeps its clock in the store: a virtual
// one. Real time needs no keeping.
func (e *Engine) stored() bool { return e.cfg.TimeSkip || e.cfg.WaitTimeScale != 1 }

// startClock starts the stored clock, or joins the cluster's, before
// anything reads it: from where it stopped, and at least real now.
func (e *Engine) startClock(ctx context.Context) error {
	if !e.stored() {
		return nil
	}
	e.clockKick = make(chan struct{}, 1)
	e.clock.jumped = e.kickClock
	r := e.cfg.Now()
	p := &store.ClockStartParams{Real: r, Floor: e.clock.now()}
	if e.cfg.ClockFloor != nil {
		floor, err := e.cfg.ClockFloor(ctx)
		if err != nil {
			return fmt.Errorf("engine: the clock's floor: %w", err)
		}
		if floor.After(p.Floor) {
			p.Floor = floor
		}
	}
	if e.cl != nil {
		p.RunningSince = r.Add(-e.cl.Lease())
	}
	c, err := e.store.Executor().ClockStart(ctx, p)
	if err != nil {
		return fmt.Errorf("engine: start the clock: %w", err)
	}
	v := c.Virtual
	if c.Real.UnixMilli() != r.UnixMilli() {
		// A running cluster's clock: where its anchor has run to since.
		v = v.Add(scaleDuration(r.Sub(c.Real), e.clock.rate))
	}
	e.clock.rebase(v, r)
	e.clockCeiling = c.Ceiling
	e.log.InfoContext(ctx, "engine: execution time resumed", "at", v, "joined", !c.Real.Equal(r.UTC().Truncate(time.Millisecond)))
	return e.storeClock(ctx)
}

// kickClock asks keepClock to store the ceiling now (the clock jumped).
func (e *Engine) kickClock() {
	select {
	case e.clockKick <- struct{}{}:
	default:
	}
}

// storeClock stores a ceiling clockAhead past the clock's reading.
func (e *Engine) storeClock(ctx context.Context) error {
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	if e.clockStopped {
		return task.ErrStopped
	}
	ceiling := e.clock.now().Add(e.clock.ahead())
	if ceiling.Before(e.clockCeiling) {
		ceiling = e.clockCeiling
	}
	if err := e.store.Executor().ClockAdvance(ctx, &store.ClockAdvanceParams{Ceiling: ceiling, Renewed: e.cfg.Now()}); err != nil {
		return err
	}
	e.clockCeiling = ceiling
	return nil
}

// keepClock stores the clock's ceiling every clockEvery and after each
// jump, until ctx ends.
func (e *Engine) keepClock(ctx context.Context) {
	t := time.NewTicker(clockEvery)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.clockKick:
		}
		if err := e.storeClock(ctx); err != nil {
			if !failing && ctx.Err() == nil {
				e.log.WarnContext(ctx, "engine: storing the execution time failed; retried", "error", err)
			}
			failing = true
			continue
		}
		failing = false
	}
}

// stopClock stores the clock's reading as where it stopped, so that a
// restart resumes exactly there. A node of a cluster leaves the clock to
// the others (and the ceiling to the next start).
func (e *Engine) stopClock() {
	if !e.stored() || e.cl != nil || e.clockKick == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	e.clockStopped = true
	if err := e.store.Executor().ClockStop(ctx, e.now()); err != nil {
		e.log.Warn("engine: storing where the execution time stopped failed", "error", err)
	}
}

// holdClock stores the ceiling before the caller stamps something with
// the clock outside an execution's steps (a schedule's slot).
func (e *Engine) holdClock(ctx context.Context) error {
	if !e.stored() || e.clockKick == nil {
		return nil
	}
	e.clockMu.Lock()
	ok := e.clock.now().Before(e.clockCeiling)
	e.clockMu.Unlock()
	if ok {
		return nil
	}
	return e.storeClock(ctx)
}

// ErrRealClock is an advance of a clock that runs in real time: only a
// virtual clock (TimeSkip, or a WaitTimeScale other than 1) is advanced.
var ErrRealClock = errors.New("the clock is real time, which cannot be advanced: " +
	"advancing needs a virtual clock (serve --time-skip or --wait-time-scale)")

// ErrClusterClock is an advance of the clock of a cluster's node: the
// nodes share one clock, which none moves alone.
var ErrClusterClock = errors.New("the clock of a cluster's node cannot be advanced: the nodes share one clock")

// ClockBackError is an advance to a time before the clock's reading.
type ClockBackError struct{ To, Now time.Time }

func (e *ClockBackError) Error() string {
	return fmt.Sprintf("the clock never goes back: %s is before its reading %s",
		e.To.UTC().Format(time.RFC3339Nano), e.Now.UTC().Format(time.RFC3339Nano))
}

// VirtualClock says whether the engine's clock is virtual (and may be
// advanced): TimeSkip, or a WaitTimeScale other than 1.
func (e *Engine) VirtualClock() bool { return e.stored() }

// AdvanceClock moves the virtual clock forward to to, as time skipping
// does, deadline by deadline: the timers of the executions and the
// engine's alarms (a schedule's slots) that fall due on the way fire in
// the order of their deadlines, each at its own time, and what they
// start runs before the clock moves on. It returns the clock's reading
// once it reached to and nothing due by then is left, or when ctx ends
// or the engine halts (the clock stays where it got to). Before each
// step the stored ceiling moves past the step's target (no further), so
// that nothing stamped on the way is ahead of the clock after a restart,
// and a crash on the way resumes where the advance had got to.
//
// As when it skips by itself, the clock moves only between steps and,
// under TimeSkip or at a WaitTimeScale, only while no task waits on the
// outside: meanwhile it runs at its own rate, and the advance is over
// once that run reaches to. An advance waits for the one before (or
// until ctx ends, or the engine halts).
func (e *Engine) AdvanceClock(ctx context.Context, to time.Time) (time.Time, error) {
	return e.advanceClock(ctx, func(time.Time) time.Time { return to })
}

// AdvanceClockBy is AdvanceClock by d from the clock's reading once the
// advances before it are over.
func (e *Engine) AdvanceClockBy(ctx context.Context, d time.Duration) (time.Time, error) {
	return e.advanceClock(ctx, func(now time.Time) time.Time { return now.Add(d) })
}

// advanceClock advances the clock to goal(its reading), once it is this
// advance's turn.
func (e *Engine) advanceClock(ctx context.Context, goal func(now time.Time) time.Time) (time.Time, error) {
	switch {
	case !e.stored():
		return time.Time{}, ErrRealClock
	case e.cl != nil:
		return time.Time{}, ErrClusterClock
	case e.clockKick == nil:
		return time.Time{}, task.ErrStopped
	}
	select {
	case e.advancing <- struct{}{}:
	case <-ctx.Done():
		return e.now(), ctx.Err()
	case <-e.halted:
		return e.now(), task.ErrStopped
	}
	defer func() { <-e.advancing }()
	if e.halting.Load() {
		return e.now(), task.ErrStopped
	}
	now := e.now()
	to := goal(now)
	if to.Before(now) {
		return now, &ClockBackError{To: to, Now: now}
	}
	done, need := e.timers.advanceTo(to)
	defer e.timers.endAdvance(done)
	for {
		select {
		case <-done:
			return e.now(), nil
		case at := <-need:
			if err := e.raiseCeiling(ctx, at); err != nil {
				if errors.Is(err, task.ErrStopped) {
					return e.now(), err
				}
				return e.now(), fmt.Errorf("engine: store the execution time: %w", err)
			}
			e.timers.allow(done, at)
		case <-ctx.Done():
			return e.now(), ctx.Err()
		case <-e.halted:
			return e.now(), task.ErrStopped
		}
	}
}

// raiseCeiling stores a ceiling at least clockAhead past t, unless the
// engine stored where its clock stopped.
func (e *Engine) raiseCeiling(ctx context.Context, t time.Time) error {
	e.clockMu.Lock()
	defer e.clockMu.Unlock()
	if e.clockStopped {
		return task.ErrStopped
	}
	ceiling := t.Add(e.clock.ahead())
	if !ceiling.After(e.clockCeiling) {
		return nil
	}
	if err := e.store.Executor().ClockAdvance(ctx, &store.ClockAdvanceParams{Ceiling: ceiling, Renewed: e.cfg.Now()}); err != nil {
		return err
	}
	e.clockCeiling = ceiling
	return nil
}

// work is what the engine waits for from outside its timers: steps in
// flight and tasks without a result. In skip mode the clock jumps only
// when there is none.
//
// A task waits on the outside (a worker, a callback, a service) unless it
// is a nested execution's task waiting for the child to end or to send its
// token: the child's own work counts instead. When the child ends, or the
// task's result arrives, the task waits on the outside again until its
// result is applied.
type work struct {
	mu       sync.Mutex
	steps    int
	tasks    map[timerKey]*taskWork
	outside  int                   // tasks waiting on the outside
	children map[string][]timerKey // child ARN → parents' tasks waiting on it
	idle     func()                // called when work ends and no step is in flight
}

type taskWork struct {
	child    string // the child execution the task waits on; "": the outside
	answered bool   // its result arrived and waits to be applied
}

func newWork() *work {
	return &work{tasks: map[timerKey]*taskWork{}, children: map[string][]timerKey{}}
}

func (w *work) stepBegan() {
	w.mu.Lock()
	w.steps++
	w.mu.Unlock()
}

func (w *work) stepEnded() {
	w.mu.Lock()
	w.steps--
	idle := w.steps == 0
	w.mu.Unlock()
	if idle && w.idle != nil {
		w.idle()
	}
}

// taskRunning records a task dispatched, or found without a result on
// rebuilding its execution: it waits on the outside.
func (w *work) taskRunning(arn, id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := timerKey{arn, id}
	if t, ok := w.tasks[k]; ok {
		w.toOutside(k, t)
		t.answered = false
		return
	}
	w.tasks[k] = &taskWork{}
	w.outside++
}

// taskOnChild records that a task waits for child execution childArn,
// unless its result has arrived.
func (w *work) taskOnChild(arn, id, childArn string) {
	w.mu.Lock()
	k := timerKey{arn, id}
	t, ok := w.tasks[k]
	if !ok || t.child != "" || t.answered {
		w.mu.Unlock()
		return
	}
	t.child = childArn
	w.children[childArn] = append(w.children[childArn], k)
	w.outside--
	idle := w.steps == 0
	w.mu.Unlock()
	if idle && w.idle != nil {
		w.idle()
	}
}

// taskAnswered records that a task's result arrived: until it is applied,
// the task waits on the outside.
func (w *work) taskAnswered(arn, id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := timerKey{arn, id}
	if t, ok := w.tasks[k]; ok {
		w.toOutside(k, t)
		t.answered = true
	}
}

// childEnded says execution arn ended: the parents' tasks that waited on
// it wait on the outside until their results are applied.
func (w *work) childEnded(arn string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range w.children[arn] {
		if t := w.tasks[k]; t != nil && t.child == arn {
			t.child = ""
			w.outside++
		}
	}
	delete(w.children, arn)
}

// has says whether a task is dispatched and neither cancelled nor has its
// result applied.
func (w *work) has(arn, id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tasks[timerKey{arn, id}] != nil
}

// taskEnded records a task's result applied, or the task cancelled.
func (w *work) taskEnded(arn, id string) {
	w.mu.Lock()
	k := timerKey{arn, id}
	t, ok := w.tasks[k]
	if !ok {
		w.mu.Unlock()
		return
	}
	w.toOutside(k, t)
	delete(w.tasks, k)
	w.outside--
	idle := w.steps == 0
	w.mu.Unlock()
	if idle && w.idle != nil {
		w.idle()
	}
}

// toOutside makes task k, t wait on the outside; w.mu is held.
func (w *work) toOutside(k timerKey, t *taskWork) {
	if t.child == "" {
		return
	}
	ks := w.children[t.child]
	for i, c := range ks {
		if c == k {
			ks = append(ks[:i:i], ks[i+1:]...)
			break
		}
	}
	if len(ks) == 0 {
		delete(w.children, t.child)
	} else {
		w.children[t.child] = ks
	}
	t.child = ""
	w.outside++
}

// quiet says whether no step is in flight and, with outside, no task
// waits on the outside either: whether jump would move the clock now.
func (w *work) quiet(outside bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.steps == 0 && !(outside && w.outside > 0)
}

// jump moves c to t when no step is in flight and, with outside, no task
// waits on the outside either, and says whether it did. A step that
// begins after it reads the clock moved.
func (w *work) jump(c *clock, t time.Time, outside bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.steps > 0 || outside && w.outside > 0 {
		return false
	}
	c.advance(t)
	return true
}
