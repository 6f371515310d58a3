package jsonata

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl/budget"
	"stepwise/jsonvalue"
)

// allocated returns how many bytes f allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// evalBudget evaluates src with limits and returns the error.
func evalBudget(t *testing.T, src string, l budget.Limits) (any, error) {
	t.Helper()
	e, err := Compile(src)
	require.NoError(t, err)
	v, _, err := e.EvalWith(nil, false, &Options{Budget: budget.New(l, nil, nil)})
	return v, err
}

// These expressions once ran without end or took gigabytes; each now
// stops at its budget, before taking the memory. It runs alone (not in
// parallel) so that what it allocates can be measured.
func TestBudgetStopsRunaways(t *testing.T) {
	nest := func(n int, wrap string) string {
		var b strings.Builder
		b.WriteString("($o := [1, 2, 3]; ")
		for range n {
			b.WriteString("$o := " + wrap + "; ")
		}
		b.WriteString("$o)")
		return b.String()
	}
	tests := []struct {
		name, src string
		limit     string
	}{
		{"exponential recursion", `($f := function($n){ $n = 0 ? 0 : $f($n-1) + $f($n-1) }; $f(60))`, "steps"},
		{"a filter over a long range", `[1..100000][$ % 7 = 99 or $ % 11 = 99 or $ % 13 = 99 or $ % 17 = 99 or $ % 19 = 99 or $ % 23 = 99 or $ % 29 = 99 or $ % 31 = 99] ~> $count()`, "steps"},
		{"a range of ten million", `[1..10000000]`, "bytes"},
		{"built-ins over a long array, again and again", `($a := [1..100000]; [1..1000].$max($a))`, "steps"},
		{"a string doubled", `($f := function($s, $n){ $n = 0 ? $s : $f($s & $s, $n - 1) }; $f("abcdefgh", 40))`, "bytes"},
		{"a pad to a hundred million", `$pad("x", 100000000)`, "bytes"},
		{"arrays sharing an array, 40 deep", nest(40, `[[$o], [$o]]`), "bytes"},
		{"objects sharing an object, 40 deep", nest(40, `{"a": $o, "b": $o}`), "bytes"},
		{"the string of shared objects", "$string(" + nest(40, `{"a": $o, "b": $o}`) + ")", "bytes"},
		{"appends doubling", `($f := function($a, $n){ $n = 0 ? $count($a) : $f($append($a, $a), $n - 1) }; $f([1, 2], 40))`, "bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			mem := allocated(func() {
				_, err = evalBudget(t, tt.src, budget.Limits{Steps: 2_000_000, Bytes: 4 << 20, Time: -1})
			})
			var be *budget.Error
			require.ErrorAs(t, err, &be)
			require.Equal(t, tt.limit, be.Limit, "%v", err)
			if tt.limit == "bytes" {
				// Other tests allocate meanwhile: the bound is loose,
				// but far below what the expression would build.
				require.Less(t, mem, uint64(128<<20), "allocated %d bytes", mem)
			}
		})
	}
}

// A budget does not change what an evaluation within it returns.
func TestBudgetKeepsResults(t *testing.T) {
	t.Parallel()
	for _, src := range []string{
		`$sum([1..1000])`,
		`$count([1..100000])`,
		`$string({"a": [1, 2, {"b": "c"}]})`,
		`($f := function($n){ $n < 2 ? $n : $f($n - 1) + $f($n - 2) }; $f(15))`,
		`$join([1..100].$string(), ",") ~> $length()`,
	} {
		e, err := Compile(src)
		require.NoError(t, err)
		want, _, err := e.EvalWith(nil, false, nil)
		require.NoError(t, err)
		got, err := evalBudget(t, src, budget.Limits{})
		require.NoError(t, err, src)
		require.Equal(t, jsonvalue.String(want), jsonvalue.String(got), src)
	}
}

// FuzzBudget evaluates arbitrary expressions over a small input under a
// small budget: none may take much more memory than its budget of bytes,
// and every failure is an *Error or the budget's *budget.Error.
//
//	go test ./asl/jsonata -run '^$' -fuzz FuzzBudget -fuzztime 60s
func FuzzBudget(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	for _, s := range []string{
		`[1..10000000]`, `$pad("", 100000000)`,
		`($f := function($n){ $n = 0 ? 0 : $f($n-1) + $f($n-1) }; $f(60))`,
		`($o := [1]; $o := [[$o],[$o]]; $o := [[$o],[$o]]; $string($o))`,
	} {
		f.Add(s)
	}
	input, err := jsonvalue.ParseString(fuzzInput)
	if err != nil {
		f.Fatal(err)
	}
	const maxBytes = 1 << 20
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 2000 {
			return
		}
		e, err := Compile(src)
		if err != nil {
			return
		}
		var v any
		m := budget.New(budget.Limits{Steps: 20000, Bytes: maxBytes, Time: -1}, nil, nil)
		mem := allocated(func() {
			v, _, err = e.EvalWith(input, true, &Options{Budget: m, limits: &limits{depth: 300}})
			if err == nil {
				_ = jsonvalue.Marshal(v)
			}
		})
		if err != nil {
			var be *budget.Error
			var je *Error
			if !errorsAs(err, &be) && !errorsAs(err, &je) {
				t.Fatalf("%q: error neither a JSONata nor a budget error: %v", src, err)
			}
		}
		if mem > 64*maxBytes {
			t.Fatalf("%q allocated %d bytes under a budget of %d", src, mem, maxBytes)
		}
	})
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
