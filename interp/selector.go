package interp

import (
	"hash/fnv"
	"math/rand/v2"
	"time"

	"stepwise/asl"
	"stepwise/asl/budget"
	"stepwise/asl/jsonata"
	"stepwise/asl/jsonatafn"
	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/jsonvalue"
)

// itemSelector is a Map state's ItemSelector, ready to make the input of
// any item: one evaluator for inline and distributed Maps, which differ
// only in where what it reads comes from. An inline Map evaluates it on
// the execution's step (frame.selector: the live context object,
// variables, random source and budget); a distributed Map after the
// state's step, in any goroutine, on a snapshot of them
// (frame.selectorSnapshot), its random numbers derived from the map run
// and the item's index.
type itemSelector struct {
	state     *asl.State
	enteredID int64
	jsonata   bool
	input     any // the state's input (JSONPath: its effective input)
	// context is the context object with mapCtx as its Map member.
	context func(mapCtx *jsonvalue.Object) any
	vars    func(name string) (any, bool)
	now     time.Time
	// source returns, for item i, the random source of its evaluation and
	// its budgets.
	source func(i int64) (rnd func() *rand.Rand, funcs map[string]*jsonata.Func, meter func() *budget.Meter)
	limit  int // the payload limit of an input
}

// eval is the input of item i, value: the ItemSelector evaluated with the
// item as $$.Map.Item ($states.context.Map.Item). buf receives the
// input's JSON text; an input over the payload limit fails the state.
func (sel *itemSelector) eval(i int64, value any, buf *[]byte) (any, error) {
	item := jsonvalue.NewObject(2)
	item.Set("Index", jsonvalue.NumberFromInt(i))
	item.Set("Value", value)
	mapCtx := jsonvalue.NewObject(1)
	mapCtx.Set("Item", item)
	context := func() any { return sel.context(mapCtx) }
	rnd, funcs, meter := sel.source(i)
	var in any
	var err error
	if sel.jsonata {
		env := &payload.JSONataEnv{Input: sel.input, Context: context, Vars: sel.vars,
			Now: func() time.Time { return sel.now }, Funcs: funcs, BudgetFunc: meter}
		in, err = sel.state.JSONata.ItemSelector.Eval(env, "ItemSelector")
	} else {
		in, err = sel.state.ItemSelector.Eval(&jsonpath.Env{Input: sel.input, ContextFunc: context, Vars: sel.vars, Rand: rnd, BudgetFunc: meter})
	}
	if err != nil {
		return nil, err
	}
	var ok bool
	if *buf, ok = jsonvalue.AppendLimit((*buf)[:0], in, sel.limit); !ok {
		return nil, dataLimit(sel.state)
	}
	return in, nil
}

// newSelector is the frame's ItemSelector with what every evaluation
// reads alike.
func (f *frame) newSelector(x *Execution, inJSONata bool) *itemSelector {
	sel := &itemSelector{state: f.state, enteredID: f.enteredID, jsonata: inJSONata, input: f.effInput, now: x.now,
		limit: x.Opts.PayloadLimit}
	if inJSONata {
		sel.input = f.rawInput
	}
	return sel
}

// selector is the ItemSelector of an inline Map, evaluated on the
// execution's step: it reads the frame's context object and variables as
// they are, and draws on the execution's random source and budget.
func (f *frame) selector(x *Execution) *itemSelector {
	if f.liveSel == nil {
		s := f.state
		sel := f.newSelector(x, s.JSONata != nil && s.JSONata.ItemSelector != nil)
		sel.context = func(mapCtx *jsonvalue.Object) any { return x.contextObject(f, mapCtx) }
		sel.vars = f.vars.get
		sel.source = func(int64) (func() *rand.Rand, map[string]*jsonata.Func, func() *budget.Meter) {
			return x.rand, x.jsonataFuncs(), x.meterFunc()
		}
		f.liveSel = sel
	}
	f.liveSel.now = x.now
	return f.liveSel
}

// selectorSnapshot is the ItemSelector of a distributed Map: a snapshot
// of what it reads (the state's input, its visible variables, the context
// object), not the execution, so that it is evaluated later in any
// goroutine. Item i's random numbers derive from the execution, the map
// run and i, and each evaluation has budgets of its own.
func (f *frame) selectorSnapshot(x *Execution, inJSONata bool) *itemSelector {
	sel := f.newSelector(x, inJSONata)
	ctx, _ := x.contextObject(f, nil).(*jsonvalue.Object)
	sel.context = func(mapCtx *jsonvalue.Object) any {
		c := jsonvalue.NewObject(5)
		if ctx != nil {
			c = ctx.Clone()
		}
		c.Set("Map", mapCtx)
		return c
	}
	vars := map[string]any{}
	for sc := f.vars; sc != nil; sc = sc.parent {
		for k, v := range sc.vars {
			if _, shadowed := vars[k]; !shadowed {
				vars[k] = v
			}
		}
	}
	sel.vars = func(name string) (any, bool) { v, ok := vars[name]; return v, ok }
	h := fnv.New64a()
	h.Write([]byte(x.Info.ExecutionArn))
	h.Write([]byte(f.mapRunArn))
	seed := h.Sum64()
	limits := x.Opts.Limits
	sel.source = func(i int64) (func() *rand.Rand, map[string]*jsonata.Func, func() *budget.Meter) {
		draws := uint64(0)
		rnd := func() *rand.Rand {
			draws++
			return rand.New(rand.NewPCG(seed^uint64(i), draws))
		}
		src := budget.NewSource(limits, nil, nil)
		meter := func() *budget.Meter {
			m := &budget.Meter{}
			src.Init(m)
			return m
		}
		return rnd, jsonatafn.Funcs(jsonatafn.Env{Rand: func() float64 { return rnd().Float64() }}), meter
	}
	return sel
}
