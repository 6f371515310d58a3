package teststate

import (
	"strings"

	"stepwise/asl"
	"stepwise/jsonvalue"
)

// SingleStateName is the name a state tested on its own (a definition
// that is one state, no stateName) runs under: "$$.State.Name" and error
// messages use it, as on AWS.
const SingleStateName = "StateName"

// loadState parses the definition and returns the state to test.
//
// Without stateName the definition is one state. It is validated as AWS
// validates it, as the only state of a machine, with a stand-in terminal
// state for each state it can move to, and the diagnostics' locations are
// made relative to the state. With stateName the definition is a whole
// machine and the named state may be at any depth (inside a Parallel
// branch or a Map's item processor).
//
// The state runs as the first state of a machine of its own: the machine
// of a single state, or one made of the named state and a stand-in
// terminal state for each state it can move to.
func loadState(definition string, stateName *string) (*asl.StateMachine, *asl.State, error) {
	if stateName != nil {
		sm, diags := asl.Parse([]byte(definition))
		if sm == nil {
			return nil, nil, errInvalidDefinition(diags)
		}
		st := findState(sm, *stateName)
		if st == nil {
			return nil, nil, errStateNotFound()
		}
		return machineOf(st), st, nil
	}
	v, err := jsonvalue.ParseString(definition)
	if err != nil {
		// Report the syntax error against the text as given.
		return nil, nil, errInvalidDefinition(asl.Validate([]byte(definition), asl.Options{}))
	}
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, nil, errInvalidDefinition(asl.Validate([]byte(definition), asl.Options{}))
	}
	sm, diags := asl.Parse(wrapState(definition, obj))
	if sm == nil {
		return nil, nil, errInvalidDefinition(relocate(diags))
	}
	return sm, sm.States[SingleStateName], nil
}

// machineOf makes a machine that starts at st, with a Succeed state
// standing for each state st can move to.
func machineOf(st *asl.State) *asl.StateMachine {
	sm := &asl.StateMachine{StartAt: st.Name, States: map[string]*asl.State{st.Name: st}, Order: []string{st.Name}}
	add := func(name string) {
		if _, ok := sm.States[name]; name != "" && !ok {
			sm.States[name] = &asl.State{Name: name, Type: asl.TypeSucceed, End: true}
			sm.Order = append(sm.Order, name)
		}
	}
	add(st.Next)
	add(st.Default)
	for _, c := range st.Choices {
		add(c.Next)
	}
	for _, c := range st.Catch {
		add(c.Next)
	}
	return sm
}

// wrapState makes a one-state machine of a state definition: the state
// under SingleStateName, and a Succeed state for each other state it names
// as a transition target (Next, Default, Choices[i].Next, Catch[i].Next).
// The state's text is kept as written, so duplicate keys are still seen.
func wrapState(definition string, obj *jsonvalue.Object) []byte {
	var targets []string
	seen := map[string]bool{SingleStateName: true}
	add := func(v any) {
		if s, ok := v.(string); ok && !seen[s] {
			seen[s] = true
			targets = append(targets, s)
		}
	}
	field := func(o *jsonvalue.Object, key string) any {
		v, _ := o.Get(key)
		return v
	}
	add(field(obj, "Next"))
	add(field(obj, "Default"))
	for _, list := range []string{"Choices", "Catch"} {
		arr, _ := field(obj, list).([]any)
		for _, e := range arr {
			if o, ok := e.(*jsonvalue.Object); ok {
				add(field(o, "Next"))
			}
		}
	}
	b := []byte(`{"StartAt":"` + SingleStateName + `","States":{"` + SingleStateName + `":`)
	b = append(b, definition...)
	for _, t := range targets {
		b = append(b, ',')
		b = jsonvalue.AppendString(b, t)
		b = append(b, `:{"Type":"Succeed"}`...)
	}
	return append(b, "}}"...)
}

// relocate makes the locations of a wrapped state's diagnostics relative
// to the state ("/States/StateName/Next" becomes "/Next"), and drops the
// machine's lack of a terminal state, which only repeats that the state
// has neither Next nor End, unless it is all there is to say.
func relocate(diags []asl.Diagnostic) []asl.Diagnostic {
	const prefix = "/States/" + SingleStateName
	out := make([]asl.Diagnostic, 0, len(diags))
	for _, d := range diags {
		if d.Code == asl.CodeMissingEndState {
			continue
		}
		if rest, ok := strings.CutPrefix(d.Location, prefix); ok && (rest == "" || rest[0] == '/') {
			d.Location = rest
			if d.Location == "" {
				d.Location = "/"
			}
		}
		out = append(out, d)
	}
	if !asl.HasErrors(out) {
		return diags
	}
	return out
}

// findState finds a state by name in a machine, its Parallel branches and
// its Map item processors.
func findState(sm *asl.StateMachine, name string) *asl.State {
	if st, ok := sm.States[name]; ok {
		return st
	}
	for _, n := range sm.Order {
		st := sm.States[n]
		for _, b := range st.Branches {
			if found := findState(b, name); found != nil {
				return found
			}
		}
		if st.ItemProcessor != nil {
			if found := findState(st.ItemProcessor, name); found != nil {
				return found
			}
		}
	}
	return nil
}
