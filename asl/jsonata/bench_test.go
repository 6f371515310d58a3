package jsonata

import (
	"fmt"
	"strings"
	"testing"

	"stepwise/jsonvalue"
)

// The benchmarks evaluate compiled typical Step Functions expressions.
// testdata/diff/bench.js measures the reference implementation on the
// same expressions and inputs; side by side:
//
//	go test ./asl/jsonata -run '^$' -bench . -benchmem
//	(cd asl/jsonata/testdata/diff && npm ci && node bench.js)

// benchItems is an input with a 100-element array, as benchItemsJSON.
func benchItemsJSON() string {
	var b strings.Builder
	b.WriteString(`{"items": [`)
	for i := range 100 {
		if i > 0 {
			b.WriteString(", ")
		}
		cat := "a"
		if i%3 == 0 {
			cat = "b"
		}
		fmt.Fprintf(&b, `{"name": "item%d", "price": %d.5, "qty": %d, "category": %q}`, i, i, i%7, cat)
	}
	b.WriteString(`]}`)
	return b.String()
}

const (
	benchArithmetic = `$states.input.price * $states.input.qty`
	benchFilter     = `{"total": $sum(items[price > 50].price), "names": items[category = "a"].name}`
)

func benchEval(b *testing.B, expr, inputJSON string, asStates bool) {
	e, err := Compile(expr)
	if err != nil {
		b.Fatal(err)
	}
	in, err := jsonvalue.ParseString(inputJSON)
	if err != nil {
		b.Fatal(err)
	}
	opts := &Options{}
	var input any
	if asStates {
		states := jsonvalue.NewObject(1)
		states.Set("input", in)
		opts.Vars = map[string]any{"states": states}
	} else {
		input = in
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, _, err := e.EvalWith(input, !asStates, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkArithmetic(b *testing.B) {
	benchEval(b, benchArithmetic, `{"price": 12.5, "qty": 3, "sku": "x-1"}`, true)
}

func BenchmarkFilter100(b *testing.B) {
	benchEval(b, benchFilter, benchItemsJSON(), false)
}
