package jsonpath

import (
	"errors"
	"strings"
	"testing"

	"stepwise/jsonvalue"
)

var fuzzSeeds = []string{
	// Valid.
	`$`, `$$`, `$x`, `$.a`, `$.a.b[0].c`, `$['a']["b"]`, `$.a[-1]`, `$['a','b']`,
	`$.a[*]`, `$.*`, `$[*][*]`, `$.a[1:3]`, `$.a[:2]`, `$.a[-2:]`, `$.a[::2]`, `$.a[1:5:2]`,
	`$..name`, `$..*`, `$..[0]`, `$..[?(@.x)]`, `$.a[0,1,-1]`, `$.a.length()`, `$.a.size()`,
	`$[?(@.status == 'failed')]`, `$[?(@.n > 1 && @.n <= 3 || !@.x)]`, `$[?(!(@.a == 1))]`,
	`$[?(@.a =~ /x.*/i)]`, `$[?(@.a in ['x', "y", 1, null, true])]`, `$[?(@.a nin [])]`,
	`$[?(@.tags contains 'x')]`, `$[?(@.a size 2)]`, `$[?(@.a empty false)]`,
	`$[?(@.a subsetof [1,2])]`, `$[?(@.a anyof [1])]`, `$[?(@.a noneof [1])]`,
	`$[?(@.a == {"k": [1, 'v']})]`, `$[?(@.a === 1)]`, `$[?(@.a !== '1')]`,
	`$[?(@ > 1)]`, `$[?(@.a == $.b)]`, `$[?(@.a[?(@.b)])]`, `$[?(@.a.length() > 1)]`,
	`$$.Execution.Input`, `$$.Map.Item.Value`, `$var[0].x`, `$.delivery-partner`,
	`$['with space']`, `$['Test\""Name"']`, `$['it\'s']`, `$.a.['b']`, `$.[0]`, ` $.a `,
	`$[?(@.a == 'x\u00e9\n')]`, `$[?(@.a == -1.5e3)]`,
	// Invalid.
	``, `a`, `$.`, `$..`, `$...a`, `$a b`, `$.a b`, `$[`, `$['a`, `$[a]`, `$[1:2:0]`, `$[:]`,
	`$[?(@.a == )]`, `$[?(1)]`, `$[?((@.a)]`, `$[?(@.a =~ /(/)]`, `$.a(`, `$.a.sum()`,
	`$[99999999999]`, `$[-2147483649]`, `$[?(@.a == 1e999999)]`, `$[?(@.a == 'x\u12')]`,
	`$[?(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((@.a)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))]`,
	`$[?(@.a == [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])]`,
}

const fuzzDoc = `{"a": {"b": [{"c": 1}, {"c": "2", "d": [true, null]}], "s": "str"},
	"status": "failed", "n": 2, "tags": ["x", "y"], "x": [[1, 2], {"y": 1.5}],
	"name": "top", "list": [{"name": "n1", "status": "ok"}, {"name": "n2", "n": 3}]}`

// FuzzCompile checks that Compile never panics or hangs, that a compiled
// path keeps its text, evaluates without panicking, and that Set leaves its
// input unchanged.
func FuzzCompile(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	doc, err := jsonvalue.ParseString(fuzzDoc)
	if err != nil {
		f.Fatal(err)
	}
	snapshot := jsonvalue.String(doc)
	env := &Env{Input: doc, Context: doc, Vars: func(string) (any, bool) { return doc, true }}

	f.Fuzz(func(t *testing.T, expr string) {
		p, err := Compile(expr)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) error %T is not a *SyntaxError", expr, err)
			}
			if se.Offset < 0 || se.Offset > len(expr) {
				t.Fatalf("Compile(%q) offset %d out of range", expr, se.Offset)
			}
			return
		}
		if p.String() != expr {
			t.Fatalf("String() = %q, want %q", p.String(), expr)
		}
		if !strings.HasPrefix(p.Normalized(), "$") {
			t.Fatalf("Normalized() = %q", p.Normalized())
		}
		if p.IsReference() && !p.IsDefinite() {
			t.Fatalf("%q is a reference path but not definite", expr)
		}
		// Normalized is a path too, unless a name holds a quote or a
		// backslash (Jayway's form does not escape them) or the path has a
		// filter (written [?]).
		if !strings.ContainsAny(expr, `'"\?`) {
			q, err := Compile(p.Normalized())
			if err != nil {
				t.Fatalf("Normalized() %q of %q does not compile: %v", p.Normalized(), expr, err)
			}
			if q.Normalized() != p.Normalized() {
				t.Fatalf("Normalized() not stable: %q then %q", p.Normalized(), q.Normalized())
			}
		}

		v, err := p.Eval(env)
		switch {
		case err != nil:
			if !p.IsDefinite() || !errors.Is(err, ErrNotFound) {
				t.Fatalf("Eval(%q): unexpected error %v", expr, err)
			}
		case !p.IsDefinite():
			if _, ok := v.([]any); !ok {
				t.Fatalf("Eval(%q) of an indefinite path gave %T", expr, v)
			}
		}
		if p.IsReference() {
			_, _ = p.Set(doc, "set")
		}
		if jsonvalue.String(doc) != snapshot {
			t.Fatalf("%q changed the document", expr)
		}
	})
}
