package jsonata

import (
	"sync"
	"time"

	"stepwise/asl/budget"
)

// Func is a host function bound into an evaluation as $Name. Its arguments
// and result use the boundary model (package jsonvalue); a nil argument or
// result is undefined. An error it returns ends the evaluation as it is.
type Func struct {
	// Signature is a JSONata signature such as "<n-n?:a<n>>"; empty means
	// the arguments are passed unchecked.
	Signature string
	Fn        func(args []any) (any, error)

	once   sync.Once // wraps Fn once, however many evaluations bind it
	native *native
	err    error
}

// Null is the result a host function returns for JSON null; a nil result
// is undefined.
var Null any = hostNull{}

type hostNull struct{}

// Options are the bindings of one evaluation.
type Options struct {
	// Vars are bound as $name (boundary-model values).
	Vars map[string]any
	// Lookup resolves the names Vars and Funcs do not bind, before the
	// built-ins; it is called at most once a name per evaluation.
	Lookup func(name string) (any, bool)
	// Funcs are bound as $name; they shadow built-ins of the same name.
	Funcs map[string]*Func
	// Now is the clock of $now and $millis; nil reads the wall clock.
	Now func() time.Time
	// Budget bounds the evaluation's steps, the bytes of the values it
	// builds and its time, and may interrupt it; nil bounds only the
	// recursion depth. An evaluation past a limit fails with the meter's
	// *budget.Error.
	Budget *budget.Meter
	// Shared, when set, keeps the conversions of the input and of what
	// Lookup finds for the evaluations given the same Shared.
	Shared *Shared

	limits *limits // tighter bounds, for fuzzing
}

// limits bound one evaluation: recursion depth and evaluated nodes.
type limits struct{ depth, steps int }

// EvalWith evaluates the expression against input (undefined when defined
// is false) with the given bindings. The bool result reports whether the
// value is defined.
func (e *Expression) EvalWith(input any, defined bool, o *Options) (any, bool, error) {
	var in any
	if defined && e.readsInput {
		var shared *Shared
		if o != nil {
			shared = o.Shared
		}
		in = shared.fromJSON(input, 0, true)
	}
	return e.evalInternal(in, o)
}

// hostNative wraps a host function as a native function value, once.
func hostNative(name string, f *Func) (*native, error) {
	f.once.Do(func() { f.native, f.err = wrapHost(name, f) })
	return f.native, f.err
}

func wrapHost(name string, f *Func) (*native, error) {
	n := &native{name: name, fn: func(c *callCtx, args []any) (any, error) {
		in := make([]any, len(args))
		for i, a := range args {
			if a != nil {
				v, err := toJSONMetered(a, c.ev.meter, nil)
				if err != nil {
					return nil, err
				}
				in[i] = v
			}
		}
		out, err := f.Fn(in)
		if err != nil || out == nil {
			return nil, err
		}
		if out == Null {
			return null, nil
		}
		return fromJSON(out), nil
	}}
	if f.Signature != "" {
		s, err := parseSignature(f.Signature, 0)
		if err != nil {
			return nil, err
		}
		n.sig = s
	}
	return n, nil
}

// readsInput reports whether evaluating n may read its input (the context
// value "$", "$$" or a name, a function taking its context, ...). It is
// sure only of what it knows: literals, variables other than $ and $$,
// paths from such a variable through names, and operators and conditions
// over these read nothing; anything else may. An expression that reads no
// input is evaluated without converting the input to the internal model.
func readsInput(n *node) bool {
	if n == nil {
		return false
	}
	if len(n.predicate) > 0 || len(n.stages) > 0 || n.group != nil || n.tuple || n.hasFocus || n.hasIndex {
		return true
	}
	switch n.typ {
	case ntString, ntNumber, ntValue:
		return false
	case ntVariable:
		return n.op == "" || n.op == "$"
	case ntBinary:
		return readsInput(n.lhs) || readsInput(n.rhs)
	case ntUnaryMinus:
		return readsInput(n.lhs)
	case ntCondition:
		return readsInput(n.cond) || readsInput(n.then) || readsInput(n.els)
	case ntPath:
		if len(n.steps) == 0 || n.steps[0].typ != ntVariable || readsInput(n.steps[0]) || n.steps[0].consArray {
			return true
		}
		for _, st := range n.steps[1:] {
			if st.typ != ntName || len(st.stages) > 0 || len(st.predicate) > 0 || st.group != nil ||
				st.tuple || st.hasFocus || st.hasIndex || st.consArray {
				return true
			}
		}
		return false
	}
	return true
}
