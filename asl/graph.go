package asl

// transitions checks the transitions of one machine (the whole machine, a
// branch or an item processor): every target must be a state of the same
// machine, the top-level machine must have a terminal state, and every
// state must be reachable from StartAt. loc is the machine's location.
//
// The order follows AWS: the missing targets, then either the missing
// terminal state or the unreachable states (a machine with no terminal
// state is not checked for reachability).
func (p *parser) transitions(sm *StateMachine, loc string, top, hasStartAt bool) {
	_, startFound := sm.States[sm.StartAt]
	if hasStartAt && !startFound {
		p.add(errMissingTarget(loc+"/StartAt", sm.StartAt))
	}
	for _, name := range sm.Order {
		sloc := loc + "/States/" + name
		eachTarget(sm.States[name], sloc, func(target, tloc string) {
			if _, ok := sm.States[target]; !ok {
				p.add(errMissingTarget(tloc, target))
			}
		})
	}
	if top && !hasTerminal(sm) {
		p.add(errNoTerminalState())
		return
	}
	if !hasStartAt {
		return
	}
	reached := make(map[string]bool, len(sm.States))
	var queue []string
	if startFound {
		reached[sm.StartAt] = true
		queue = append(queue, sm.StartAt)
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		eachTarget(sm.States[name], "", func(target, _ string) {
			if _, ok := sm.States[target]; ok && !reached[target] {
				reached[target] = true
				queue = append(queue, target)
			}
		})
	}
	for _, name := range sm.Order {
		if !reached[name] {
			p.add(errUnreachable(loc+"/States/"+name, name))
		}
	}
}

// eachTarget calls fn for every transition of st, with its location under
// sloc: Next, Default, Choices[i].Next and Catch[i].Next.
func eachTarget(st *State, sloc string, fn func(target, loc string)) {
	if st.Next != "" {
		fn(st.Next, sloc+"/Next")
	}
	if st.Default != "" {
		fn(st.Default, sloc+"/Default")
	}
	for i, r := range st.Choices {
		if r.Next != "" {
			fn(r.Next, index(sloc+"/Choices", i)+"/Next")
		}
	}
	for i, c := range st.Catch {
		if c.Next != "" {
			fn(c.Next, index(sloc+"/Catch", i)+"/Next")
		}
	}
}

// hasTerminal reports whether a machine has a state that can end it.
func hasTerminal(sm *StateMachine) bool {
	for _, st := range sm.States {
		if st.End || st.Type == TypeSucceed || st.Type == TypeFail {
			return true
		}
	}
	return false
}
