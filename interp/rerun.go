package interp

import (
	"fmt"
	"sort"
	"strconv"

	"stepwise/asl"
	"stepwise/history"
)

// Reruns
//
// A Rerun event runs an ended execution (FAILED, TIMED_OUT or ABORTED)
// again, in one of the modes an operator picks, on its definition or a
// corrected one. It is the same execution: it writes ExecutionRedriven
// (the redrive count goes up) and its history goes on. The modes:
//
//   - RerunFailed: as Redrive, from the states that did not succeed.
//   - RerunNext: the state at the top level that failed is given the
//     operator's output: its exited event is written with it and the
//     execution goes on with its Next.
//   - RerunState: the named state at the top level is entered again with
//     the input it had when last entered; the states before it keep their
//     results.
//   - RerunTop: the first state is entered again with the execution's
//     input; nothing keeps its result.
//   - RerunWarnings: each state that ended with warning runs again on its
//     own, with the input it had (its output goes nowhere: the states after
//     it keep their results), then the execution goes on as RerunFailed.
//
// A rerun on another definition maps every state by name: a state that
// keeps its result, or whose run is picked up again, must be at the same
// place (the same Parallel branch or Map, nested the same way), or the
// rerun is refused (RerunError) and nothing changes.

// RerunMode is how a rerun picks the states that run again.
type RerunMode string

const (
	RerunFailed   RerunMode = "FAILED"
	RerunNext     RerunMode = "NEXT"
	RerunState    RerunMode = "STATE"
	RerunTop      RerunMode = "TOP"
	RerunWarnings RerunMode = "WARNINGS"
)

// ParseRerunMode reads FAILED, NEXT, TOP, WARNINGS or STATE:NAME.
func ParseRerunMode(s string) (RerunMode, string, error) {
	switch m := RerunMode(s); m {
	case RerunFailed, RerunNext, RerunTop, RerunWarnings:
		return m, "", nil
	}
	if len(s) > len("STATE:") && s[:len("STATE:")] == "STATE:" {
		return RerunState, s[len("STATE:"):], nil
	}
	return "", "", fmt.Errorf("rerun mode %q: want FAILED, NEXT, TOP, WARNINGS or STATE:NAME", s)
}

// Rerun is what a Rerun event asks for.
type Rerun struct {
	Mode RerunMode
	// State names the state of RerunState.
	State string
	// Output is the failed state's output for RerunNext.
	Output any
	// Machine is the definition the execution runs on from the rerun; nil
	// keeps its own.
	Machine *asl.StateMachine
	// Definition is Machine's text, kept for the replay log ("" with a
	// nil Machine).
	Definition string
	// Warned are the states that ended with warning, for RerunWarnings,
	// in the order they ended.
	Warned []WarnedState
}

// WarnedState is a state that ended with warning and the input it had.
type WarnedState struct {
	Name  string
	Input any
}

// RerunError is a rerun the execution refuses: nothing changed.
type RerunError struct{ Msg string }

func (e *RerunError) Error() string { return e.Msg }

func refuseRerun(format string, args ...any) error {
	return &RerunError{Msg: fmt.Sprintf(format, args...)}
}

// RerunPlan says what a rerun does: the states that run again (and, in
// their wake, whatever they lead to) and those that keep their results.
type RerunPlan struct {
	Mode RerunMode
	// From is where the execution starts again: a state's name, or the
	// failed states for RerunFailed and RerunWarnings ("").
	From string
	// Rerun are the states that run again, sorted.
	Rerun []string
	// Keep are the states that ended successfully and keep their
	// results, sorted.
	Keep []string
}

// PlanRerun checks a rerun and says what it would do, changing nothing.
func (x *Execution) PlanRerun(r *Rerun) (*RerunPlan, error) {
	if x.Status == history.StatusRunning || x.Status == history.StatusSucceeded {
		return nil, ErrNotRedrivable
	}
	m := r.Machine
	if m == nil {
		m = x.Machine
	}
	oldPos, newPos := Positions(x.Machine), Positions(m)
	p := &RerunPlan{Mode: r.Mode}
	rerun := map[string]bool{}
	keep := map[string]bool{}
	for n := range x.exited {
		keep[n] = true
	}
	switch r.Mode {
	case RerunFailed, RerunWarnings:
		for _, f := range x.failedFrames() {
			rerun[f.state.Name] = true
		}
		if r.Mode == RerunWarnings {
			for _, w := range r.Warned {
				if _, ok := newPos[w.Name]; !ok {
					return nil, refuseRerun("the state '%s' ended with warning but is not in the definition", w.Name)
				}
				rerun[w.Name] = true
			}
		}
	case RerunNext:
		s := x.failedTop()
		if s == nil {
			return nil, refuseRerun("no state at the top level failed: NEXT needs one")
		}
		ns := m.States[s.Name]
		if ns == nil {
			return nil, refuseRerun("the failed state '%s' is not at the top level of the definition", s.Name)
		}
		switch {
		case ns.Type == asl.TypeChoice || ns.Type == asl.TypeFail || ns.Type == asl.TypeSucceed:
			return nil, refuseRerun("the failed state '%s' is a %s state: it has no state after it", s.Name, ns.Type)
		case ns.Next == "":
			p.From = "" // the execution ends with the output
		default:
			p.From = ns.Next
		}
		keep[s.Name] = true
		if p.From != "" {
			rerun = reachable(m, p.From)
		}
	case RerunState:
		if m.States[r.State] == nil {
			if pos, ok := newPos[r.State]; ok {
				return nil, refuseRerun("the state '%s' is inside %s: name a state at the top level", r.State, pos)
			}
			return nil, refuseRerun("the state '%s' does not exist in the definition", r.State)
		}
		if _, ok := x.rootInputs[r.State]; !ok && r.State != m.StartAt {
			return nil, refuseRerun("the state '%s' was never entered: its input is not known", r.State)
		}
		p.From = r.State
		rerun = reachable(m, r.State)
	case RerunTop:
		p.From = m.StartAt
		rerun = reachable(m, m.StartAt)
		clear(keep)
	default:
		return nil, refuseRerun("unknown rerun mode %q", r.Mode)
	}
	for n := range rerun {
		delete(keep, n)
	}
	// What keeps its result, and the states whose runs are picked up
	// again, must be where they were.
	check := func(name, what string) error {
		np, ok := newPos[name]
		if !ok {
			return refuseRerun("the state '%s' %s but is not in the definition", name, what)
		}
		if op, ok := oldPos[name]; ok && op != np {
			return refuseRerun("the state '%s' %s but moved from %s to %s", name, what, op, np)
		}
		return nil
	}
	for _, n := range sortedKeys(keep) {
		if err := check(n, "keeps its result"); err != nil {
			return nil, err
		}
	}
	if r.Mode == RerunFailed || r.Mode == RerunWarnings {
		for _, f := range x.failedFrames() {
			if err := check(f.state.Name, "runs again from where it stopped"); err != nil {
				return nil, err
			}
		}
	}
	p.Rerun, p.Keep = sortedKeys(rerun), sortedKeys(keep)
	return p, nil
}

// Positions says where each state of m is: "top level", or the chain of
// Parallel branches and Maps it is in ("Parallel 'P' branch 1 / Map 'M'").
func Positions(m *asl.StateMachine) map[string]string {
	out := map[string]string{}
	var walk func(m *asl.StateMachine, at string)
	walk = func(m *asl.StateMachine, at string) {
		if m == nil {
			return
		}
		for _, n := range m.Order {
			if _, dup := out[n]; !dup {
				out[n] = at
			}
			s := m.States[n]
			pre := ""
			if at != "top level" {
				pre = at + " / "
			}
			for i, b := range s.Branches {
				walk(b, pre+"Parallel '"+n+"' branch "+strconv.Itoa(i+1))
			}
			if s.ItemProcessor != nil {
				walk(s.ItemProcessor, pre+"Map '"+n+"'")
			}
		}
	}
	walk(m, "top level")
	return out
}

// reachable returns the states from name on in m: those its transitions
// lead to, and the states inside the Parallel and Map states among them.
func reachable(m *asl.StateMachine, name string) map[string]bool {
	out := map[string]bool{}
	var all func(m *asl.StateMachine)
	all = func(m *asl.StateMachine) {
		if m == nil {
			return
		}
		for _, n := range m.Order {
			out[n] = true
			for _, b := range m.States[n].Branches {
				all(b)
			}
			all(m.States[n].ItemProcessor)
		}
	}
	seen := map[string]bool{}
	todo := []string{name}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		s := m.States[n]
		if s == nil || seen[n] {
			continue
		}
		seen[n] = true
		out[n] = true
		for _, b := range s.Branches {
			all(b)
		}
		all(s.ItemProcessor)
		todo = append(todo, s.Next, s.Default)
		for _, c := range s.Choices {
			todo = append(todo, c.Next)
		}
		for _, c := range s.Catch {
			todo = append(todo, c.Next)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// failedFrames returns the frames a redrive picks up again: those whose
// state did not succeed, innermost ones included.
func (x *Execution) failedFrames() []*frame {
	var out []*frame
	var walk func(f *frame)
	walk = func(f *frame) {
		if f == nil || f.state == nil || (f.done && f.failure == nil) {
			return
		}
		out = append(out, f)
		for _, c := range f.children {
			walk(c)
		}
	}
	walk(x.root)
	return out
}

// failedTop returns the state of the top level the execution stopped in.
func (x *Execution) failedTop() *asl.State {
	if x.root == nil || x.root.parked {
		return nil
	}
	return x.root.state
}

// remap moves the frames onto machine m, state by state by name.
func (x *Execution) remap(m *asl.StateMachine) {
	var walk func(f *frame, fm *asl.StateMachine)
	walk = func(f *frame, fm *asl.StateMachine) {
		if f == nil || fm == nil {
			return
		}
		f.machine = fm
		if f.state == nil {
			return
		}
		s := fm.States[f.state.Name]
		if s == nil {
			return // kept its result: never run again
		}
		f.state = s
		for _, c := range f.children {
			switch {
			case c.kind == branchFrame && c.index < len(s.Branches):
				walk(c, s.Branches[c.index])
			case c.kind == iterationFrame:
				walk(c, s.ItemProcessor)
			}
		}
	}
	x.Machine = m
	x.ctxMachine = nil
	walk(x.root, m)
}

// rerun applies a Rerun event (checked by PlanRerun).
func (x *Execution) rerun(r *Rerun) {
	if r.Machine != nil {
		x.remap(r.Machine)
	}
	x.Info.RedriveCount++
	x.ctxExecution = nil
	x.Status = history.StatusRunning
	x.Failure = nil
	x.emit(x.lastFrame(), history.Event{
		Type:                          history.EventExecutionRedriven,
		ExecutionRedrivenEventDetails: &history.ExecutionRedrivenEventDetails{RedriveCount: x.Info.RedriveCount},
	})
	last := x.nextEventID - 1
	switch r.Mode {
	case RerunFailed:
		x.root.last = last
		x.root.revive(x)
	case RerunWarnings:
		x.rerunWarned(r.Warned, 0, last)
	case RerunNext:
		f := x.root
		f.last = last
		f.done, f.aborted, f.failure, f.output = false, false, nil, nil
		f.wait, f.waitID, f.timeoutID, f.beatID = waitNone, "", "", ""
		f.exitWithOutput(x, r.Output, nil, f.state.Next)
		x.push(func() { f.run(x) })
	case RerunState, RerunTop:
		name, input := r.State, x.rootInputs[r.State]
		if r.Mode == RerunTop || (r.State == x.Machine.StartAt && x.rootInputs[name] == nil) {
			name, input = x.Machine.StartAt, x.Input
		}
		vars := x.root.vars
		if r.Mode == RerunTop {
			vars = &scope{}
		}
		f := &frame{machine: x.Machine, kind: rootFrame, vars: vars, last: last}
		x.root = f
		f.next, f.nextInput = name, input
		x.push(func() { f.run(x) })
	}
}

// rerunWarned runs the warned states from i on, each on its own, then
// revives the execution as a redrive does.
func (x *Execution) rerunWarned(ws []WarnedState, i int, last int64) {
	if i == len(ws) {
		x.root.last = last
		x.root.revive(x)
		return
	}
	s := x.Machine.Find(ws[i].Name)
	solo := *s
	solo.Next, solo.End, solo.Catch = "", true, nil
	f := &frame{kind: branchFrame, vars: &scope{parent: x.root.vars}, last: last,
		machine: &asl.StateMachine{StartAt: s.Name, States: map[string]*asl.State{s.Name: &solo}, Order: []string{s.Name},
			QueryLanguage: x.Machine.QueryLanguage}}
	f.onDone = func(f *frame) {
		if f.failure != nil {
			x.root.cancel(x, 0)
			x.fail(f, f.failure)
			return
		}
		x.rerunWarned(ws, i+1, f.last)
	}
	f.next, f.nextInput = s.Name, ws[i].Input
	x.push(func() { f.run(x) })
}

// IsRedrive reports whether k runs an ended execution again (Redrive or
// RerunKind).
func IsRedrive(k EventKind) bool { return k == Redrive || k == RerunKind }
