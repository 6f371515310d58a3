package interp

import (
	"container/heap"
	"fmt"
	"strconv"
	"time"

	"stepwise/failure"
	"stepwise/history"
	"stepwise/jsonvalue"
)

// Resolver does the work of Task states for a Driver.
type Resolver interface {
	// Resolve returns the task's output, or the failure it ended with.
	Resolve(req *TaskRequest) (any, *failure.Failure)
}

// ResolverFunc adapts a function to Resolver.
type ResolverFunc func(req *TaskRequest) (any, *failure.Failure)

// Resolve calls fn.
func (fn ResolverFunc) Resolve(req *TaskRequest) (any, *failure.Failure) { return fn(req) }

// Driver runs an execution to its end in virtual time, in-process: timers
// fire in order of their time, and tasks are answered by a Resolver. Event
// timestamps advance as if the waits had passed.
type Driver struct {
	Resolver Resolver
	// Sleep, when set, is called with the virtual time each timer skips,
	// so a caller can wait for real (scaled) time.
	Sleep func(time.Duration)
	// MaxSteps bounds the number of steps (0: no bound), a guard against
	// workflows that loop forever.
	MaxSteps int
	// Halt, when set, is asked after each step whether to stop there.
	Halt func() bool
}

// Run starts x at start and runs it until it ends or MaxSteps is reached.
// It returns the whole history.
func (d *Driver) Run(x *Execution, start time.Time) []*history.Event {
	now := start
	var hist []*history.Event
	timers := &timerHeap{}
	var tasks []Command
	cancelled := map[string]bool{}

	take := func(evs []*history.Event, cmds []Command) {
		hist = append(hist, evs...)
		for _, c := range cmds {
			switch c.Kind {
			case RunTask:
				tasks = append(tasks, c)
			case StartTimer:
				heap.Push(timers, timerEntry{at: c.At, id: c.ID, seq: timers.seq})
				timers.seq++
			case CancelTask, CancelTimer:
				cancelled[c.ID] = true
			}
		}
	}
	evs, cmds, err := x.Start(now)
	if err != nil {
		return hist
	}
	take(evs, cmds)
	for steps := 0; x.Status == history.StatusRunning; steps++ {
		if (d.MaxSteps > 0 && steps >= d.MaxSteps) || (d.Halt != nil && d.Halt()) {
			break
		}
		var ev Event
		switch {
		case len(tasks) > 0:
			c := tasks[0]
			tasks = tasks[1:]
			if cancelled[c.ID] {
				continue
			}
			ev = Event{Kind: TaskSucceeded, ID: c.ID}
			if c.Task.MapRun != nil {
				if out, fl := d.mapRun(x, c.Task.MapRun, now); fl != nil {
					ev = Event{Kind: TaskFailed, ID: c.ID, Error: fl.Name, Cause: fl.Cause}
				} else {
					ev.Output = out
				}
			} else if d.Resolver == nil {
				ev = Event{Kind: TaskFailed, ID: c.ID, Error: failure.TaskFailed, Cause: "no resolver for task " + c.Task.Resource}
			} else if out, fl := d.Resolver.Resolve(c.Task); fl != nil {
				ev = Event{Kind: TaskFailed, ID: c.ID, Error: fl.Name, Cause: fl.Cause}
			} else {
				ev.Output = out
			}
		case timers.Len() > 0:
			t := heap.Pop(timers).(timerEntry)
			if cancelled[t.id] {
				continue
			}
			if t.at.After(now) {
				if d.Sleep != nil {
					d.Sleep(t.at.Sub(now))
				}
				now = t.at
			}
			ev = Event{Kind: TimerFired, ID: t.id}
		default:
			return hist // blocked with nothing to wait for
		}
		evs, cmds, err := x.Step(ev, now)
		if err != nil {
			break
		}
		take(evs, cmds)
	}
	return hist
}

type timerEntry struct {
	at  time.Time
	id  string
	seq int
}

type timerHeap struct {
	entries []timerEntry
	seq     int
}

func (h *timerHeap) Len() int { return len(h.entries) }
func (h *timerHeap) Less(i, j int) bool {
	a, b := h.entries[i], h.entries[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.seq < b.seq
}
func (h *timerHeap) Swap(i, j int) { h.entries[i], h.entries[j] = h.entries[j], h.entries[i] }
func (h *timerHeap) Push(v any)    { h.entries = append(h.entries, v.(timerEntry)) }
func (h *timerHeap) Pop() any {
	e := h.entries[len(h.entries)-1]
	h.entries = h.entries[:len(h.entries)-1]
	return e
}

// mapRun runs a map run in-process: each child execution in turn, to its
// end, from the parent's time (the parent's clock does not move). The
// result is the children's outputs in order, a failed child's
// description (ChildEntry) when the run tolerates it. A ResultWriter is
// not written: the result is the outputs as they are.
func (d *Driver) mapRun(parent *Execution, r *MapRunRequest, now time.Time) (any, *failure.Failure) {
	if r.Spooled {
		return nil, failure.New(failure.ItemReaderFailed, "The items were spooled for a map run of the engine.")
	}
	var results []any
	failed := 0
	plan := r.Planner(nil)
	for i := 0; ; i++ {
		in, items, ok, err := plan.Next()
		if err != nil {
			return nil, failure.As(err)
		}
		if !ok {
			break
		}
		info := parent.Info
		info.ExecutionArn = fmt.Sprintf("arn:aws:states:%s:%s:execution:%s/%s:%d", parent.Info.Region, parent.Info.Account,
			parent.Info.StateMachineName, r.Label, i)
		info.Name = strconv.Itoa(i)
		info.StateMachineArn = parent.Info.StateMachineArn + "/" + r.Label
		info.StateMachineName = parent.Info.StateMachineName + "/" + r.Label
		info.StartTime = now
		info.RedriveCount = 0
		child := New(r.Processor, info, in, parent.Opts)
		sub := &Driver{Resolver: d.Resolver, MaxSteps: d.MaxSteps, Halt: d.Halt}
		sub.Run(child, now)
		if child.Status == history.StatusSucceeded {
			results = append(results, child.Output)
			continue
		}
		sum := &ChildSummary{Arn: info.ExecutionArn, Name: info.Name, StateMachineArn: info.StateMachineArn, Status: child.Status,
			Input: jsonvalue.String(in), StartDate: now, StopDate: &now}
		if child.Failure != nil {
			sum.Error, sum.Cause = &child.Failure.Name, &child.Failure.Cause
		}
		results = append(results, ChildEntry(sum))
		failed += items
		if r.Exceeded(failed, int(r.Count)) {
			return nil, ToleranceFailure()
		}
	}
	if results == nil {
		results = []any{}
	}
	return results, nil
}
