package maprun

import (
	"fmt"

	"stepwise/history"
	"stepwise/jsonvalue"
)

// Plan makes a run's children in order: each one's input and its number
// of items; ok is false once every item is planned (interp.Planner).
type Plan interface {
	Next() (input any, items int, ok bool, err error)
}

// Status is where a child of a run stands.
type Status int8

// The statuses of a child.
const (
	Pending Status = iota
	Running
	Succeeded
	Failed
	TimedOut
	Aborted
	Starting // its start has not returned yet
)

// Start is a child a run hands its host to start: its index and input, or
// (Redrive) a child to redrive, whose input is its own already.
type Start struct {
	Index   int
	Input   any
	Redrive bool
}

// Run is a map run's bookkeeping: its children as far as planned, how
// each stands, their results, and the items failed. It is not safe for
// concurrent use: a host that starts children concurrently holds a lock
// around it.
type Run struct {
	// Tolerance is the tolerance in effect (UpdateMapRun changes it).
	Tolerance Tolerance

	count          int64 // items
	batched        bool
	perBatch       int64 // items a batch holds, when that alone bounds them
	plan           Plan
	planned        bool // every child is planned
	nplanned       int
	state          []Status
	items          []int32
	results        []any
	redo           []int   // children to redrive
	holes          []Start // children planned again that were never started
	running, start int
	failed         int // items failed, timed out or aborted
}

// NewRun returns the run of count items, planned by plan. batched and
// perBatch are the ItemBatcher's (interp.MapRunRequest.BatchSize): they
// say how many children the run has before all are planned.
func NewRun(count int64, batched bool, perBatch int64, tol Tolerance, plan Plan) *Run {
	return &Run{count: count, batched: batched, perBatch: perBatch, Tolerance: tol, plan: plan}
}

// grow makes room for child i.
func (r *Run) grow(i int) {
	for len(r.state) <= i {
		r.state = append(r.state, Pending)
		r.items = append(r.items, 0)
		r.results = append(r.results, nil)
	}
}

// planOne plans the next child: its index and input (false once every
// child is planned).
func (r *Run) planOne() (int, any, bool, error) {
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

// Found is a child of the run that a host found started already (picking
// the run up again): its index, and its row.
type Found struct {
	Index int
	Child *ChildSummary
}

// Resume picks the run up from the children found started: those that
// ended count, those running are waited for, and on a redrive those that
// did not succeed run again. The children found were planned before: the
// run plans as far again, for their numbers of items. Children start
// concurrently, so one may be stored before another planned earlier:
// each index below the last found that was not found is a hole, started
// first (with its input planned again), and exactly the holes are.
func (r *Run) Resume(found []Found, redrive bool) error {
	last := -1
	stored := make(map[int]bool, len(found))
	for _, c := range found {
		last = max(last, c.Index)
		stored[c.Index] = true
	}
	for r.nplanned <= last {
		k, in, ok, err := r.planOne()
		if err != nil || !ok {
			return fmt.Errorf("the items no longer plan the children found: %v", err)
		}
		if !stored[k] {
			r.holes = append(r.holes, Start{Index: k, Input: in})
		}
	}
	for _, c := range found {
		i := c.Index
		if c.Child.Status == history.StatusRunning {
			r.state[i] = Running
			r.running++
			continue
		}
		r.ended(i, c.Child)
		if redrive && r.state[i] != Succeeded {
			r.failed -= int(r.items[i])
			r.redo = append(r.redo, i)
		}
	}
	return nil
}

// Next returns the next child to start (children to redrive first, then
// holes, then the next planned), marked starting; ok is false when none
// is left to start. An error is the plan's (the ItemSelector's failure).
func (r *Run) Next() (s Start, ok bool, err error) {
	switch {
	case len(r.redo) > 0:
		s = Start{Index: r.redo[0], Redrive: true}
		r.redo = r.redo[1:]
	case len(r.holes) > 0:
		s = r.holes[0]
		r.holes[0] = Start{}
		r.holes = r.holes[1:]
	default:
		for {
			k, in, ok, err := r.planOne()
			if err != nil || !ok {
				return Start{}, false, err
			}
			if r.state[k] == Pending {
				s = Start{Index: k, Input: in}
				break
			}
		}
	}
	r.state[s.Index] = Starting
	r.start++
	return s, true, nil
}

// Started records that the start of child i returned with the child's row
// (running, or ended in its first step). A child that ended since
// (Ended) stays as it ended.
func (r *Run) Started(i int, c *ChildSummary) {
	r.start--
	if r.state[i] != Starting {
		return
	}
	if c.Status == history.StatusRunning {
		r.state[i] = Running
		r.running++
		return
	}
	r.ended(i, c)
}

// StartFailed records that child i could not be started: its items fail.
func (r *Run) StartFailed(i int) {
	r.start--
	r.state[i] = Failed
	r.results[i] = nil
	r.failed += int(r.items[i])
}

// StartDropped records that the start of child i returned without an
// answer the run takes (the host is stopping): the child stays starting,
// and is found again when the run is picked up.
func (r *Run) StartDropped(int) { r.start-- }

// Ended records the end of child i, running or starting; false when the
// run did not wait for it (not one of its children, or ended already).
func (r *Run) Ended(i int, c *ChildSummary) bool {
	if i < 0 || i >= len(r.state) {
		return false
	}
	switch r.state[i] {
	case Running:
		r.running--
	case Starting: // its start has not returned: Started sees it ended
	default:
		return false
	}
	r.ended(i, c)
	return true
}

// ended records child i's end from its row.
func (r *Run) ended(i int, c *ChildSummary) {
	switch c.Status {
	case history.StatusSucceeded:
		r.state[i] = Succeeded
		r.results[i] = c.output()
		return
	case history.StatusTimedOut:
		r.state[i] = TimedOut
	case history.StatusAborted:
		r.state[i] = Aborted
	default:
		r.state[i] = Failed
	}
	// A child that did not succeed is its result as it is (AWS's NONE
	// transformation), whatever the transformation.
	r.results[i] = ChildEntry(c)
	r.failed += int(r.items[i])
}

// Exceeded reports whether the items failed so far pass the tolerance.
func (r *Run) Exceeded() bool { return r.Tolerance.Exceeded(r.failed, int(r.count)) }

// Active is how many children are running or starting; Starting how many
// are starting.
func (r *Run) Active() int   { return r.running + r.start }
func (r *Run) Starting() int { return r.start }

// Done says whether every child is planned, started and ended.
func (r *Run) Done() bool {
	return r.Active() == 0 && len(r.redo) == 0 && len(r.holes) == 0 && r.planned
}

// Check makes sure, before the run succeeds, that its counts cover every
// item: each child planned ended, and their items add up to the run's. An
// error is a bug: the run must not answer for items it never ran.
func (r *Run) Check() error {
	if len(r.state) != r.nplanned {
		return fmt.Errorf("%d children known, %d planned", len(r.state), r.nplanned)
	}
	var items int64
	notEnded, first := 0, -1
	for i, s := range r.state {
		switch s {
		case Succeeded, Failed, TimedOut, Aborted:
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
	if items != r.count {
		return fmt.Errorf("the children ran %d of %d items", items, r.count)
	}
	return nil
}

// StopRunning marks the children running or starting aborted and returns
// their indices, for the host to stop them.
func (r *Run) StopRunning() []int {
	var stop []int
	for i, s := range r.state {
		if s == Running || s == Starting {
			r.state[i] = Aborted
			stop = append(stop, i)
		}
	}
	return stop
}

// Running returns the indices of the children running.
func (r *Run) Running() []int {
	var out []int
	for i, s := range r.state {
		if s == Running {
			out = append(out, i)
		}
	}
	return out
}

// Results are the children's results in order: a child that succeeded
// its output, one that did not its ChildEntry.
func (r *Run) Results() []any { return r.results }

// Counts are the run's item and execution counts, as DescribeMapRun shows
// them (JSON objects): items and children not planned yet are pending.
func (r *Run) Counts() (items, executions string) {
	var it, ex [7]int64
	for i, s := range r.state {
		if s == Starting {
			s = Running
		}
		it[s] += int64(r.items[i])
		ex[s]++
	}
	var planned int64
	for _, n := range it {
		planned += n
	}
	it[Pending] += r.count - planned
	children := r.children()
	ex[Pending] += children - int64(len(r.state))
	return countsJSON(it, r.count), countsJSON(ex, children)
}

// children is how many children the run has: known from the start unless
// batches are bounded by bytes (then as many as planned so far, until all
// are).
func (r *Run) children() int64 {
	switch {
	case r.planned:
		return int64(r.nplanned)
	case !r.batched:
		return r.count
	case r.perBatch > 0:
		return (r.count + r.perBatch - 1) / r.perBatch
	}
	return int64(len(r.state))
}

func countsJSON(c [7]int64, total int64) string {
	o := jsonvalue.NewObject(10)
	o.Set("aborted", jsonvalue.NumberFromInt(c[Aborted]))
	o.Set("failed", jsonvalue.NumberFromInt(c[Failed]))
	o.Set("failuresNotRedrivable", jsonvalue.NumberFromInt(0))
	o.Set("pending", jsonvalue.NumberFromInt(c[Pending]))
	o.Set("pendingRedrive", jsonvalue.NumberFromInt(0))
	o.Set("resultsWritten", jsonvalue.NumberFromInt(c[Succeeded]+c[Failed]+c[TimedOut]+c[Aborted]))
	o.Set("running", jsonvalue.NumberFromInt(c[Running]))
	o.Set("succeeded", jsonvalue.NumberFromInt(c[Succeeded]))
	o.Set("timedOut", jsonvalue.NumberFromInt(c[TimedOut]))
	o.Set("total", jsonvalue.NumberFromInt(total))
	return jsonvalue.String(o)
}
