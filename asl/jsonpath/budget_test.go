package jsonpath

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl/budget"
	"stepwise/jsonvalue"
)

// deepDoc is an object nested n deep, each level holding an array of
// three copies of a small object and the next level.
func deepDoc(n int) any {
	var b strings.Builder
	for range n {
		b.WriteString(`{"l": [{"a": 1}, {"a": 2}, {"a": 3}], "n": `)
	}
	b.WriteString("null")
	b.WriteString(strings.Repeat("}", n))
	v, err := jsonvalue.ParseString(b.String())
	if err != nil {
		panic(err)
	}
	return v
}

// Deep scans after deep scans visit nodes many times over: under a budget
// they stop at it.
func TestBudgetStopsDeepScans(t *testing.T) {
	t.Parallel()
	doc := deepDoc(200)
	p, err := Compile(`$..*..*..*..a`)
	require.NoError(t, err)
	m := budget.New(budget.Limits{Steps: 100_000, Time: -1}, nil, nil)
	_, err = p.Eval(&Env{Input: doc, Budget: m})
	var be *budget.Error
	require.ErrorAs(t, err, &be)
	require.Equal(t, "steps", be.Limit)

	// Within its budget a path returns what it returns without one.
	small := deepDoc(3)
	want, err := p.Eval(&Env{Input: small})
	require.NoError(t, err)
	got, err := p.Eval(&Env{Input: small, Budget: budget.New(budget.Limits{}, nil, nil)})
	require.NoError(t, err)
	require.Equal(t, jsonvalue.String(want), jsonvalue.String(got))
}

// FuzzBudget evaluates arbitrary paths over a deep document under a small
// budget: none takes more than a small multiple of its budget of bytes,
// none runs without end, and every failure is the budget's or a path's
// own.
//
//	go test ./asl/jsonpath -run '^$' -fuzz FuzzBudget -fuzztime 60s
func FuzzBudget(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 20)
	}
	f.Add(`$..*..*..*..*`, 60)
	f.Add(`$..[?(@.a)]..a`, 60)
	const maxSteps, maxBytes = 20_000, 1 << 20
	f.Fuzz(func(t *testing.T, expr string, depth int) {
		p, err := Compile(expr)
		if err != nil {
			return
		}
		doc := deepDoc(min(max(depth, 0), 100))
		m := budget.New(budget.Limits{Steps: maxSteps, Bytes: maxBytes, Time: -1}, nil, nil)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = p.Eval(&Env{Input: doc, Context: doc, Budget: m, Vars: func(string) (any, bool) { return doc, true }})
		runtime.ReadMemStats(&after)
		if err != nil {
			var be *budget.Error
			var nf *NotFoundError
			if !errors.As(err, &be) && !errors.As(err, &nf) {
				t.Fatalf("%q: unexpected error %T: %v", expr, err, err)
			}
		}
		if mem := after.TotalAlloc - before.TotalAlloc; mem > 64*maxBytes {
			t.Fatalf("%q allocated %d bytes under a budget of %d", expr, mem, maxBytes)
		}
	})
}
