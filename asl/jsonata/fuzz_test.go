package jsonata

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

// fuzzLimits keep one fuzzed evaluation small: deep recursion and long
// loops end in U1001 instead of running for seconds.
var fuzzLimits = &limits{depth: 300, steps: 20000}

const fuzzInput = `{"a": 1, "b": [1, 2.5, {"c": "x", "d": [true, null]}], "s": "Hello", "o": {"k": {"v": -3}}}`

// FuzzCompile compiles arbitrary text and evaluates what compiles against
// a small input. Neither may panic, and every failure must be an *Error
// with a code.
//
//	go test ./asl/jsonata -run '^$' -fuzz FuzzCompile -fuzztime 60s -fuzzminimizetime 5s
//
// (Minimizing a long suite expression can otherwise hold a worker for a
// minute.)
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	input, err := jsonvalue.ParseString(fuzzInput)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 2000 {
			return
		}
		e, err := Compile(src)
		if err != nil {
			requireCoded(t, src, err)
			return
		}
		v, ok, err := e.EvalWith(input, true, &Options{limits: fuzzLimits})
		if err != nil {
			requireCoded(t, src, err)
			return
		}
		if ok {
			_ = jsonvalue.Marshal(v)
		}
	})
}

func requireCoded(t *testing.T, src string, err error) {
	t.Helper()
	var je *Error
	if !errors.As(err, &je) || je.Code == "" {
		t.Fatalf("%q: error without a JSONata code: %v", src, err)
	}
}

// fuzzSeeds are the expressions of the official suite when it is present,
// and a few of every construct otherwise.
func fuzzSeeds(f *testing.F) []string {
	seeds := []string{
		`a`, `b[0]`, `b[c = "x"].d`, `$sum(b[$type($) = "number"])`,
		`o.k.v * -2 + 1.5e3 % 7`, `s & "!" & $string(a)`,
		`{"n": $count(b), "u": $uppercase(s)}`, `b ~> $map(function($x, $i) { $i })`,
		`($f := function($n) { $n < 2 ? $n : $f($n - 1) + $f($n - 2) }; $f(6))`,
		`$reduce([1..5], function($a, $b) { $a * $b })`, `**.c`, `b#$i[$i > 0]`,
		`b@$x.$x`, `o.k%.k`, `$ ~> |o.k|{"w": 1}, ["v"]|`, `b^(>$)`,
		`/l+/i`, `$match(s, /l(o)/)`, `$replace(s, "l", "L", 1)`,
		`$sort(b, function($l, $r) { $l > $r })`, `a in [1, 2] and not(false) or true`,
		`$formatNumber(1234.5, "#,##0.00")`, `$fromMillis(0, "[Y0001]-[M01]-[D01]")`,
		`$split(s, "")[-1]`, `$keys(o) ? "y" : "n"`, `b{$string($): $}`,
	}
	dir := filepath.Join(suiteDir, "groups")
	groups, err := os.ReadDir(dir)
	if suiteDir == "" || err != nil {
		return seeds
	}
	for _, g := range groups {
		files, _ := filepath.Glob(filepath.Join(dir, g.Name(), "*.json"))
		for _, file := range files {
			for _, c := range loadCases(f, file) {
				seeds = append(seeds, c.Expr)
			}
		}
	}
	return seeds
}

// TestFuzzRegressions pins what fuzzing found: each once panicked or
// overflowed the stack.
func TestFuzzRegressions(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want, code string }{
		{expr: `$assert(nothing)`, code: "D3141"},
		{expr: `$substring("Hello", nothing, 2)`, want: `""`},
		{expr: `$substring("Hello", nothing)`, want: `"Hello"`},
		{expr: `$substring("Hello", 1.6, 1.6)`, want: `"el"`},
		{expr: `$substringBefore("a-undefined-b", nothing)`, want: `"a-"`},
		{expr: `$pad("x", nothing)`, want: `"x"`},
		{expr: `$formatNumber(0, "0e")`, code: "D3093"},
		{expr: `$formatNumber(0, "", {"zero-digit": ""})`, code: "RangeError"},
		{expr: `$formatInteger(7 % 0, "w")`, code: "RangeError"},
		{expr: `$formatNumber(1, nothing)`, code: "TypeError"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			e, err := Compile(tt.expr)
			require.NoError(t, err)
			v, _, err := e.Eval(nil, nil)
			if tt.code != "" {
				var je *Error
				require.ErrorAs(t, err, &je)
				require.Equal(t, tt.code, je.Code)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, jsonvalue.String(v))
		})
	}
}
