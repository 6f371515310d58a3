package jsonata

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"stepwise/asl/budget"
	"stepwise/jsonvalue"
)

func itoa(i int) string { return strconv.Itoa(i) }

type evaluator struct {
	depth int
	now   func() time.Time // nil: the wall clock
	// maxDepth bounds recursion; meter counts evaluated nodes and the
	// bytes of values built (nil: no bound).
	maxDepth   int
	meter      *budget.Meter
	limitCodes bool // report a budget's limits as U1001 (Options.limits)
}

func (ev *evaluator) clock() time.Time {
	if ev.now != nil {
		return ev.now()
	}
	return time.Now()
}

type callCtx struct {
	ev    *evaluator
	input any
	env   *env
	pos   int
}

func (c *callCtx) call(fn any, args ...any) (any, error) {
	return c.ev.apply(fn, args, c.input, c.env, c.pos)
}

// Eval evaluates the expression against input (boundary model) with extra
// variable bindings. The bool result reports whether the value is defined.
func (e *Expression) Eval(input any, vars map[string]any) (any, bool, error) {
	return e.evalInternal(fromJSON(input), &Options{Vars: vars})
}

func (e *Expression) evalInternal(in any, o *Options) (res any, defined bool, err error) {
	root := newRootEnv()
	root.bind("$", in)
	ev := &evaluator{maxDepth: maxDepth}
	if o != nil {
		ev.meter = o.Budget
	}
	if o != nil && o.limits != nil {
		ev.maxDepth = min(ev.maxDepth, o.limits.depth)
		if ev.meter == nil && o.limits.steps > 0 {
			ev.meter = budget.New(budget.Limits{Steps: int64(o.limits.steps), Bytes: -1, Time: -1}, nil, nil)
			ev.limitCodes = true
		}
	}
	if o != nil {
		for k, v := range o.Vars {
			if _, ok := o.Funcs[k]; !ok { // a function shadows a variable
				root.bind(k, fromJSON(v))
			}
		}
		for k, f := range o.Funcs {
			if _, err := hostNative(k, f); err != nil {
				return nil, false, err
			}
		}
		root.funcs = o.Funcs
		ev.now = o.Now
		root.fallback = o.Lookup
		root.shared = o.Shared
	}
	if a, ok := in.(*arr); ok {
		w := newSeq(a)
		w.outerWrapper = true
		in = w
	}
	defer func() {
		if r := recover(); r != nil {
			if je, ok := r.(*Error); ok {
				err = je
				return
			}
			panic(r)
		}
	}()
	v, err := ev.eval(e.ast, in, root)
	if err != nil {
		return nil, false, ev.limitErr(err)
	}
	if a, ok := v.(*arr); ok && a.sequence {
		if len(a.v) == 0 {
			return nil, false, nil
		}
		if len(a.v) == 1 && !a.keepSingle {
			v = a.v[0]
		}
	}
	if v == nil {
		return nil, false, nil
	}
	if v, err = toJSONMetered(v, ev.meter, root.shared); err != nil {
		return nil, false, err
	}
	return v, true, nil
}

func (ev *evaluator) eval(n *node, input any, en *env) (any, error) {
	ev.depth++
	defer func() { ev.depth-- }()
	if ev.depth > ev.maxDepth {
		return nil, &Error{Code: "U1001", Position: n.pos, Message: "Stack overflow error"}
	}
	if err := ev.meter.Step(); err != nil {
		return nil, err
	}
	var res any
	var err error
	switch n.typ {
	case ntPath:
		res, err = ev.evalPath(n, input, en)
	case ntBinary:
		res, err = ev.evalBinary(n, input, en)
	case ntUnaryMinus:
		res, err = ev.eval(n.lhs, input, en)
		if err == nil && res != nil {
			if err := outOfRange(res, n); err != nil {
				return nil, err
			}
			if !isNumeric(res) {
				return nil, &Error{Code: "D1002", Position: n.pos, Token: "-", Message: "Cannot negate a non-numeric value"}
			}
			res = -res.(float64)
		}
	case ntArray:
		res, err = ev.evalArray(n, input, en)
	case ntObject:
		res, err = ev.evalGroup(n, input, en)
	case ntName:
		res = lookup(input, n.op)
	case ntString:
		res = n.str
	case ntNumber:
		res = n.num
	case ntValue:
		res = n.val
	case ntWildcard:
		res = wildcard(input)
	case ntDescendant:
		res = descendants(input)
	case ntParent:
		res, _ = en.lookup(n.slot.label)
	case ntCondition:
		c, err := ev.eval(n.cond, input, en)
		if err != nil {
			return nil, err
		}
		if toBool(c) {
			res, err = ev.eval(n.then, input, en)
		} else if n.els != nil {
			res, err = ev.eval(n.els, input, en)
		}
		if err != nil {
			return nil, err
		}
	case ntBlock:
		frame := newEnv(en)
		for _, x := range n.exprs {
			if res, err = ev.eval(x, input, frame); err != nil {
				return nil, err
			}
		}
	case ntBind:
		res, err = ev.eval(n.rhs, input, en)
		if err == nil {
			en.bind(n.lhs.op, res)
		}
	case ntRegex:
		res = &regexFn{re: n.re}
	case ntFunction:
		res, err = ev.evalFunction(n, input, en, nil, false)
	case ntPartial:
		res, err = ev.evalPartial(n, input, en)
	case ntVariable:
		if n.op == "" {
			if a, ok := input.(*arr); ok && a.outerWrapper {
				res = a.v[0]
			} else {
				res = input
			}
		} else {
			res, _ = en.lookup(n.op)
		}
	case ntLambda:
		res = &lambda{node: n, env: en, input: input, params: n.params, sig: n.signature}
	case ntApply:
		res, err = ev.evalApply(n, input, en)
	case ntTransform:
		res = &native{name: "transform", sig: mustSig("<(oa):o>"), fn: func(c *callCtx, args []any) (any, error) {
			return ev.transform(n, args[0], en)
		}}
	case ntSort:
		res, err = ev.evalSort(n, input, en)
	default:
		return nil, &Error{Code: "X0002", Position: n.pos, Message: "unsupported node"}
	}
	if err != nil {
		return nil, err
	}
	for _, f := range n.predicate {
		if res, err = ev.filter(f.rhs, res, en); err != nil {
			return nil, err
		}
	}
	if n.typ != ntPath && n.group != nil {
		if res, err = ev.evalGroup(n.group, res, en); err != nil {
			return nil, err
		}
	}
	if a, ok := res.(*arr); ok && a.sequence && !a.tupleStream {
		if n.keepArray {
			a.keepSingle = true
		}
		if len(a.v) == 0 {
			return nil, nil
		}
		if len(a.v) == 1 && !a.keepSingle {
			return a.v[0], nil
		}
	}
	return res, nil
}

// slotBytes is what one element of an array built by an evaluation is
// counted as against the budget's bytes: its slot, not its JSON text, so
// counting never formats a value.
const slotBytes = 16

// charge counts n values of size bytes each against the budget: their
// bytes and the steps of building them, before they are built.
func (ev *evaluator) charge(n, size int) error {
	if ev.meter == nil {
		return nil
	}
	if err := ev.meter.Bytes(n * size); err != nil {
		return err
	}
	return ev.meter.Steps(n)
}

// argWork is what a built-in's arguments count as in steps: an array's
// items, and a string's length in blocks of 64 bytes.
func argWork(args []any) int {
	n := 0
	for _, a := range args {
		switch t := a.(type) {
		case *arr:
			n += len(t.v)
		case string:
			n += len(t) / 64
		}
	}
	return n
}

// remaining is how many bytes the evaluation may still build.
func (ev *evaluator) remaining() int {
	if ev.meter == nil {
		return math.MaxInt
	}
	return ev.meter.Remaining()
}

// shallowSize is what a value a function returned is counted as: a
// string's length, an array's or object's slots (their members were
// counted when they were built).
func shallowSize(v any) int {
	switch t := v.(type) {
	case string:
		return len(t)
	case *arr:
		return len(t.v) * slotBytes
	case *jsonvalue.Object:
		return t.Len() * 2 * slotBytes
	}
	return 0
}

// limitErr is the error of an evaluation past a limit of its budget. The
// fuzzing and differential tests bound evaluations through Options.limits,
// and expect jsonata.js's own timeout, U1001.
func (ev *evaluator) limitErr(err error) error {
	var be *budget.Error
	if ev.limitCodes && errors.As(err, &be) {
		return &Error{Code: "U1001", Message: "Expression evaluation timeout"}
	}
	return err
}

func lookup(input any, key string) any {
	switch t := input.(type) {
	case *arr:
		res := newSeq()
		for _, x := range t.v {
			r := lookup(x, key)
			if r == nil {
				continue
			}
			if ra, ok := r.(*arr); ok {
				res.v = append(res.v, ra.v...)
			} else {
				res.push(r)
			}
		}
		return res
	case *jsonvalue.Object:
		v, _ := t.Get(key)
		return v
	}
	return nil
}

func flattenInto(dst *arr, v any) {
	if a, ok := v.(*arr); ok {
		for _, x := range a.v {
			flattenInto(dst, x)
		}
		return
	}
	dst.push(v)
}

// outOfRange is jsonata.js's isNumeric failing on an infinite number.
func outOfRange(v any, n *node) error {
	if f, ok := v.(float64); ok && math.IsInf(f, 0) {
		return &Error{Code: "D1001", Position: n.pos, Message: "Number out of range"}
	}
	return nil
}

func wildcard(input any) any {
	res := newSeq()
	if a, ok := input.(*arr); ok && a.outerWrapper && len(a.v) > 0 {
		input = a.v[0]
	}
	push := func(v any) {
		if a, ok := v.(*arr); ok {
			flattenInto(res, a)
		} else {
			res.push(v)
		}
	}
	switch t := input.(type) {
	case *jsonvalue.Object:
		for _, v := range t.All() {
			push(v)
		}
	case *arr:
		// jsonata.js takes Object.keys of the array: its items.
		for _, v := range t.v {
			push(v)
		}
	}
	return res
}

func recurseDesc(input any, res *arr) {
	a, isA := input.(*arr)
	if !isA {
		res.push(input)
	}
	if isA {
		for _, x := range a.v {
			recurseDesc(x, res)
		}
	} else if o, ok := input.(*jsonvalue.Object); ok {
		for _, v := range o.All() {
			recurseDesc(v, res)
		}
	}
}

func descendants(input any) any {
	if input == nil {
		return nil
	}
	res := newSeq()
	recurseDesc(input, res)
	if len(res.v) == 1 {
		return res.v[0]
	}
	return res
}

func (ev *evaluator) evalPath(n *node, input any, en *env) (any, error) {
	var inSeq *arr
	if a, ok := input.(*arr); ok && n.steps[0].typ != ntVariable {
		inSeq = a
	} else {
		inSeq = newSeq(input)
		if input == nil {
			inSeq = newSeq()
			inSeq.v = []any{nil}
		}
	}
	var result any
	isTuple := false
	var tuples *arr
	for i, step := range n.steps {
		if step.tuple {
			isTuple = true
		}
		var err error
		if i == 0 && step.consArray {
			result, err = ev.eval(step, inSeq, en)
		} else if isTuple {
			if tuples, err = ev.evalTupleStep(step, inSeq, tuples, en); err != nil {
				return nil, err
			}
			continue
		} else {
			result, err = ev.evalStep(step, inSeq, en, i == len(n.steps)-1)
		}
		if err != nil {
			return nil, err
		}
		if result == nil {
			break
		}
		ra, ok := result.(*arr)
		if ok && len(ra.v) == 0 {
			break
		}
		if !ok {
			ra = newSeq(result)
		}
		if !step.hasFocus {
			inSeq = ra
		}
	}
	if isTuple && n.tuple {
		if tuples == nil {
			tuples = newSeq()
			tuples.tupleStream = true
		}
		result = tuples
	} else if isTuple {
		for _, s := range n.steps {
			if s.keepArray {
				n.keepSingle = true
			}
		}
		out := newSeq()
		if tuples != nil {
			for _, t := range tuples.v {
				out.push(t.(tuple)["@"])
			}
		}
		result = out
		if n.group != nil {
			return ev.evalGroup(n.group, tuples, en)
		}
	}
	if n.keepSingle {
		if a, ok := result.(*arr); ok {
			if a.cons && !a.sequence {
				result = newSeq(a.v...)
			}
			result.(*arr).keepSingle = true
		} else if result != nil {
			s := newSeq(result)
			s.keepSingle = true
			result = s
		}
	}
	if n.group != nil {
		return ev.evalGroup(n.group, result, en)
	}
	return result, nil
}

type tuple map[string]any

func frameFromTuple(en *env, t tuple) *env {
	f := newEnv(en)
	for k, v := range t {
		f.bind(k, v)
	}
	return f
}

func (ev *evaluator) evalStages(stages []*node, res any, en *env) (any, error) {
	var err error
	for _, st := range stages {
		if st.typ == ntIndexRaw {
			if a, ok := res.(*arr); ok {
				for i, t := range a.v {
					if tt, ok := t.(tuple); ok {
						tt[st.op] = float64(i)
					}
				}
			}
			continue
		}
		if res, err = ev.filter(st.rhs, res, en); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (ev *evaluator) evalTupleStep(step *node, input *arr, tuples *arr, en *env) (*arr, error) {
	if step.typ == ntSort {
		var res any
		var err error
		if tuples != nil {
			if res, err = ev.evalSort(step, tuples, en); err != nil {
				return nil, err
			}
			if ra, ok := res.(*arr); ok {
				ra.tupleStream = true
			}
		} else {
			sorted, err := ev.evalSort(step, input, en)
			if err != nil {
				return nil, err
			}
			out := newSeq()
			out.tupleStream = true
			if sa, ok := sorted.(*arr); ok {
				for i, it := range sa.v {
					t := tuple{"@": it}
					if step.hasIndex {
						t[step.index] = float64(i)
					}
					out.push(t)
				}
			}
			res = out
		}
		if res, err = ev.evalStages(step.stages, res, en); err != nil {
			return nil, err
		}
		ra, _ := res.(*arr)
		return ra, nil
	}
	if tuples == nil {
		tuples = newSeq()
		tuples.tupleStream = true
		for _, it := range input.v {
			tuples.push(tuple{"@": it})
		}
	}
	result := newSeq()
	result.tupleStream = true
	for _, tv := range tuples.v {
		tb := tv.(tuple)
		res, err := ev.eval(step, tb["@"], frameFromTuple(en, tb))
		if err != nil {
			return nil, err
		}
		if res == nil {
			continue
		}
		ra, ok := res.(*arr)
		if !ok {
			ra = &arr{v: []any{res}}
		}
		for bb, x := range ra.v {
			t := tuple{}
			for k, v := range tb {
				t[k] = v
			}
			if ra.tupleStream {
				for k, v := range x.(tuple) {
					t[k] = v
				}
			} else {
				if step.hasFocus {
					t[step.focus] = x
					t["@"] = tb["@"]
				} else {
					t["@"] = x
				}
				if step.hasIndex {
					t[step.index] = float64(bb)
				}
				if step.ancestor != nil {
					t[step.ancestor.label] = tb["@"]
				}
			}
			result.push(t)
		}
	}
	res, err := ev.evalStages(step.stages, result, en)
	if err != nil {
		return nil, err
	}
	ra, _ := res.(*arr)
	if ra == nil {
		ra = newSeq()
		ra.tupleStream = true
	}
	return ra, nil
}

func (ev *evaluator) evalStep(step *node, input *arr, en *env, last bool) (any, error) {
	if step.typ == ntSort {
		res, err := ev.evalSort(step, input, en)
		if err != nil {
			return nil, err
		}
		for _, st := range step.stages {
			if res, err = ev.filter(st.rhs, res, en); err != nil {
				return nil, err
			}
		}
		return res, nil
	}
	result := newSeq()
	for _, item := range input.v {
		res, err := ev.eval(step, item, en)
		if err != nil {
			return nil, err
		}
		for _, st := range step.stages {
			if st.typ == ntIndexRaw {
				return nil, &Error{Code: "X0001", Position: st.pos, Message: "index binding not implemented"}
			}
			if res, err = ev.filter(st.rhs, res, en); err != nil {
				return nil, err
			}
		}
		if res != nil {
			result.push(res)
		}
	}
	out := newSeq()
	if last && len(result.v) == 1 {
		if a, ok := result.v[0].(*arr); ok && !a.sequence {
			return a, nil
		}
	}
	for _, r := range result.v {
		a, ok := r.(*arr)
		if !ok || a.cons {
			out.push(r)
		} else {
			out.v = append(out.v, a.v...)
		}
	}
	if err := ev.meter.Bytes(len(out.v) * slotBytes); err != nil {
		return nil, err
	}
	return out, nil
}

func (ev *evaluator) filter(pred *node, input any, en *env) (any, error) {
	results := newSeq()
	if a, ok := input.(*arr); ok && a.tupleStream {
		results.tupleStream = true
	}
	in, ok := input.(*arr)
	if !ok {
		in = newSeq(input)
		if input == nil {
			in = newSeq()
			if pred.typ != ntNumber {
				// jsonata.js filters the sequence [undefined]: the predicate
				// runs once, and its errors surface.
				if _, err := ev.eval(pred, nil, en); err != nil {
					return nil, err
				}
			}
		}
	}
	if pred.typ == ntNumber {
		idx := int(math.Floor(pred.num))
		if idx < 0 {
			idx += len(in.v)
		}
		if idx >= 0 && idx < len(in.v) {
			item := in.v[idx]
			if a, ok := item.(*arr); ok {
				return a, nil
			}
			results.push(item)
		}
		return results, nil
	}
	for i, item := range in.v {
		ctx, fenv := item, en
		if t, ok := item.(tuple); ok && in.tupleStream {
			ctx, fenv = t["@"], frameFromTuple(en, t)
		}
		res, err := ev.eval(pred, ctx, fenv)
		if err != nil {
			return nil, err
		}
		if isNumeric(res) {
			res = newSeq(res)
		}
		if a, ok := res.(*arr); ok && isArrayOfNumbers(a) && len(a.v) > 0 {
			for _, x := range a.v {
				ii := int(math.Floor(x.(float64)))
				if ii < 0 {
					ii += len(in.v)
				}
				if ii == i {
					results.push(item)
				}
			}
		} else if toBool(res) {
			results.push(item)
		}
	}
	return results, nil
}

func isArrayOfNumbers(a *arr) bool {
	for _, x := range a.v {
		if !isNumeric(x) {
			return false
		}
	}
	return true
}

func isArrayOfStrings(a *arr) bool {
	for _, x := range a.v {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}

func (ev *evaluator) evalArray(n *node, input any, en *env) (any, error) {
	result := &arr{}
	for _, item := range n.exprs {
		v, err := ev.eval(item, input, en)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if item.typ == ntArray {
			result.push(v)
		} else if a, ok := v.(*arr); ok {
			result.v = append(result.v, a.v...)
		} else {
			result.push(v)
		}
	}
	if n.consArray {
		result.cons = true
	}
	if err := ev.meter.Bytes(len(result.v) * slotBytes); err != nil {
		return nil, err
	}
	return result, nil
}

func (ev *evaluator) evalGroup(n *node, input any, en *env) (any, error) {
	type entry struct {
		data any
		idx  int
	}
	groups := map[string]*entry{}
	var order []string
	in, ok := input.(*arr)
	if !ok {
		in = newSeq(input)
	}
	items := in.v
	if len(items) == 0 {
		items = []any{nil}
	}
	reduce := in.tupleStream
	for _, item := range items {
		ctx, fenv := item, en
		if t, ok := item.(tuple); ok && reduce {
			ctx, fenv = t["@"], frameFromTuple(en, t)
		}
		for pi, pr := range n.pairs {
			k, err := ev.eval(pr.k, ctx, fenv)
			if err != nil {
				return nil, err
			}
			if k == nil {
				continue
			}
			ks, ok := k.(string)
			if !ok {
				return nil, &Error{Code: "T1003", Position: n.pos, Message: "Key in object structure must evaluate to a string; got: " + typeOf(k)}
			}
			if g, ok := groups[ks]; ok {
				if g.idx != pi {
					return nil, &Error{Code: "D1009", Position: n.pos, Message: "Multiple key definitions evaluate to same key: " + ks}
				}
				g.data = fnAppend(g.data, item)
			} else {
				groups[ks] = &entry{data: item, idx: pi}
				order = append(order, ks)
			}
		}
	}
	if err := ev.meter.Bytes(len(order) * 2 * slotBytes); err != nil {
		return nil, err
	}
	result := jsonvalue.NewObject(len(order))
	for _, k := range order {
		g := groups[k]
		ctx, fenv := g.data, en
		if reduce {
			t := reduceTuples(g.data)
			ctx = t["@"]
			delete(t, "@")
			fenv = frameFromTuple(en, t)
		}
		v, err := ev.eval(n.pairs[g.idx].v, ctx, fenv)
		if err != nil {
			return nil, err
		}
		if v != nil {
			result.Set(k, v)
		}
	}
	return result, nil
}

func reduceTuples(data any) tuple {
	if t, ok := data.(tuple); ok {
		c := tuple{}
		for k, v := range t {
			c[k] = v
		}
		return c
	}
	a := data.(*arr)
	res := tuple{}
	for k, v := range a.v[0].(tuple) {
		res[k] = v
	}
	for _, x := range a.v[1:] {
		for k, v := range x.(tuple) {
			res[k] = fnAppend(res[k], v)
		}
	}
	return res
}

func fnAppend(a, b any) any {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := &arr{}
	if x, ok := a.(*arr); ok {
		out.v = append(out.v, x.v...)
	} else {
		out.v = append(out.v, a)
	}
	if x, ok := b.(*arr); ok {
		out.v = append(out.v, x.v...)
	} else {
		out.v = append(out.v, b)
	}
	return out
}

func toBool(v any) bool {
	b := fnBoolean(v)
	bb, _ := b.(bool)
	return bb
}

func fnBoolean(v any) any {
	switch t := v.(type) {
	case nil:
		return nil
	case *arr:
		if len(t.v) == 1 {
			return fnBoolean(t.v[0])
		}
		for _, x := range t.v {
			if toBool(x) {
				return true
			}
		}
		return false
	case string:
		return t != ""
	case float64:
		return t != 0
	case bool:
		return t
	case *jsonvalue.Object:
		return t.Len() > 0
	}
	return false
}

func (ev *evaluator) evalBinary(n *node, input any, en *env) (any, error) {
	lhs, err := ev.eval(n.lhs, input, en)
	if err != nil {
		return nil, err
	}
	op := n.op
	if op == "and" || op == "or" {
		l := toBool(lhs)
		if op == "and" && !l {
			return false, nil
		}
		if op == "or" && l {
			return true, nil
		}
		rhs, err := ev.eval(n.rhs, input, en)
		if err != nil {
			return nil, err
		}
		return toBool(rhs), nil
	}
	rhs, err := ev.eval(n.rhs, input, en)
	if err != nil {
		return nil, err
	}
	switch op {
	case "+", "-", "*", "/", "%":
		// As jsonata.js: an infinite operand is D1001, NaN is not a number.
		if err := outOfRange(lhs, n); err != nil {
			return nil, err
		}
		if lhs != nil && !isNumeric(lhs) {
			return nil, &Error{Code: "T2001", Position: n.pos, Token: op, Message: "The left side of the " + op + " operator must evaluate to a number"}
		}
		if err := outOfRange(rhs, n); err != nil {
			return nil, err
		}
		if rhs != nil && !isNumeric(rhs) {
			return nil, &Error{Code: "T2002", Position: n.pos, Token: op, Message: "The right side of the " + op + " operator must evaluate to a number"}
		}
		if lhs == nil || rhs == nil {
			return nil, nil
		}
		l, r := lhs.(float64), rhs.(float64)
		var res float64
		switch op {
		case "+":
			res = l + r
		case "-":
			res = l - r
		case "*":
			res = l * r
		case "/":
			res = l / r
		case "%":
			res = math.Mod(l, r)
		}
		return res, nil
	case "=", "!=":
		if lhs == nil || rhs == nil {
			return false, nil
		}
		eq := deepEqual(lhs, rhs)
		if op == "!=" {
			return !eq, nil
		}
		return eq, nil
	case "<", "<=", ">", ">=":
		lc := lhs == nil || isStr(lhs) || isNum(lhs)
		rc := rhs == nil || isStr(rhs) || isNum(rhs)
		if !lc || !rc {
			return nil, &Error{Code: "T2010", Position: n.pos, Token: op, Message: "The expressions either side of operator " + op + " must evaluate to numeric or string values"}
		}
		if lhs == nil || rhs == nil {
			return nil, nil
		}
		if isStr(lhs) != isStr(rhs) {
			return nil, &Error{Code: "T2009", Position: n.pos, Token: op, Message: "The values either side of operator " + op + " must be of the same data type"}
		}
		var c int
		if isStr(lhs) {
			ls, rs := lhs.(string), rhs.(string)
			c = cmpStr(ls, rs)
		} else {
			l, r := lhs.(float64), rhs.(float64)
			switch {
			case l < r:
				c = -1
			case l > r:
				c = 1
			}
		}
		switch op {
		case "<":
			return c < 0, nil
		case "<=":
			return c <= 0, nil
		case ">":
			return c > 0, nil
		default:
			return c >= 0, nil
		}
	case "&":
		ls, rs := "", ""
		if lhs != nil {
			if ls, err = fnString(lhs, false, ev.remaining()); err != nil {
				return nil, err
			}
		}
		if rhs != nil {
			if rs, err = fnString(rhs, false, ev.remaining()); err != nil {
				return nil, err
			}
		}
		if err := ev.meter.Bytes(len(ls) + len(rs)); err != nil {
			return nil, err
		}
		return ls + rs, nil
	case "..":
		if lhs != nil && (!isNumeric(lhs) || lhs.(float64) != math.Trunc(lhs.(float64))) {
			return nil, &Error{Code: "T2003", Position: n.pos, Token: op, Message: "The left side of the range operator (..) must evaluate to an integer"}
		}
		if rhs != nil && (!isNumeric(rhs) || rhs.(float64) != math.Trunc(rhs.(float64))) {
			return nil, &Error{Code: "T2004", Position: n.pos, Token: op, Message: "The right side of the range operator (..) must evaluate to an integer"}
		}
		if lhs == nil || rhs == nil {
			return nil, nil
		}
		l, r := lhs.(float64), rhs.(float64)
		if l > r {
			return nil, nil
		}
		if r-l+1 > 1e7 {
			return nil, &Error{Code: "D2014", Position: n.pos, Token: op, Message: "The size of the sequence allocated by the range operator (..) must not exceed 1e7"}
		}
		if err := ev.charge(int(r-l+1), slotBytes); err != nil {
			return nil, err
		}
		out := &arr{v: make([]any, 0, int(r-l+1))}
		for x := l; x <= r; x++ {
			out.v = append(out.v, x)
		}
		return out, nil
	case "in":
		if lhs == nil || rhs == nil {
			return false, nil
		}
		ra, ok := rhs.(*arr)
		if !ok {
			ra = &arr{v: []any{rhs}}
		}
		for _, x := range ra.v {
			if x == lhs {
				return true, nil
			}
		}
		return false, nil
	}
	return nil, &Error{Code: "X0003", Position: n.pos, Token: op, Message: "unknown operator"}
}

func isStr(v any) bool { _, ok := v.(string); return ok }
func isNum(v any) bool { _, ok := v.(float64); return ok }

// cmpStr compares strings by UTF-16 code units like JavaScript.
func cmpStr(a, b string) int {
	ua, ub := utf16Units(a), utf16Units(b)
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

func (ev *evaluator) evalFunction(n *node, input any, en *env, applyTo any, hasApply bool) (any, error) {
	proc, err := ev.eval(n.proc, input, en)
	if err != nil {
		return nil, err
	}
	name := ""
	if n.proc.typ == ntPath && len(n.proc.steps) > 0 {
		name = n.proc.steps[0].op
	} else if n.proc.typ == ntVariable {
		name = n.proc.op
	}
	if proc == nil && n.proc.typ == ntPath && len(n.proc.steps) > 0 {
		if _, ok := en.lookup(name); ok {
			return nil, &Error{Code: "T1005", Position: n.pos, Token: name, Message: "Attempted to invoke a non-function. Did you mean $" + name + "?"}
		}
	}
	var args []any
	if hasApply {
		args = append(args, applyTo)
	}
	for _, a := range n.exprs {
		v, err := ev.eval(a, input, en)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	res, err := ev.apply(proc, args, input, en, n.pos)
	if err != nil {
		if je, ok := err.(*Error); ok && je.Token == "" {
			je.Token = name
		}
		return nil, err
	}
	return res, nil
}

func (ev *evaluator) evalPartial(n *node, input any, en *env) (any, error) {
	var args []any
	for _, a := range n.exprs {
		if a.typ == ntPlaceholder {
			args = append(args, holeT{})
			continue
		}
		v, err := ev.eval(a, input, en)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	proc, err := ev.eval(n.proc, input, en)
	if err != nil {
		return nil, err
	}
	name := ""
	if n.proc.typ == ntPath && len(n.proc.steps) > 0 {
		name = n.proc.steps[0].op
	} else if n.proc.typ == ntVariable {
		name = n.proc.op
	}
	if proc == nil && n.proc.typ == ntPath {
		if _, ok := en.lookup(name); ok {
			return nil, &Error{Code: "T1007", Position: n.pos, Token: name, Message: "Attempted to partially apply a non-function. Did you mean $" + name + "?"}
		}
	}
	if !isFunction(proc) {
		return nil, &Error{Code: "T1008", Position: n.pos, Token: name, Message: "Attempted to partially apply a non-function"}
	}
	return &partialFn{proc: proc, args: args, pos: n.pos}, nil
}

func arity(f any) int {
	switch t := f.(type) {
	case *lambda:
		return len(t.params)
	case *native:
		if t.sig != nil {
			c := 0
			for _, p := range t.sig.params {
				if !strings.HasSuffix(p.regex, "?") {
					c++
				}
			}
			return max(c, 1)
		}
		return 1
	case *partialFn:
		c := 0
		for _, a := range t.args {
			if _, ok := a.(holeT); ok {
				c++
			}
		}
		return c
	case *regexFn:
		return 1
	}
	return 0
}

func (ev *evaluator) apply(proc any, args []any, input any, en *env, pos int) (any, error) {
	switch f := proc.(type) {
	case *lambda:
		if f.sig != nil {
			var err error
			if args, err = f.sig.validate(args, input, pos); err != nil {
				return nil, err
			}
		}
		frame := newEnv(f.env)
		for i, p := range f.params {
			var v any
			if i < len(args) {
				v = args[i]
			}
			frame.bind(p, v)
		}
		return ev.eval(f.node.body, f.input, frame)
	case *native:
		if f.sig != nil {
			var err error
			if args, err = f.sig.validate(args, input, pos); err != nil {
				return nil, err
			}
		}
		if ev.meter != nil {
			// A built-in's work grows with its arguments (a sort, a
			// join, a regular expression over a long string): it counts
			// as steps before it runs.
			if err := ev.meter.Steps(argWork(args)); err != nil {
				return nil, err
			}
		}
		res, err := f.fn(&callCtx{ev: ev, input: input, env: en, pos: pos}, args)
		if err == nil && ev.meter != nil {
			err = ev.meter.Bytes(shallowSize(res))
		}
		return res, err
	case *partialFn:
		full := make([]any, len(f.args))
		j := 0
		for i, a := range f.args {
			if _, ok := a.(holeT); ok {
				if j < len(args) {
					full[i] = args[j]
				}
				j++
			} else {
				full[i] = a
			}
		}
		return ev.apply(f.proc, full, input, en, pos)
	case *regexFn:
		var s any
		if len(args) > 0 {
			s = args[0]
		}
		str, ok := s.(string)
		if !ok {
			return nil, nil
		}
		return regexMatchObj(f.re, str, 0), nil
	}
	return nil, &Error{Code: "T1006", Position: pos, Message: "Attempted to invoke a non-function"}
}

func regexMatchObj(re interface {
	FindStringSubmatchIndex(string) []int
}, s string, offset int) any {
	if offset > len(s) {
		return nil
	}
	loc := re.FindStringSubmatchIndex(s[offset:])
	if loc == nil {
		return nil
	}
	o := jsonvalue.NewObject(4)
	o.Set("match", s[offset+loc[0]:offset+loc[1]])
	o.Set("start", float64(jsonvalue.UTF16Len(s[:offset+loc[0]])))
	o.Set("end", float64(jsonvalue.UTF16Len(s[:offset+loc[1]])))
	groups := &arr{}
	for i := 2; i < len(loc); i += 2 {
		if loc[i] < 0 {
			groups.push("")
		} else {
			groups.push(s[offset+loc[i] : offset+loc[i+1]])
		}
	}
	o.Set("groups", groups)
	next := offset + loc[1]
	if loc[1] == loc[0] {
		next++
	}
	o.Set("next", &native{name: "next", fn: func(c *callCtx, args []any) (any, error) {
		return regexMatchObj(re, s, next), nil
	}})
	return o
}

func (ev *evaluator) evalApply(n *node, input any, en *env) (any, error) {
	lhs, err := ev.eval(n.lhs, input, en)
	if err != nil {
		return nil, err
	}
	if n.rhs.typ == ntFunction {
		return ev.evalFunction(n.rhs, input, en, lhs, true)
	}
	fn, err := ev.eval(n.rhs, input, en)
	if err != nil {
		return nil, err
	}
	if !isFunction(fn) {
		return nil, &Error{Code: "T2006", Position: n.pos, Token: "~>", Message: "The right side of the function application operator ~> must be a function"}
	}
	if isFunction(lhs) {
		f1, f2 := lhs, fn
		return &native{name: "compose", sig: nil, fn: func(c *callCtx, args []any) (any, error) {
			r, err := c.ev.apply(f1, args, c.input, c.env, n.pos)
			if err != nil {
				return nil, err
			}
			return c.ev.apply(f2, []any{r}, c.input, c.env, n.pos)
		}}, nil
	}
	return ev.apply(fn, []any{lhs}, input, en, n.pos)
}

func (ev *evaluator) evalSort(n *node, input any, en *env) (any, error) {
	in, ok := input.(*arr)
	if !ok {
		if input == nil {
			return nil, nil
		}
		in = newSeq(input)
	}
	items := append([]any(nil), in.v...)
	var sortErr error
	keys := make([][]any, len(items))
	for i, it := range items {
		keys[i] = make([]any, len(n.terms))
		ctx, fenv := it, en
		if tt, ok := it.(tuple); ok && in.tupleStream {
			ctx, fenv = tt["@"], frameFromTuple(en, tt)
		}
		for j, t := range n.terms {
			v, err := ev.eval(t.expr, ctx, fenv)
			if err != nil {
				return nil, err
			}
			if v != nil && !isStr(v) && !isNumeric(v) {
				return nil, &Error{Code: "T2008", Position: n.pos, Message: "The expressions within an order-by clause must evaluate to numeric or string values"}
			}
			keys[i][j] = v
		}
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := keys[idx[a]], keys[idx[b]]
		for j, t := range n.terms {
			x, y := ka[j], kb[j]
			var c int
			switch {
			case x == nil && y == nil:
				c = 0
				continue
			case x == nil:
				return false
			case y == nil:
				return true
			}
			if isStr(x) != isStr(y) {
				sortErr = &Error{Code: "T2007", Position: n.pos, Message: "Type mismatch within order-by clause. All values must be of the same type"}
				return false
			}
			if isStr(x) {
				c = cmpStr(x.(string), y.(string))
			} else if x.(float64) < y.(float64) {
				c = -1
			} else if x.(float64) > y.(float64) {
				c = 1
			}
			if c == 0 {
				continue
			}
			if t.desc {
				c = -c
			}
			return c < 0
		}
		return false
	})
	if sortErr != nil {
		return nil, sortErr
	}
	out := newSeq()
	for _, i := range idx {
		out.push(items[i])
	}
	return out, nil
}

func (ev *evaluator) transform(n *node, obj any, en *env) (any, error) {
	if obj == nil {
		return nil, nil
	}
	result := deepClone(obj)
	matches, err := ev.eval(n.pattern, result, en)
	if err != nil {
		return nil, err
	}
	if matches == nil {
		return result, nil
	}
	ma, ok := matches.(*arr)
	if !ok {
		ma = &arr{v: []any{matches}}
	}
	for _, m := range ma.v {
		mo, isObj := m.(*jsonvalue.Object)
		upd, err := ev.eval(n.update, m, en)
		if err != nil {
			return nil, err
		}
		if upd != nil {
			uo, ok := upd.(*jsonvalue.Object)
			if !ok {
				return nil, &Error{Code: "T2011", Position: n.update.pos, Message: "The insert/update clause of the transform expression must evaluate to an object"}
			}
			if isObj {
				for k, v := range uo.All() {
					if reaches(v, mo) {
						// jsonata.js builds the cycle and fails writing it out.
						return nil, &Error{Code: "TypeError", Position: n.update.pos, Message: "Converting circular structure to JSON"}
					}
					mo.Set(k, v)
				}
			}
		}
		if n.delete != nil {
			del, err := ev.eval(n.delete, m, en)
			if err != nil {
				return nil, err
			}
			if del != nil {
				da, ok := del.(*arr)
				if !ok {
					da = &arr{v: []any{del}}
				}
				if !isArrayOfStrings(da) {
					return nil, &Error{Code: "T2012", Position: n.delete.pos, Message: "The delete clause of the transform expression must evaluate to a string or array of strings"}
				}
				if isObj {
					for _, k := range da.v {
						mo.Delete(k.(string))
					}
				}
			}
		}
	}
	return result, nil
}

// reaches reports whether target is v or is inside it.
func reaches(v any, target *jsonvalue.Object) bool {
	switch t := v.(type) {
	case *jsonvalue.Object:
		if t == target {
			return true
		}
		for _, x := range t.All() {
			if reaches(x, target) {
				return true
			}
		}
	case *arr:
		for _, x := range t.v {
			if reaches(x, target) {
				return true
			}
		}
	}
	return false
}

// deepClone copies a value the way jsonata.js clones, through $string and
// JSON.parse: numbers keep 15 significant digits.
func deepClone(v any) any {
	switch t := v.(type) {
	case float64:
		if f, err := strconv.ParseFloat(strconv.FormatFloat(t, 'g', 15, 64), 64); err == nil {
			return f
		}
	case *arr:
		c := *t
		c.v = make([]any, len(t.v))
		for i, x := range t.v {
			c.v[i] = deepClone(x)
		}
		return &c
	case *jsonvalue.Object:
		o := jsonvalue.NewObject(t.Len())
		for k, x := range t.All() {
			o.Set(k, deepClone(x))
		}
		return o
	}
	return v
}

// EvalUndefined evaluates the expression with an undefined input.
func (e *Expression) EvalUndefined(vars map[string]any) (any, bool, error) {
	return e.evalInternal(nil, &Options{Vars: vars})
}

// maxDepth bounds evaluator recursion (JSONata reports U1001). There is no
// tail-call optimisation, so deep but legal recursion consumes Go stack.
const maxDepth = 100000
