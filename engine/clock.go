package engine

import (
	"math"
	"sync"
	"time"
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
// the timers of one execution one at a time.

// clock is the engine's virtual clock: virtual time vbase at real time
// rbase, running at rate virtual seconds per real second since.
type clock struct {
	real func() time.Time
	rate float64

	mu           sync.Mutex
	vbase, rbase time.Time
}

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
	defer c.mu.Unlock()
	r := c.real()
	if t.After(c.at(r)) {
		c.vbase, c.rbase = t, r
	}
}

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
