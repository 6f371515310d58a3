package jsonata

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"stepwise/asl/budget"
	"stepwise/jsonvalue"
)

// Internal value model (mirrors jsonata.js):
//
//	nil       undefined
//	nullT     JSON null
//	float64   number
//	string, bool
//	*arr      array or result sequence (flags as in jsonata.js)
//	*jsonvalue.Object  object with internal values
//	*lambda, *native, *partialFn, *regexFn  functions
type nullT struct{}

var null = nullT{}

type arr struct {
	v            []any
	sequence     bool
	keepSingle   bool
	outerWrapper bool
	cons         bool
	tupleStream  bool
}

func newSeq(items ...any) *arr {
	if len(items) == 0 {
		// Most sequences made empty get one item: room for it comes
		// with the sequence.
		b := new(struct {
			a   arr
			one [1]any
		})
		b.a.v, b.a.sequence = b.one[:0], true
		return &b.a
	}
	return &arr{v: items, sequence: true}
}

func (a *arr) push(x any) { a.v = append(a.v, x) }

type lambda struct {
	node   *node
	env    *env
	input  any
	params []string
	sig    *signature
}

type native struct {
	name string
	sig  *signature
	fn   func(c *callCtx, args []any) (any, error)
}

type partialFn struct {
	proc any
	args []any // placeholders are holeT
	pos  int
}

type holeT struct{}

type regexFn struct{ re *regexp.Regexp }

func isFunction(v any) bool {
	switch v.(type) {
	case *lambda, *native, *partialFn, *regexFn:
		return true
	}
	return false
}

func isArr(v any) bool { _, ok := v.(*arr); return ok }

func isNumeric(v any) bool {
	f, ok := v.(float64)
	return ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}

type env struct {
	// vars are the names bound here; few, so a list beats a map.
	vars []binding
	// builtins, in the environment of the built-in functions only.
	builtins map[string]any
	parent   *env
	// fallback resolves names this env does not bind (Options.Lookup);
	// what it finds is kept in vars.
	fallback func(string) (any, bool)
	// funcs are the host functions (Options.Funcs), found after vars and
	// before fallback; what is found is kept in vars.
	funcs map[string]*Func
	// shared converts what fallback finds (Options.Shared).
	shared *Shared
}

type binding struct {
	name string
	v    any
}

func newEnv(parent *env) *env { return &env{parent: parent} }

// newRootEnv returns the environment of an evaluation, allocated with
// room for its first bindings ($, $states, a variable or two).
func newRootEnv() *env {
	block := new(struct {
		env   env
		slots [4]binding
	})
	block.env.parent, block.env.vars = baseEnv, block.slots[:0]
	return &block.env
}

func (e *env) lookup(name string) (any, bool) {
	for x := e; x != nil; x = x.parent {
		for i := range x.vars {
			if x.vars[i].name == name {
				return x.vars[i].v, true
			}
		}
		if v, ok := x.builtins[name]; ok {
			return v, true
		}
		if f, ok := x.funcs[name]; ok {
			n, _ := hostNative(name, f) // wrapped, and checked, when the evaluation began
			x.bind(name, n)
			return n, true
		}
		if x.fallback != nil {
			if v, ok := x.fallback(name); ok {
				iv := x.shared.fromJSON(v, -1, false) // $states is made anew for each evaluation, around its input
				x.bind(name, iv)
				return iv, true
			}
		}
	}
	return nil, false
}

func (e *env) bind(name string, v any) {
	for i := range e.vars {
		if e.vars[i].name == name {
			e.vars[i].v = v
			return
		}
	}
	e.vars = append(e.vars, binding{name, v})
}

// Shared holds objects that several evaluations convert, converted once:
// inputs and their members, and the members of what Options.Lookup finds
// and theirs ($states.input, $states.input.order, ...), by identity, the
// last sharedMax of them. Values of
// the boundary model are never changed once shared, and an evaluation
// changes nothing of the internal values it is given, so one conversion
// serves all. A Shared serves one evaluation at a time. The zero value is
// ready to use; a nil *Shared converts every time.
//
// An evaluation's result that is one of these conversions is given back
// as the object it was converted from, when that reads the same as a new
// one would (its numbers written as JSONata writes them), so a state's
// output that passes on a part of its input neither builds it again nor
// needs converting again by the next state.
type Shared struct {
	keys  [sharedMax]*jsonvalue.Object
	vals  [sharedMax]*jsonvalue.Object
	exact [sharedMax]int8 // 0: not known yet; 1: keys[i] reads as vals[i] would; -1: not
	next  int
}

// original returns the object t was converted from, when it reads the
// same as t converted back would.
func (s *Shared) original(t *jsonvalue.Object) (*jsonvalue.Object, bool) {
	if s == nil {
		return nil, false
	}
	for i, v := range s.vals {
		if v != t || v == nil {
			continue
		}
		if s.exact[i] == 0 {
			s.exact[i] = -1
			if writtenAsJSONata(s.keys[i]) {
				s.exact[i] = 1
			}
		}
		return s.keys[i], s.exact[i] == 1
	}
	return nil, false
}

// writtenAsJSONata reports whether v, a boundary value, is written as its
// conversion to the internal model would be written back: no number in
// it is written other than as JSONata writes it ("1.0", "1e3").
func writtenAsJSONata(v any) bool {
	switch t := v.(type) {
	case nil, bool, string:
		return true
	case jsonvalue.Number:
		f := t.Float64()
		return !math.IsNaN(f) && !math.IsInf(f, 0) && jsNumber(f) == string(t)
	case []any:
		for _, e := range t {
			if !writtenAsJSONata(e) {
				return false
			}
		}
		return true
	case *jsonvalue.Object:
		for _, e := range t.All() {
			if !writtenAsJSONata(e) {
				return false
			}
		}
		return true
	}
	return false
}

// sharedMax bounds the objects a Shared holds.
const sharedMax = 8

// fromJSON converts v, found at depth below what an evaluation is given,
// using and filling the shared conversions; keep says v itself may be
// kept.
func (s *Shared) fromJSON(v any, depth int, keep bool) any {
	o, ok := v.(*jsonvalue.Object)
	if s == nil || !ok || depth > 1 {
		return fromJSON(v)
	}
	for i, k := range s.keys {
		if k == o {
			return s.vals[i]
		}
	}
	c := jsonvalue.NewObject(o.Len())
	for k, e := range o.All() {
		c.Set(k, s.fromJSON(e, depth+1, true))
	}
	if keep {
		s.keys[s.next], s.vals[s.next], s.exact[s.next] = o, c, 0
		s.next = (s.next + 1) % sharedMax
	}
	return c
}

// fromJSON converts a boundary value into the internal model.
func fromJSON(v any) any {
	switch t := v.(type) {
	case nil:
		return null
	case jsonvalue.Number:
		return t.Float64()
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case float64:
		return t
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = fromJSON(e)
		}
		return &arr{v: out}
	case *jsonvalue.Object:
		o := jsonvalue.NewObject(t.Len())
		for k, e := range t.All() {
			o.Set(k, fromJSON(e))
		}
		return o
	case map[string]any:
		return fromJSON(jsonvalue.FromGo(t))
	}
	return v
}

// toJSON converts an internal value to the boundary model.
// toJSONMetered is toJSON counting the slots it builds against m: values
// that share parts (an array holding the same array twice, nested) can
// stand for far more than they take, and become that much here.
func toJSONMetered(v any, m *budget.Meter, s *Shared) (any, error) {
	if o, ok := v.(*jsonvalue.Object); ok {
		if b, ok := s.original(o); ok {
			// Counted as if built again.
			return b, countJSON(o, m)
		}
	}
	if m == nil {
		return toJSON(v), nil
	}
	return toJSONCounted(v, m)
}

// countJSON counts against m what toJSONCounted would count converting v,
// a conversion of a boundary value (no undefined, no functions in it).
func countJSON(v any, m *budget.Meter) error {
	if m == nil {
		return nil
	}
	switch t := v.(type) {
	case *arr:
		if err := m.Bytes(len(t.v) * slotBytes); err != nil {
			return err
		}
		for _, e := range t.v {
			if err := countJSON(e, m); err != nil {
				return err
			}
		}
	case *jsonvalue.Object:
		if err := m.Bytes(t.Len() * 2 * slotBytes); err != nil {
			return err
		}
		for _, e := range t.All() {
			if err := countJSON(e, m); err != nil {
				return err
			}
		}
	}
	return nil
}

func toJSONCounted(v any, m *budget.Meter) (any, error) {
	switch t := v.(type) {
	case *arr:
		if err := m.Bytes(len(t.v) * slotBytes); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(t.v))
		for _, e := range t.v {
			if e == nil || isFunction(e) {
				continue
			}
			c, err := toJSONCounted(e, m)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	case *jsonvalue.Object:
		if err := m.Bytes(t.Len() * 2 * slotBytes); err != nil {
			return nil, err
		}
		o := jsonvalue.NewObject(t.Len())
		for k, e := range t.All() {
			if e == nil || isFunction(e) {
				continue
			}
			c, err := toJSONCounted(e, m)
			if err != nil {
				return nil, err
			}
			o.Set(k, c)
		}
		return o, nil
	}
	return toJSON(v), nil
}

func toJSON(v any) any {
	switch t := v.(type) {
	case nullT:
		return nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil // JSON.stringify writes null
		}
		return jsonvalue.Number(jsNumber(t))
	case *arr:
		out := make([]any, 0, len(t.v))
		for _, e := range t.v {
			if e == nil || isFunction(e) {
				continue
			}
			out = append(out, toJSON(e))
		}
		return out
	case *jsonvalue.Object:
		o := jsonvalue.NewObject(t.Len())
		for k, e := range t.All() {
			if e == nil || isFunction(e) {
				continue
			}
			o.Set(k, toJSON(e))
		}
		return o
	case *lambda, *native, *partialFn, *regexFn:
		return ""
	}
	return v
}

// formatNumber renders a number the way JavaScript's Number#toString does
// after jsonata's toPrecision(15) normalisation.
func formatNumber(f float64) string {
	f, _ = strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	return jsNumber(f)
}

func jsNumber(f float64) string {
	if math.IsInf(f, 1) {
		return "Infinity"
	}
	if math.IsInf(f, -1) {
		return "-Infinity"
	}
	if math.IsNaN(f) {
		return "NaN"
	}
	if f == 0 {
		return "0"
	}
	abs := math.Abs(f)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go: 1e+21 ; JS: 1e+21 ; Go pads exponent to two digits: 1e-07 -> 1e-7
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		exp = strings.TrimLeft(exp[1:], "0")
		if exp == "" {
			exp = "0"
		}
		return mant + "e" + string(sign) + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "undefined"
	case nullT:
		return "null"
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	case *arr:
		return "array"
	case *jsonvalue.Object:
		return "object"
	}
	if isFunction(v) {
		return "function"
	}
	return "unknown"
}

func deepEqual(a, b any) bool {
	switch x := a.(type) {
	case *arr:
		y, ok := b.(*arr)
		if !ok || len(x.v) != len(y.v) {
			return false
		}
		for i := range x.v {
			if !deepEqual(x.v[i], y.v[i]) {
				return false
			}
		}
		return true
	case *jsonvalue.Object:
		y, ok := b.(*jsonvalue.Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for k, v := range x.All() {
			w, ok := y.Get(k)
			if !ok || !deepEqual(v, w) {
				return false
			}
		}
		return true
	case float64, string, bool, nullT, nil:
		return a == b
	}
	return a == b
}
