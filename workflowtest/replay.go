package workflowtest

import (
	"fmt"
	"strings"

	"stepwise/asl"
	"stepwise/history"
	"stepwise/jsonvalue"
)

// Divergence is where a replay first left its recording.
type Divergence struct {
	// State is the state where it diverged ("" for the execution's end).
	State string
	// Event is the replay's event where it diverged, nil when the replay
	// lacks an event the recording has.
	Event *history.Event
	// What says how: the difference of inputs, outputs or next states.
	What string
}

func (d *Divergence) String() string {
	var b strings.Builder
	if d.State != "" {
		fmt.Fprintf(&b, "state %s", d.State)
	} else {
		b.WriteString("the execution")
	}
	if d.Event != nil {
		fmt.Fprintf(&b, ", event %d (%s)", d.Event.ID, d.Event.Type)
	}
	b.WriteString(": " + d.What)
	return b.String()
}

// ReplayResult is how a replay went.
type ReplayResult struct {
	// Divergence is the first, nil for the same path and the same output.
	Divergence *Divergence
	// Recorded is the recording replayed on its own definition, Replayed
	// on the edited one.
	Recorded, Replayed *Result
}

// Replay runs a recorded case (Record) on an edited definition and finds
// where it first departs from the recording. The recording is first
// replayed on its own definition, which must give what it expects; then
// on the edited one, with the same input and task results, in virtual
// time. The two histories are compared state by state: a state is
// matched with a recorded entry into it of the same name and input
// (concurrent iterations and branches may come in another order), then
// its output and the state it went on to; a state the recording never
// entered, a Task with no recorded result, a recorded state not entered,
// and a different end are divergences too. A distributed Map's child
// executions are compared through the Map's output.
func Replay(f *File, c *Case, edited *asl.StateMachine) (*ReplayResult, error) {
	r := &Runner{}
	base := r.Run(f, c)
	if !base.Passed {
		return nil, fmt.Errorf("the recording does not replay on its own definition: %s", base.Failure)
	}
	ef := *f
	ef.Machine = edited
	got := r.Run(&ef, c)
	res := &ReplayResult{Recorded: base, Replayed: got}
	res.Divergence = compareRuns(base.Outcome, got.Outcome, got, edited)
	return res, nil
}

// entry is one entry into a state: its entered event, its exit (nil when
// the execution ended in it) and the state entered after it.
type entry struct {
	name           string
	entered, exit  *history.Event
	next           string
	match          *entry
	used, hasEntry bool
}

func (e *entry) input() string { return e.entered.StateEnteredEventDetails.Input }

// entries lists the entries into states of a history, by their entered
// and exited events' ids.
func entries(events []*history.Event) (list []*entry, byEntered, byExit map[int64]*entry) {
	byID := map[int64]*history.Event{}
	byEntered, byExit = map[int64]*entry{}, map[int64]*entry{}
	for _, ev := range events {
		byID[ev.ID] = ev
		if d := ev.StateEnteredEventDetails; d != nil {
			e := &entry{name: d.Name, entered: ev}
			list = append(list, e)
			byEntered[ev.ID] = e
			if prev := byExit[ev.PreviousEventID]; prev != nil && prev.next == "" {
				prev.next = d.Name
			}
		}
		if d := ev.StateExitedEventDetails; d != nil {
			p := byID[ev.PreviousEventID]
			for n := 0; p != nil && n < len(events); n++ {
				if e := byEntered[p.ID]; e != nil && e.name == d.Name && e.exit == nil {
					e.exit = ev
					byExit[ev.ID] = e
					break
				}
				p = byID[p.PreviousEventID]
			}
		}
	}
	return list, byEntered, byExit
}

// compareRuns finds the first divergence of the replayed history from the
// recorded one.
func compareRuns(rec, got *Outcome, gotRes *Result, edited *asl.StateMachine) *Divergence {
	recList, _, _ := entries(rec.Events)
	byName := map[string][]*entry{}
	for _, e := range recList {
		byName[e.name] = append(byName[e.name], e)
	}
	gotList, gotEntered, gotExit := entries(got.Events)
	all := allStates(edited)
	for _, ev := range got.Events {
		if d := ev.StateEnteredEventDetails; d != nil {
			e := gotEntered[ev.ID]
			recs := byName[d.Name]
			task := all[d.Name] != nil && all[d.Name].Type == asl.TypeTask
			if prev := gotExit[ev.PreviousEventID]; prev != nil && prev.match != nil && prev.match.next != d.Name {
				was := "ended there"
				if prev.match.next != "" {
					was = "went on to " + prev.match.next
				}
				if len(recs) == 0 && task {
					return &Divergence{State: d.Name, Event: ev, What: fmt.Sprintf("state %s has no recorded result: the recording never entered it (after %s, which %s in the recording)",
						d.Name, prev.name, was)}
				}
				return &Divergence{State: prev.name, Event: prev.exit,
					What: fmt.Sprintf("went on to %s; recorded: %s", d.Name, was)}
			}
			if len(recs) == 0 {
				if task {
					return &Divergence{State: d.Name, Event: ev, What: fmt.Sprintf("state %s has no recorded result: the recording never entered it", d.Name)}
				}
				return &Divergence{State: d.Name, Event: ev, What: "entered; the recording never entered it"}
			}
			var first *entry
			for _, r := range recs {
				if r.used {
					continue
				}
				if first == nil {
					first = r
				}
				if jsonvalue.EqualText(r.input(), d.Input) {
					r.used, e.match = true, r
					break
				}
			}
			if e.match != nil {
				continue
			}
			if first == nil {
				return &Divergence{State: d.Name, Event: ev, What: fmt.Sprintf("entered %d times or more; recorded: %d times", len(recs)+1, len(recs))}
			}
			return &Divergence{State: d.Name, Event: ev, What: "input differs: " + diffText("input", first.input(), d.Input)}
		}
		if d := ev.StateExitedEventDetails; d != nil {
			e := gotExit[ev.ID]
			if e == nil || e.match == nil {
				continue
			}
			if e.match.exit == nil {
				return &Divergence{State: d.Name, Event: ev, What: fmt.Sprintf("exited with output %s; recorded: the execution ended in it (%s)",
					clip(d.Output, maxShown), endOf(rec))}
			}
			if want := e.match.exit.StateExitedEventDetails.Output; !jsonvalue.EqualText(want, d.Output) {
				return &Divergence{State: d.Name, Event: ev, What: "output differs: " + diffText("output", want, d.Output)}
			}
		}
	}
	if u := gotRes.Unmocked; u != nil {
		var last *history.Event
		if n := len(got.Events); n > 0 {
			last = got.Events[n-1]
		}
		return &Divergence{State: u.StateName, Event: last, What: fmt.Sprintf("state %s has no recorded result for its input %s", u.StateName, show(u.Parameters))}
	}
	// The state it ended in: the first on the way back from its end,
	// along the events' links, that it entered and did not leave.
	byID := map[int64]*history.Event{}
	for _, ev := range got.Events {
		byID[ev.ID] = ev
	}
	var endedIn []*entry
	if n := len(got.Events); n > 0 {
		for ev, k := got.Events[n-1], 0; ev != nil && k < n; ev, k = byID[ev.PreviousEventID], k+1 {
			if e := gotEntered[ev.ID]; e != nil && e.exit == nil {
				endedIn = append(endedIn, e)
			}
		}
	}
	for _, e := range append(endedIn, gotList...) {
		if e.match != nil && e.exit == nil && e.match.exit != nil {
			return &Divergence{State: e.name, Event: e.entered, What: fmt.Sprintf("the execution ended in it (%s); recorded: exited with output %s",
				endOf(got), clip(e.match.exit.StateExitedEventDetails.Output, maxShown))}
		}
	}
	for _, e := range recList {
		if !e.used {
			return &Divergence{State: e.name, What: fmt.Sprintf("not entered; recorded: entered with input %s", clip(e.input(), maxShown))}
		}
	}
	var last *history.Event
	if n := len(got.Events); n > 0 {
		last = got.Events[n-1]
	}
	switch {
	case rec.Status != got.Status:
		return &Divergence{Event: last, What: fmt.Sprintf("ended %s; recorded: %s", endOf(got), endOf(rec))}
	case !sameString(rec.Error, got.Error) || !sameString(rec.Cause, got.Cause):
		return &Divergence{Event: last, What: fmt.Sprintf("ended %s; recorded: %s", endOf(got), endOf(rec))}
	case rec.Status == history.StatusSucceeded:
		if d := diffExact("output", rec.Output, got.Output); d != "" {
			return &Divergence{Event: last, What: "output differs: " + d}
		}
	}
	return nil
}

// diffText is the first difference of two JSON texts, the recorded one
// first.
func diffText(at, recorded, got string) string {
	rv, err1 := jsonvalue.Parse([]byte(recorded))
	gv, err2 := jsonvalue.Parse([]byte(got))
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("%s: recorded %s, got %s", at, clip(recorded, maxShown), clip(got, maxShown))
	}
	return strings.Replace(diffExact(at, rv, gv), "expected", "recorded", 1)
}

func endOf(o *Outcome) string {
	s := string(o.Status)
	if o.Error != nil {
		s += fmt.Sprintf(", error %q", *o.Error)
	}
	if o.Cause != nil {
		s += ", cause " + clip(fmt.Sprintf("%q", *o.Cause), maxShown)
	}
	return s
}

func sameString(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
