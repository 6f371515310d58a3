package jsonata

import (
	"testing"

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
