package engine

import (
	"container/heap"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// timerQueue holds the armed timers of the executions this engine runs, in
// memory; the store holds them durably. Timers are ordered by their virtual
// deadline (the interpreter's time) and fire when the clock reaches it, in
// that order; the timers of one execution fire one at a time, each after
// the step of the one before is done.
//
// When the earliest timer is not due yet and no timer is firing, jump may
// move the clock to its deadline (time skipping); nil never moves it. The
// engine's alarms (arn "") are never jumped to for their own sake: only
// on the way to an execution's timer, so that an idle engine with a
// schedule stays where it is, and the slots a jump passes fire in turn.
//
// An advance (advanceTo) moves the clock to a goal the same way, deadline
// by deadline, alarms included, with step in place of jump; it is over
// once the clock reached the goal (by a step or by its own run) and
// nothing due by then is left to fire. Before each step the advancing
// goroutine stores the clock's ceiling past the step's target (asked on
// the goal's need, granted by allow), outside q.mu.
type timerQueue struct {
	clock *clock
	jump  func(to time.Time) bool
	step  func(to time.Time) bool
	// ready says whether step may move the clock now (with ready, an
	// advance asks for the ceiling of its next step).
	ready func() bool
	// advancing is set while an advance is under way (goal != nil), for
	// pokeAdvancing to read without q.mu.
	advancing atomic.Bool

	mu       sync.Mutex
	h        timerHeap
	byKey    map[timerKey]*timerEntry
	seq      uint64
	firing   int                      // timers fired whose steps are not done
	busy     map[string]bool          // executions with a timer firing
	deferred map[string][]*timerEntry // due timers of busy executions
	alarms   int                      // armed entries of the engine's alarms (arn "")
	goal     *clockGoal               // the advance under way, if any
	wake     chan struct{}
}

// clockGoal is an advance of the clock: done is closed once it is over.
// A step goes no further than allowed, up to which the ceiling is
// stored; due asks for more on need (the latest target only).
type clockGoal struct {
	at      time.Time
	done    chan struct{}
	allowed time.Time
	asked   time.Time
	need    chan time.Time
}

// ask asks the advancing goroutine for the ceiling past to; q.mu is held
// (due is the only sender).
func (g *clockGoal) ask(to time.Time) {
	if g.asked.Equal(to) {
		return
	}
	g.asked = to
	select {
	case <-g.need:
	default:
	}
	g.need <- to
}

type timerKey struct{ arn, id string }

type timerEntry struct {
	key   timerKey
	at    time.Time // virtual deadline
	seq   uint64    // arming order, among equal deadlines
	index int       // in the heap; -1 while deferred
}

func newTimerQueue(c *clock, jump func(to time.Time) bool) *timerQueue {
	return &timerQueue{
		clock: c, jump: jump,
		byKey: map[timerKey]*timerEntry{}, busy: map[string]bool{}, deferred: map[string][]*timerEntry{},
		wake: make(chan struct{}, 1),
	}
}

// add arms timer id of execution arn for virtual time at, or moves it
// there when it is armed already.
func (q *timerQueue) add(arn, id string, at time.Time) {
	q.mu.Lock()
	k := timerKey{arn, id}
	q.seq++
	if e, ok := q.byKey[k]; ok {
		e.at, e.seq = at, q.seq
		if e.index >= 0 {
			heap.Fix(&q.h, e.index)
		}
	} else {
		e := &timerEntry{key: k, at: at, seq: q.seq}
		q.byKey[k] = e
		if arn == "" {
			q.alarms++
		}
		heap.Push(&q.h, e)
	}
	q.mu.Unlock()
	q.poke()
}

func (q *timerQueue) remove(arn, id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.byKey[timerKey{arn, id}]
	if !ok {
		return
	}
	delete(q.byKey, e.key)
	if arn == "" {
		q.alarms--
	}
	if e.index >= 0 {
		heap.Remove(&q.h, e.index)
		return
	}
	d := q.deferred[arn]
	for i, x := range d {
		if x == e {
			q.deferred[arn] = append(d[:i:i], d[i+1:]...)
			break
		}
	}
}

// len is the number of execution timers armed (the engine's alarms left
// out).
func (q *timerQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.byKey) - q.alarms
}

func (q *timerQueue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pokeAdvancing pokes only while an advance is under way: a clock that
// moves only when advanced has nothing to do when the engine goes idle
// otherwise.
func (q *timerQueue) pokeAdvancing() {
	if q.advancing.Load() {
		q.poke()
	}
}

// run fires due timers until ctx ends: fire must start the timer's step
// and call done once it is over.
func (q *timerQueue) run(ctx context.Context, fire func(arn, id string, done func())) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		due, wait := q.due()
		for _, e := range due {
			arn := e.key.arn
			fire(arn, e.key.id, func() { q.fired(arn) })
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-t.C:
		}
	}
}

// due takes the timers to fire now, at most one per execution, and says
// how long to wait before looking again.
func (q *timerQueue) due() ([]*timerEntry, time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	reached := false // the goal, with nothing in flight
	switch {
	case q.goal != nil && q.firing == 0:
		g := q.goal
		to := g.at
		if q.h.Len() > 0 && q.h[0].at.Before(to) {
			to = q.h[0].at
		}
		switch {
		case q.clock.until(to) == 0: // there already, by its own run
		case to.After(g.allowed):
			if q.ready() {
				g.ask(to) // allow pokes once the ceiling is stored
			}
		default:
			q.step(to)
		}
		// Reached by a step, or by the clock's own run while the
		// steps or the tasks waiting on the outside held it.
		reached = q.clock.until(g.at) == 0
	case q.h.Len() > 0 && q.firing == 0 && q.jump != nil && len(q.byKey) > q.alarms && q.clock.until(q.h[0].at) > 0:
		// With no timer firing, none is deferred: an execution's timer
		// is in the heap, at or after the earliest.
		q.jump(q.h[0].at)
	}
	var due []*timerEntry
	for q.h.Len() > 0 && q.clock.until(q.h[0].at) == 0 {
		e := heap.Pop(&q.h).(*timerEntry)
		if q.busy[e.key.arn] {
			e.index = -1
			q.deferred[e.key.arn] = append(q.deferred[e.key.arn], e)
			continue
		}
		delete(q.byKey, e.key)
		if e.key.arn == "" {
			q.alarms--
		}
		q.busy[e.key.arn] = true
		due = append(due, e)
	}
	q.firing += len(due)
	if reached && len(due) == 0 {
		q.endGoal()
	}
	wait := time.Hour
	if q.h.Len() > 0 {
		wait = min(wait, q.clock.until(q.h[0].at))
	}
	if q.goal != nil {
		if d := q.clock.until(q.goal.at); d > 0 {
			wait = min(wait, d) // reached by the clock's own run
		}
	}
	return due, wait
}

// advanceTo moves the clock to at, firing in order what falls due on the
// way: the returned channel done is closed once the clock is there and
// what fell due has fired (see timerQueue). Each step's target comes on
// need first: the caller stores the ceiling past it, then allows it. An
// advance under way is replaced.
func (q *timerQueue) advanceTo(at time.Time) (done <-chan struct{}, need <-chan time.Time) {
	q.mu.Lock()
	if q.goal != nil {
		close(q.goal.done)
	}
	q.goal = &clockGoal{at: at, done: make(chan struct{}), need: make(chan time.Time, 1)}
	q.advancing.Store(true)
	done, need = q.goal.done, q.goal.need
	q.mu.Unlock()
	q.poke()
	return done, need
}

// allow lets the advance whose channel is done step the clock up to to
// (its ceiling is stored).
func (q *timerQueue) allow(done <-chan struct{}, to time.Time) {
	q.mu.Lock()
	if g := q.goal; g != nil && g.done == done && to.After(g.allowed) {
		g.allowed = to
	}
	q.mu.Unlock()
	q.poke()
}

// endAdvance gives up the advance whose channel is done, if it is still
// under way: the clock stays where it got to.
func (q *timerQueue) endAdvance(done <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.goal != nil && q.goal.done == done {
		q.endGoal()
	}
}

// endGoal ends the advance under way; q.mu is held.
func (q *timerQueue) endGoal() {
	close(q.goal.done)
	q.goal = nil
	q.advancing.Store(false)
}

// fired says the step of a timer of execution arn is done: its next timer
// may fire.
func (q *timerQueue) fired(arn string) {
	q.mu.Lock()
	q.firing--
	delete(q.busy, arn)
	for _, e := range q.deferred[arn] {
		heap.Push(&q.h, e)
	}
	delete(q.deferred, arn)
	q.mu.Unlock()
	q.poke()
}

type timerHeap []*timerEntry

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(v any) {
	e := v.(*timerEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
