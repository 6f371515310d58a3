package jsonata

import (
	"testing"

	"stepwise/asl/budget"
	"stepwise/jsonvalue"
)

// TestReadsInput: only expressions sure to read nothing of their input are
// evaluated without it.
func TestReadsInput(t *testing.T) {
	for src, want := range map[string]bool{
		`1 + 2`:                         false,
		`$i + 1`:                        false,
		`$i < $states.input.n`:          false,
		`$states.input.order`:           false,
		`$a ? "x" : -$b`:                false,
		`$`:                             true,
		`$$`:                            true,
		`$$.a`:                          true,
		`a`:                             true,
		`$.a`:                           true,
		`$states.input.items[qty > 1]`:  true,
		`$states.input.items[0]`:        true,
		`$string()`:                     true,
		`$string($i)`:                   true,
		`*`:                             true,
		`**`:                            true,
		`$x.(a)`:                        true,
		`$states.input{"k": v}`:         true,
		`[$i]`:                          true,
		`($x := 1; $x)`:                 true,
		`function($v) { $v }`:           true,
		`$states.input.items.sku`:       false,
		`$states.input.items@$o`:        true,
		`$states.input.items#$j`:        true,
		`$states.input.items^(price)`:   true,
		`$exists($states.input.absent)`: true,
	} {
		e, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if e.readsInput != want {
			t.Errorf("%s: readsInput %v, want %v", src, e.readsInput, want)
		}
	}
}

// TestNoInputSameResult: an expression that reads no input gives the same
// result whatever the input, undefined included.
func TestNoInputSameResult(t *testing.T) {
	for _, src := range []string{`$i + 1`, `$states.input.n`, `$states.input.items.sku`, `$states.input.missing`} {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]any{"i": 1.0, "states": map[string]any{"input": map[string]any{"n": 3.0, "items": []any{map[string]any{"sku": "A"}}}}}
		for _, in := range []any{nil, []any{1.0, 2.0}, map[string]any{"a": 1.0}} {
			got, ok, err := e.EvalWith(in, in != nil, &Options{Vars: vars})
			want, wok, werr := e.evalInternal(fromJSON(in), &Options{Vars: vars})
			if ok != wok || (err == nil) != (werr == nil) || jsonvalue.String(got) != jsonvalue.String(want) {
				t.Errorf("%s on %v: %v %v %v, want %v %v %v", src, in, got, ok, err, want, wok, werr)
			}
		}
	}
}

// TestHostFuncsBoundLazily: host functions, found when first named, still
// shadow variables of the same name and are shadowed by a binding made
// later.
func TestHostFuncsBoundLazily(t *testing.T) {
	f := &Func{Fn: func([]any) (any, error) { return "func", nil }}
	for src, want := range map[string]string{
		`$f()`:                `"func"`,
		`[$f := "bound", $f]`: `["bound","bound"]`,
		`($f := function() {"inner"}; $f()) & $f()`: `"innerfunc"`,
	} {
		e, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		got, _, err := e.EvalWith(nil, false, &Options{Vars: map[string]any{"f": "var"}, Funcs: map[string]*Func{"f": f}})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if s := jsonvalue.String(got); s != want {
			t.Errorf("%s: %s, want %s", src, s, want)
		}
	}
}

// TestSharedConversions: evaluations that share their conversions give
// what each gives alone, whatever the ones before did with the values.
func TestSharedConversions(t *testing.T) {
	in, err := jsonvalue.ParseString(`{"items": [{"v": 1}], "one": [7], "o": {"a": [1, [2]], "b": 1.50}}`)
	if err != nil {
		t.Fatal(err)
	}
	srcs := []string{`items[]`, `items`, `one[]`, `one`, `$.one`, `o.a[]`, `o.a`, `$states.input.one[]`, `$states.input.one`,
		`$states.input.o ~> |$|{"c": 2}|`, `$states.input.o`, `$sort($states.input.o.a)`, `o.a`, `$append(one, 8)`, `one`,
		`$reverse(o.a)`, `o.a`, `o.b`, `$states.input.items.v`}
	lookup := func(name string) (any, bool) {
		if name != "states" {
			return nil, false
		}
		st := jsonvalue.NewObject(1)
		st.Set("input", in)
		return st, true
	}
	var shared Shared
	for _, src := range srcs {
		e, err := Compile(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		alone, aok, aerr := e.EvalWith(in, true, &Options{Lookup: lookup})
		got, ok, err := e.EvalWith(in, true, &Options{Lookup: lookup, Shared: &shared})
		if ok != aok || (err == nil) != (aerr == nil) || jsonvalue.String(got) != jsonvalue.String(alone) {
			t.Errorf("%s: shared %s %v %v, alone %s %v %v", src, jsonvalue.String(got), ok, err, jsonvalue.String(alone), aok, aerr)
		}
	}
}

// TestSharedOriginal: a result that is a shared conversion is the object
// it was converted from when that reads the same, and counts the same
// bytes as a new one.
func TestSharedOriginal(t *testing.T) {
	in, err := jsonvalue.ParseString(`{"same": {"x": [1, 2.5, {"y": null}], "s": "t", "b": true}, "other": {"n": 1.50}}`)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := in.(*jsonvalue.Object).Get("same")
	for src, want := range map[string]bool{`same`: true, `other`: false, `$`: false} {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		var shared Shared
		m1 := budget.New(budget.Limits{Bytes: 1 << 20}, nil, nil)
		m2 := budget.New(budget.Limits{Bytes: 1 << 20}, nil, nil)
		for range 2 { // the second evaluation finds the conversions
			alone, _, _ := e.EvalWith(in, true, &Options{Budget: m1})
			got, _, err := e.EvalWith(in, true, &Options{Budget: m2, Shared: &shared})
			if err != nil || jsonvalue.String(got) != jsonvalue.String(alone) {
				t.Fatalf("%s: %s %v, want %s", src, jsonvalue.String(got), err, jsonvalue.String(alone))
			}
			orig := got == same || got == in
			if orig != want {
				t.Errorf("%s: given back as the original %v, want %v", src, orig, want)
			}
			if m1.Remaining() != m2.Remaining() {
				t.Errorf("%s: %d bytes left, want %d", src, m2.Remaining(), m1.Remaining())
			}
		}
	}
}
