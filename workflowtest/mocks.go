package workflowtest

import (
	"fmt"

	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// StateMocks are mocked Task results by state name, the format of
// `stepwise run --mock`: a JSON object mapping each state's name to
// {"Return": <output>} or {"Throw": {"Error": "...", "Cause": "..."}}, or
// to an array of those used one per invocation of the state (the last one
// again for the invocations after it). Invocations are counted as a
// MockConfigFile counts them (interp.TaskRequest.Invocation): retries,
// loops, Map iterations and Parallel branches all take the next one.
//
// A response may also give "Input" (a Stepwise extension, what
// recordings write): the task's input it answers. When a state's
// responses give inputs, a task is answered by the first response not
// yet used in its execution whose Input equals the task's parameters
// (a string that is the task's token matches any string), whatever the
// order the tasks came in: concurrent Map iterations and Parallel
// branches get their own answers. A task no such response answers has
// none. A response with Input may be {"Pending": true} instead of
// Return or Throw: the task does not end (it was still running when the
// recorded execution ended, as another iteration's failure ended it).
type StateMocks struct {
	byState map[string][]*jsonvalue.Object
	order   []string
}

// LoadStateMocks reads a mock file ("" gives no mocks).
func LoadStateMocks(file string) (*StateMocks, error) {
	if file == "" {
		return &StateMocks{byState: map[string][]*jsonvalue.Object{}}, nil
	}
	data, err := readFile(file, MaxFileSize)
	if err != nil {
		return nil, err
	}
	v, err := jsonvalue.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("mock file %s: %w", file, err)
	}
	m, err := ParseStateMocks(v)
	if err != nil {
		return nil, fmt.Errorf("mock file %s: %w", file, err)
	}
	return m, nil
}

// ParseStateMocks reads mocks from a JSON value.
func ParseStateMocks(v any) (*StateMocks, error) {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, fmt.Errorf("must hold a JSON object of state names")
	}
	m := &StateMocks{byState: map[string][]*jsonvalue.Object{}}
	for name, r := range obj.All() {
		list, isList := r.([]any)
		if !isList {
			list = []any{r}
		}
		var resps []*jsonvalue.Object
		for i, e := range list {
			o, ok := e.(*jsonvalue.Object)
			if !ok || (!o.Has("Return") && !o.Has("Throw") && !o.Has("Pending")) {
				return nil, fmt.Errorf("state %q response %d must be an object with Return or Throw", name, i)
			}
			if p, ok := o.Get("Pending"); ok && (p != true || !o.Has("Input")) {
				return nil, fmt.Errorf("state %q response %d: \"Pending\" must be true, beside \"Input\"", name, i)
			}
			if i > 0 && o.Has("Input") != resps[0].Has("Input") {
				return nil, fmt.Errorf("state %q response %d: give \"Input\" in all of the state's responses or in none", name, i)
			}
			resps = append(resps, o)
		}
		m.byState[name] = resps
		m.order = append(m.order, name)
	}
	return m, nil
}

// States are the names of the mocked states, in the order written.
func (m *StateMocks) States() []string {
	if m == nil {
		return nil
	}
	return m.order
}

// Has reports whether the state has a mocked response.
func (m *StateMocks) Has(state string) bool { return m != nil && len(m.byState[state]) > 0 }

// Lookup answers a task when its state is mocked: the output or the
// failure for the task's invocation of the state, and ok.
func (m *StateMocks) Lookup(req *interp.TaskRequest) (out any, fl *failure.Failure, ok bool) {
	return m.Answer(req, nil)
}

// Used are the responses given by Input already used in one execution.
type Used map[*jsonvalue.Object]bool

// Answer is Lookup within an execution whose responses given by Input
// used are not given again (nil: they are).
func (m *StateMocks) Answer(req *interp.TaskRequest, used Used) (out any, fl *failure.Failure, ok bool) {
	if !m.Has(req.StateName) {
		return nil, nil, false
	}
	list := m.byState[req.StateName]
	var o *jsonvalue.Object
	if list[0].Has("Input") {
		for _, r := range list {
			in, _ := r.Get("Input")
			if !used[r] && sameInput(in, req.Parameters, req.Token) {
				o = r
				break
			}
		}
		if o == nil {
			return nil, nil, false
		}
		if used != nil {
			used[o] = true
		}
	} else {
		o = list[min(req.Invocation, len(list)-1)]
	}
	if o.Has("Pending") {
		return nil, interp.Pending, true
	}
	if ret, ok := o.Get("Return"); ok {
		return ret, nil, true
	}
	t, _ := o.Get("Throw")
	to, _ := t.(*jsonvalue.Object)
	fl = &failure.Failure{}
	if e, ok := to.Get("Error"); ok {
		fl.Name, _ = e.(string)
	}
	if cs, ok := to.Get("Cause"); ok {
		fl.Cause, _ = cs.(string)
		fl.HasCause = true
	}
	return nil, fl, true
}

// sameInput reports whether a recorded input is the task's: equal JSON
// values, where a string of the task's that is its token (which differs
// from run to run) matches any string.
func sameInput(recorded, got any, token string) bool {
	switch g := got.(type) {
	case string:
		if token != "" && g == token {
			_, ok := recorded.(string)
			return ok
		}
	case *jsonvalue.Object:
		r, ok := recorded.(*jsonvalue.Object)
		if !ok || r.Len() != g.Len() {
			return false
		}
		for k, gv := range g.All() {
			rv, ok := r.Get(k)
			if !ok || !sameInput(rv, gv, token) {
				return false
			}
		}
		return true
	case []any:
		r, ok := recorded.([]any)
		if !ok || len(r) != len(g) {
			return false
		}
		for i := range g {
			if !sameInput(r[i], g[i], token) {
				return false
			}
		}
		return true
	}
	return jsonvalue.Equal(recorded, got)
}
