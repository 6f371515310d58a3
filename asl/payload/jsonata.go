package payload

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"stepwise/asl/budget"
	"stepwise/asl/jsonata"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

// JSONata is a compiled JSONata-mode value (Arguments, Output, Assign,
// Items, Condition, ...): a JSON value in which every string written
// "{% expr %}" is a JSONata expression, and everything else is a literal.
// Parts holding no expression are shared between results.
type JSONata struct {
	lit   any // the value, when nothing below holds an expression
	expr  *jsonata.Expression
	src   string   // the expression between {% and %}, trimmed
	ctx   bool     // the expression may read $states.context
	keys  []string // object members
	vals  []*JSONata
	elems []*JSONata // array elements
	kind  jsonataKind
}

type jsonataKind uint8

const (
	jLiteral jsonataKind = iota
	jExpr
	jObject
	jArray
)

// IsJSONata reports whether s is a JSONata expression, "{% ... %}".
func IsJSONata(s string) bool {
	return len(s) >= 4 && strings.HasPrefix(s, "{%") && strings.HasSuffix(s, "%}")
}

// JSONataSyntaxError is an expression inside a JSONata value that does not
// compile, with the JSON pointer (relative to the value) of the string.
type JSONataSyntaxError struct {
	Pointer string
	Expr    string
	Err     *jsonata.Error
}

func (e *JSONataSyntaxError) Error() string {
	return fmt.Sprintf("The JSONata expression '%s' is not valid: %s (%s at position %d)",
		e.Expr, e.Err.Message, e.Err.Code, e.Err.Position)
}

func (e *JSONataSyntaxError) Unwrap() error { return e.Err }

// CompileJSONata compiles a JSONata-mode value. Every expression that does
// not compile is reported, each as a *JSONataSyntaxError.
func CompileJSONata(v any) (*JSONata, []error) {
	var errs []error
	t := compileJSONata(v, "", &errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return t, nil
}

func compileJSONata(v any, ptr string, errs *[]error) *JSONata {
	switch t := v.(type) {
	case string:
		if !IsJSONata(t) {
			break
		}
		src := strings.TrimSpace(t[2 : len(t)-2])
		e, err := jsonata.Compile(src)
		if err != nil {
			var je *jsonata.Error
			if !errors.As(err, &je) {
				je = &jsonata.Error{Code: "S0201", Message: err.Error()}
			}
			*errs = append(*errs, &JSONataSyntaxError{Pointer: ptr, Expr: src, Err: je})
			return nil
		}
		return &JSONata{kind: jExpr, expr: e, src: src, ctx: readsContext(src)}
	case *jsonvalue.Object:
		o := &JSONata{kind: jObject}
		dynamic := false
		for k, e := range t.All() {
			n := compileJSONata(e, ptr+"/"+escapePointer(k), errs)
			if n != nil && n.kind != jLiteral {
				dynamic = true
			}
			o.keys = append(o.keys, k)
			o.vals = append(o.vals, n)
		}
		if dynamic {
			return o
		}
	case []any:
		a := &JSONata{kind: jArray, elems: make([]*JSONata, len(t))}
		dynamic := false
		for i, e := range t {
			a.elems[i] = compileJSONata(e, fmt.Sprintf("%s/%d", ptr, i), errs)
			if a.elems[i] != nil && a.elems[i].kind != jLiteral {
				dynamic = true
			}
		}
		if dynamic {
			return a
		}
	}
	return &JSONata{kind: jLiteral, lit: v}
}

// Literal returns the value when it holds no expression.
func (t *JSONata) Literal() (any, bool) { return t.lit, t.kind == jLiteral }

// Exprs calls fn with the source of every expression in the value.
func (t *JSONata) Exprs(fn func(src string)) {
	switch t.kind {
	case jExpr:
		fn(t.src)
	case jObject:
		for _, v := range t.vals {
			v.Exprs(fn)
		}
	case jArray:
		for _, v := range t.elems {
			v.Exprs(fn)
		}
	}
}

// readsContext reports whether an expression may read $states.context:
// any use of $states other than $states.input, $states.result and
// $states.errorOutput counts.
func readsContext(src string) bool {
	for rest := src; ; {
		i := strings.Index(rest, "$states")
		if i < 0 {
			return false
		}
		rest = rest[i+len("$states"):]
		switch {
		case strings.HasPrefix(rest, ".input"), strings.HasPrefix(rest, ".result"), strings.HasPrefix(rest, ".errorOutput"):
			field := rest[1:]
			n := strings.IndexFunc(field, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
			})
			if n < 0 {
				n = len(field)
			}
			if w := field[:n]; w != "input" && w != "result" && w != "errorOutput" {
				return true
			}
		default:
			return true
		}
	}
}

// JSONataEnv is what a JSONata expression of a state sees: $states, the
// variables in scope, the Step Functions functions and the clock.
type JSONataEnv struct {
	// Input is $states.input and the context value "$": the state's input.
	Input any
	// Context builds $states.context, for the expressions that may read it.
	Context func() any
	// ResultName, when set, names the member of $states that holds Result:
	// "result" or "errorOutput".
	ResultName string
	Result     any
	// Vars resolves the other variables.
	Vars  func(name string) (any, bool)
	Funcs map[string]*jsonata.Func
	Now   func() time.Time
	// Budget bounds the evaluations made in this environment; nil bounds
	// only their recursion. When it is nil and BudgetFunc is set, the
	// first evaluation makes it.
	Budget     *budget.Meter
	BudgetFunc func() *budget.Meter

	// Shared, when set, keeps the conversions of Input, the context and
	// Result to JSONata's model for all the environments given it (those
	// of one execution); when nil, for the expressions evaluated here.
	Shared *jsonata.Shared
	shared *jsonata.Shared
}

// conversions returns the environment's kept conversions.
func (env *JSONataEnv) conversions() *jsonata.Shared {
	if env.Shared != nil {
		return env.Shared
	}
	if env.shared == nil {
		env.shared = new(jsonata.Shared)
	}
	return env.shared
}

// meter returns the environment's budget, making it on first use.
func (env *JSONataEnv) meter() *budget.Meter {
	if env.Budget == nil && env.BudgetFunc != nil {
		env.Budget = env.BudgetFunc()
	}
	return env.Budget
}

// Eval evaluates the value. field names it in error messages ("Output",
// "Arguments"); members and elements append their key or index
// ("Output/result"). An expression that yields nothing, or fails, gives a
// States.QueryEvaluationError failure naming the expression and the field.
func (t *JSONata) Eval(env *JSONataEnv, field string) (any, error) {
	switch t.kind {
	case jExpr:
		v, ok, err := t.EvalExpr(env, field)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, located(failure.Newf(failure.QueryEvaluationError,
				"The JSONata expression '%s' specified for the field '%s' returned nothing (undefined).", t.src, field), field)
		}
		return v, nil
	case jObject:
		out := jsonvalue.NewObject(len(t.keys))
		for i, k := range t.keys {
			v, err := t.vals[i].Eval(env, field+"/"+k)
			if err != nil {
				return nil, err
			}
			out.Set(k, v)
		}
		return out, nil
	case jArray:
		out := make([]any, len(t.elems))
		for i, e := range t.elems {
			v, err := e.Eval(env, fmt.Sprintf("%s/%d", field, i))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return t.lit, nil
}

// EvalExpr evaluates a value that is one expression and reports whether
// its result is defined; a literal is returned as it is.
func (t *JSONata) EvalExpr(env *JSONataEnv, field string) (any, bool, error) {
	if t.kind != jExpr {
		v, err := t.Eval(env, field)
		return v, err == nil, err
	}
	// Lookup is asked at most once a name per evaluation.
	opts := &jsonata.Options{Funcs: env.Funcs, Now: env.Now, Budget: env.meter(), Shared: env.conversions(), Lookup: func(name string) (any, bool) {
		if name == "states" {
			return env.states(t.ctx), true
		}
		if env.Vars == nil {
			return nil, false
		}
		return env.Vars(name)
	}}
	v, ok, err := t.expr.EvalWith(env.Input, true, opts)
	if err != nil {
		return nil, false, t.evalError(err, field)
	}
	return v, ok, nil
}

// evalError turns an evaluation error into the failure AWS reports.
func (t *JSONata) evalError(err error, field string) error {
	var fl *failure.Failure
	if errors.As(err, &fl) {
		return fl
	}
	var be *budget.Error
	if errors.As(err, &be) {
		name := failure.QueryEvaluationError
		if be.Limit == "bytes" {
			name = failure.DataLimitExceeded
		}
		return located(failure.Newf(name,
			"An error occurred while evaluating the JSONata expression '%s' specified for the field '%s': %s",
			t.src, field, be.Error()), field)
	}
	var je *jsonata.Error
	if errors.As(err, &je) {
		return located(failure.Newf(failure.QueryEvaluationError,
			"An error occurred while evaluating the JSONata expression '%s' specified for the field '%s': %s (%s at position %d)",
			t.src, field, je.Message, je.Code, je.Position), field)
	}
	return located(failure.Newf(failure.QueryEvaluationError,
		"An error occurred while evaluating the JSONata expression '%s' specified for the field '%s': %s", t.src, field, err.Error()), field)
}

func located(f *failure.Failure, field string) *failure.Failure {
	f.Location = field
	return f
}

// Source returns the expression text of a value that is one expression.
func (t *JSONata) Source() string { return t.src }

// states builds the $states object.
func (env *JSONataEnv) states(withContext bool) *jsonvalue.Object {
	st := jsonvalue.NewObject(3)
	st.Set("input", env.Input)
	if withContext && env.Context != nil {
		st.Set("context", env.Context())
	}
	if env.ResultName != "" {
		st.Set(env.ResultName, env.Result)
	}
	return st
}
