package intrinsic

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"stepwise/asl/budget"
	"stepwise/asl/jsonpath"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

// Call is a parsed intrinsic function call: a States.* function applied to
// its arguments. A Call is immutable and safe for concurrent use.
type Call struct {
	text string // the call as written
	fn   *function
	args []arg
	pos  int // byte offset of the call in the expression it was parsed from
}

// arg is one argument of a call: a literal, a path or a nested call.
type arg struct {
	value any    // literal value: string, jsonvalue.Number, bool or nil
	raw   string // string literal: the text between the quotes, escapes kept
	str   bool   // the literal is a string
	path  *jsonpath.Path
	call  *Call
}

// function describes one States.* function.
type function struct {
	name    string
	minArgs int
	maxArgs int // -1: no limit
	eval    func(c *Call, args []any) (any, error)
	// evalRand, set for the functions that draw random numbers, is called
	// instead of eval with the environment's random source.
	evalRand func(c *Call, r *rand.Rand, args []any) (any, error)
}

func (f *function) arityOK(n int) bool {
	return n >= f.minArgs && (f.maxArgs < 0 || n <= f.maxArgs)
}

// functions indexes every States.* function by name.
var functions = index(arrayFunctions, encodingFunctions, hashFunctions,
	jsonFunctions, mathFunctions, stringFunctions, uuidFunctions, genericFunctions)

func index(families ...[]*function) map[string]*function {
	m := make(map[string]*function)
	for _, fam := range families {
		for _, f := range fam {
			m[f.name] = f
		}
	}
	return m
}

// IsCall reports whether s is written as an intrinsic function call, that
// is whether it starts with "States.".
func IsCall(s string) bool { return strings.HasPrefix(s, "States.") }

// String returns the call as written.
func (c *Call) String() string { return c.text }

// Name returns the function name, for example "States.Format".
func (c *Call) Name() string { return c.fn.name }

// Paths returns every path argument of the call, nested calls included, in
// the order they are written.
func (c *Call) Paths() []*jsonpath.Path {
	var ps []*jsonpath.Path
	return c.appendPaths(ps)
}

func (c *Call) appendPaths(ps []*jsonpath.Path) []*jsonpath.Path {
	for _, a := range c.args {
		switch {
		case a.path != nil:
			ps = append(ps, a.path)
		case a.call != nil:
			ps = a.call.appendPaths(ps)
		}
	}
	return ps
}

// ArityError reports a call with the wrong number of arguments. Parse
// accepts such calls because AWS does: CreateStateMachine takes them and the
// execution fails with States.Runtime when the call is evaluated. Validate
// reports them for callers that want to warn early.
type ArityError struct {
	Func   string
	Got    int
	Offset int // byte offset of the call in the expression
	min    int
	max    int
}

func (e *ArityError) Error() string {
	var want string
	switch {
	case e.max < 0:
		want = fmt.Sprintf("at least %d", e.min)
	case e.min == e.max:
		want = fmt.Sprint(e.min)
	default:
		want = fmt.Sprintf("%d to %d", e.min, e.max)
	}
	return fmt.Sprintf("%s takes %s argument(s), got %d at offset %d", e.Func, want, e.Got, e.Offset)
}

// Validate returns an *ArityError for the first call in the tree, nested
// calls included, that has the wrong number of arguments.
func (c *Call) Validate() error {
	if !c.fn.arityOK(len(c.args)) {
		return &ArityError{Func: c.fn.name, Got: len(c.args), Offset: c.pos, min: c.fn.minArgs, max: c.fn.maxArgs}
	}
	for _, a := range c.args {
		if a.call != nil {
			if err := a.call.Validate(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Eval evaluates the call in env. A failed evaluation returns a
// *failure.Failure named States.Runtime whose cause is the text AWS
// gives after its "An error occurred while executing the state ..." prefix.
func (c *Call) Eval(env *jsonpath.Env) (any, error) {
	if env == nil {
		env = &jsonpath.Env{}
	}
	v, err := c.eval(env)
	if err != nil {
		return nil, c.failure(env, err)
	}
	return v, nil
}

func (c *Call) eval(env *jsonpath.Env) (any, error) {
	vals := make([]any, len(c.args))
	for i := range c.args {
		a := &c.args[i]
		switch {
		case a.call != nil:
			v, err := a.call.eval(env)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		case a.path != nil:
			v, err := a.path.Eval(env)
			if err != nil {
				return nil, &pathError{path: a.path, err: err}
			}
			vals[i] = v
		default:
			vals[i] = a.value
		}
	}
	if !c.fn.arityOK(len(vals)) {
		return nil, invalidArgs(c)
	}
	// A call on plain arguments does work and builds values bounded by
	// its arguments (paths into the input, literals); calls nested in
	// calls can multiply them, and count against the budget.
	var m *budget.Meter
	if c.nests() {
		m = env.Meter()
	}
	if err := m.Step(); err != nil {
		return nil, err
	}
	var v any
	var err error
	if c.fn.evalRand != nil {
		var r *rand.Rand
		if env.Rand != nil {
			r = env.Rand()
		} else {
			r = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		}
		v, err = c.fn.evalRand(c, r, vals)
	} else {
		v, err = c.fn.eval(c, vals)
	}
	if err == nil && m != nil {
		err = m.Bytes(size(v))
	}
	return v, err
}

// nests reports whether an argument of c is itself a call.
func (c *Call) nests() bool {
	for i := range c.args {
		if c.args[i].call != nil {
			return true
		}
	}
	return false
}

// size is what a function's result is counted as against the budget: a
// string's length, 16 bytes a slot of an array or object (their members
// were counted when they were made, or come from the input).
func size(v any) int {
	switch t := v.(type) {
	case string:
		return len(t)
	case []any:
		return 16 * len(t)
	case *jsonvalue.Object:
		return 32 * t.Len()
	}
	return 0
}

// argError is a failure of one function; detail is AWS's text for it.
type argError struct{ detail string }

func (e *argError) Error() string { return e.detail }

// pathError is a path argument that could not be evaluated.
type pathError struct {
	path *jsonpath.Path
	err  error
}

func (e *pathError) Error() string { return e.path.String() + ": " + e.err.Error() }

// invalidArgs is the failure AWS reports for any argument a function
// rejects: wrong count, wrong type or out of range.
func invalidArgs(c *Call) error {
	return &argError{detail: "Invalid arguments in " + c.fn.name}
}

// failure renders an evaluation error as the failure AWS reports.
func (c *Call) failure(env *jsonpath.Env, err error) error {
	var ae *argError
	if errors.As(err, &ae) {
		return failure.New(failure.Runtime,
			"There was an error while evaluating the intrinsic function: "+c.text+". "+ae.detail)
	}
	var pe *pathError
	if errors.As(err, &pe) {
		var f *failure.Failure
		if errors.As(pe.err, &f) {
			return f
		}
		if !errors.Is(pe.err, jsonpath.ErrNotFound) {
			return failure.New(failure.Runtime,
				"The function '"+c.text+"' had the following error: "+pe.err.Error())
		}
		return failure.New(failure.Runtime,
			"The function '"+c.text+"' had the following error: The JsonPath argument for the field '"+
				pe.path.String()+"' could not be found in the input '"+jsonvalue.String(rootValue(pe.path, env))+"'")
	}
	name := failure.Runtime
	var be *budget.Error
	if errors.As(err, &be) && be.Limit == "bytes" {
		name = failure.DataLimitExceeded
	}
	return failure.New(name,
		"There was an error while evaluating the intrinsic function: "+c.text+". "+err.Error())
}

// rootValue returns the value a path starts from, for error messages.
func rootValue(p *jsonpath.Path, env *jsonpath.Env) any {
	switch p.Root() {
	case jsonpath.RootContext:
		return env.ContextValue()
	case jsonpath.RootVariable:
		if env.Vars != nil {
			v, _ := env.Vars(p.Variable())
			return v
		}
		return nil
	default:
		return env.Input
	}
}
