package interp

import (
	"container/heap"
	"time"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
)

// Resolver does the work of Task states for a Driver.
type Resolver interface {
	// Resolve returns the task's output, or the failure it ended with.
	Resolve(req *TaskRequest) (any, *failure.Failure)
}

// Pending is what a Resolver answers for a task that does not end: the
// Driver leaves it running (a recorded task that was still running when
// its execution ended).
var Pending = &failure.Failure{Name: "stepwise.Pending"}

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
	// Now, when set, is the clock of tasks that take real time (calls
	// that leave the process): after each task the execution's time
	// moves on to it when it is later, so the history shows how long
	// the call took. Unset, tasks take no time.
	Now func() time.Time
	// Child, when set, is told of each child execution of a distributed
	// Map's map run, with its history, once it ended.
	Child func(x *Execution, events []*history.Event)
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
			if d.Now != nil && c.Task.MapRun == nil && c.Task.Reader == nil {
				// The call starts now and may take real time: its
				// started event goes before it.
				evs, cmds, err := x.Step(Event{Kind: TaskStarted, ID: c.ID}, now)
				if err != nil {
					return hist
				}
				take(evs, cmds)
			}
			ev = Event{Kind: TaskSucceeded, ID: c.ID}
			if c.Task.MapRun != nil {
				if out, fl := d.mapRun(x, c.Task, now); fl != nil {
					ev = Event{Kind: TaskFailed, ID: c.ID, Error: fl.Name, Cause: fl.Cause}
				} else {
					ev.Output = out
				}
			} else if d.Resolver == nil {
				ev = Event{Kind: TaskFailed, ID: c.ID, Error: failure.TaskFailed, Cause: "no resolver for task " + c.Task.Resource}
			} else if out, fl := d.Resolver.Resolve(c.Task); fl == Pending {
				continue
			} else if fl != nil {
				ev = Event{Kind: TaskFailed, ID: c.ID, Error: fl.Name, Cause: fl.Cause}
			} else {
				ev.Output = out
			}
			if d.Now != nil {
				if t := d.Now(); t.After(now) {
					now = t
				}
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

// mapRun runs a map run in-process, on the map run's bookkeeping
// (maprun.Run) as the engine does: each child execution in turn, to its
// end, from the parent's time (the parent's clock does not move), named
// as the engine names it. The result is the children's outputs in order
// (a child that did not succeed is its entry, when the run tolerates it),
// or what the ResultWriter makes of them: with a Resource, the writing is
// a task of its own (TaskRequest.Write) for the Resolver.
func (d *Driver) mapRun(parent *Execution, task *TaskRequest, now time.Time) (any, *failure.Failure) {
	r := task.MapRun
	if r.Spooled {
		return nil, failure.New(failure.ItemReaderFailed, "The items were spooled for a map run of the engine.")
	}
	batched, per := r.BatchSize()
	run := maprun.NewRun(r.Count, batched, per, r.Tolerance, r.Planner(nil))
	names := maprun.NewNames(r.Arn, parent.Info.Region, parent.Info.Account, parent.Info.StateMachineName, r.Label,
		r.ExecutionType == asl.TypeExpress)
	var entries []*jsonvalue.Object
	for !run.Exceeded() {
		s, ok, err := run.Next()
		if err != nil {
			return nil, failure.As(err)
		}
		if !ok {
			break
		}
		info := parent.Info
		info.ExecutionArn, info.Name = names.Arn(s.Index), names.Name(s.Index)
		info.StateMachineArn = parent.Info.StateMachineArn + "/" + r.Label
		info.StateMachineName = names.Machine()
		info.StartTime = now
		info.RedriveCount = 0
		child := New(r.Processor, info, s.Input, parent.Opts)
		sub := &Driver{Resolver: d.Resolver, MaxSteps: d.MaxSteps, Halt: d.Halt, Now: d.Now, Child: d.Child}
		events := sub.Run(child, now)
		if d.Child != nil {
			d.Child(child, events)
		}
		sum := &maprun.ChildSummary{Arn: info.ExecutionArn, Name: info.Name, StateMachineArn: info.StateMachineArn,
			Status: child.Status, Input: jsonvalue.String(s.Input), OutputValue: child.Output, StartDate: now, StopDate: &now}
		if child.Failure != nil {
			sum.Error, sum.Cause = &child.Failure.Name, &child.Failure.Cause
		}
		if r.Writer.NeedsEntries() {
			entries = append(entries, maprun.ChildEntry(sum))
		}
		run.Started(s.Index, sum)
	}
	if run.Exceeded() {
		return nil, maprun.Failure()
	}
	if err := run.Check(); err != nil {
		return nil, failure.Newf(failure.Runtime, "map run: %v", err)
	}
	out, write := run.Outcome(r.Writer, entries)
	if write == nil {
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	write.MapRunArn = r.Arn
	if d.Resolver == nil {
		return nil, failure.Newf(failure.ResultWriterFailed, "No resolver writes the results of the map run '%s'.", r.Arn)
	}
	return d.Resolver.Resolve(&TaskRequest{StateName: task.StateName, Resource: r.Writer.Resource, Write: write})
}
