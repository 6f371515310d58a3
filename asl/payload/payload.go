// Package payload compiles and evaluates JSONPath-mode payload templates:
// the values of Parameters, ResultSelector, ItemSelector, Assign and the
// like, where a key ending in ".$" takes its value from a path ($, $$,
// $name) or an intrinsic function call.
//
// A template is compiled once per definition and evaluated many times.
// Parts of the template that hold no ".$" key are shared between results
// rather than rebuilt.
package payload

import (
	"fmt"
	"strings"

	"stepwise/asl/intrinsic"
	"stepwise/asl/jsonpath"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

// Expr is the compiled value of a ".$" key: a path or an intrinsic call.
type Expr struct {
	Text string
	Path *jsonpath.Path  // set for a path
	Call *intrinsic.Call // set for an intrinsic function call
}

// CompileExpr compiles the string value of a ".$" key.
func CompileExpr(s string) (*Expr, error) {
	if intrinsic.IsCall(s) {
		c, err := intrinsic.Parse(s)
		if err != nil {
			return nil, err
		}
		return &Expr{Text: s, Call: c}, nil
	}
	p, err := jsonpath.Compile(s)
	if err != nil {
		return nil, err
	}
	return &Expr{Text: s, Path: p}, nil
}

// Eval evaluates the expression. field names the key being evaluated (for
// example "value.$" or "ErrorPath") in error messages.
func (e *Expr) Eval(env *jsonpath.Env, field string) (any, error) {
	if e.Call != nil {
		return e.Call.Eval(env)
	}
	v, err := e.Path.Eval(env)
	if err != nil {
		return nil, PathError(e.Path, field, env, err)
	}
	return v, nil
}

// PathError turns a path evaluation error into the States.Runtime failure
// AWS reports for it.
func PathError(p *jsonpath.Path, field string, env *jsonpath.Env, err error) error {
	if _, ok := err.(*failure.Failure); ok {
		return err
	}
	var in any
	switch p.Root() {
	case jsonpath.RootContext:
		in = env.ContextValue()
	case jsonpath.RootVariable:
		if env.Vars != nil {
			in, _ = env.Vars(p.Variable())
		}
	default:
		in = env.Input
	}
	return failure.Newf(failure.Runtime,
		"The JSONPath '%s' specified for the field '%s' could not be found in the input '%s'",
		p.String(), field, jsonvalue.String(in))
}

// Template is a compiled payload template.
type Template struct {
	root node
}

type node interface {
	eval(env *jsonpath.Env) (any, error)
}

// literal is a part of the template with no ".$" key below it.
type literal struct{ v any }

func (l literal) eval(*jsonpath.Env) (any, error) { return l.v, nil }

type objectNode struct {
	keys  []string // output names
	vals  []node
	exprs []*Expr  // non-nil where the key ended in ".$"
	field []string // the key as written, for error messages
}

func (o *objectNode) eval(env *jsonpath.Env) (any, error) {
	out := jsonvalue.NewObject(len(o.keys))
	for i, k := range o.keys {
		var v any
		var err error
		if e := o.exprs[i]; e != nil {
			v, err = e.Eval(env, o.field[i])
		} else {
			v, err = o.vals[i].eval(env)
		}
		if err != nil {
			return nil, err
		}
		out.Set(k, v)
	}
	return out, nil
}

type arrayNode struct{ elems []node }

func (a *arrayNode) eval(env *jsonpath.Env) (any, error) {
	out := make([]any, len(a.elems))
	for i, n := range a.elems {
		v, err := n.eval(env)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// CompileError is a template that cannot be compiled, with the JSON pointer
// (relative to the template) of the offending key.
type CompileError struct {
	Pointer string
	Err     error
}

func (e *CompileError) Error() string { return fmt.Sprintf("%v (at %s)", e.Err, e.Pointer) }
func (e *CompileError) Unwrap() error { return e.Err }

// Compile compiles a template value. Every bad ".$" value is reported, each
// as a *CompileError.
func Compile(v any) (*Template, []error) {
	var errs []error
	n := compile(v, "", &errs)
	if len(errs) > 0 {
		return nil, errs
	}
	return &Template{root: n}, nil
}

func compile(v any, ptr string, errs *[]error) node {
	switch t := v.(type) {
	case *jsonvalue.Object:
		o := &objectNode{}
		dynamic := false
		for k, e := range t.All() {
			p := ptr + "/" + escapePointer(k)
			if name, ok := strings.CutSuffix(k, ".$"); ok {
				s, isString := e.(string)
				if !isString {
					*errs = append(*errs, &CompileError{Pointer: p, Err: fmt.Errorf("the value of field '%s' must be a path or an intrinsic function", k)})
					continue
				}
				x, err := CompileExpr(s)
				if err != nil {
					*errs = append(*errs, &CompileError{Pointer: p, Err: err})
					continue
				}
				o.keys = append(o.keys, name)
				o.vals = append(o.vals, nil)
				o.exprs = append(o.exprs, x)
				o.field = append(o.field, k)
				dynamic = true
				continue
			}
			n := compile(e, p, errs)
			if _, ok := n.(literal); !ok {
				dynamic = true
			}
			o.keys = append(o.keys, k)
			o.vals = append(o.vals, n)
			o.exprs = append(o.exprs, nil)
			o.field = append(o.field, k)
		}
		if !dynamic {
			return literal{v}
		}
		return o
	case []any:
		a := &arrayNode{elems: make([]node, len(t))}
		dynamic := false
		for i, e := range t {
			a.elems[i] = compile(e, fmt.Sprintf("%s/%d", ptr, i), errs)
			if _, ok := a.elems[i].(literal); !ok {
				dynamic = true
			}
		}
		if !dynamic {
			return literal{v}
		}
		return a
	default:
		return literal{v}
	}
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Eval evaluates the template in env and returns a fresh value.
func (t *Template) Eval(env *jsonpath.Env) (any, error) { return t.root.eval(env) }

// Exprs calls fn for every ".$" expression in the template, in order.
func (t *Template) Exprs(fn func(*Expr)) { walk(t.root, fn) }

func walk(n node, fn func(*Expr)) {
	switch t := n.(type) {
	case *objectNode:
		for i := range t.keys {
			if t.exprs[i] != nil {
				fn(t.exprs[i])
			} else {
				walk(t.vals[i], fn)
			}
		}
	case *arrayNode:
		for _, e := range t.elems {
			walk(e, fn)
		}
	}
}
