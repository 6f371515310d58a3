package jsonpath

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

const testDoc = `{
	"a": {"b": [{"c": 1}, {"c": 2, "d": "x"}], "e": null, "s": "str", "t": true},
	"nums": [0, 1, 2, 3, 4, 5],
	"empty": [],
	"items": [
		{"status": "failed", "n": 1, "tags": ["red", "blue"]},
		{"status": "ok", "n": "1", "tags": []},
		{"n": 3, "status": null},
		{"status": "FAILED", "n": 10.0}
	],
	"store": {
		"book": [
			{"category": "reference", "author": "Nigel Rees", "price": 8.95},
			{"category": "fiction", "author": "Evelyn Waugh", "price": 12.99, "isbn": "0-553"},
			{"category": "fiction", "author": "J. R. R. Tolkien", "price": 22.99, "isbn": "0-395"}
		],
		"bicycle": {"color": "red", "price": 19.95}
	},
	"delivery-partner": "ups",
	"with space": 1,
	"it's": "quote",
	"Test\\\"\"Name\"": "escaped",
	"": "empty key",
	"limit": 10,
	"matrix": [[1, 2], [3, 4]]
}`

type testBundle struct {
	doc any
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	doc, err := jsonvalue.ParseString(testDoc)
	require.NoError(t, err)
	return &testBundle{doc: doc}
}

func TestApply(t *testing.T) {
	t.Parallel()
	bundle := setup(t)

	for _, tc := range []struct {
		path string
		want string // compact JSON
	}{
		// Names and indexes.
		{`$`, ``}, // checked separately: the whole document
		{`$.a.b[0].c`, `1`},
		{`$['a']['b'][1]['d']`, `"x"`},
		{`$["a"]["s"]`, `"str"`},
		{`$.a.['s']`, `"str"`},
		{`$.[ 'a' ].e`, `null`},
		{`$.a.t`, `true`},
		{`$.nums[-1]`, `5`},
		{`$.nums[-6]`, `0`},
		{`$[ 'nums' ][ 2 ]`, `2`},
		{`$.matrix[1][0]`, `3`},
		{`$.delivery-partner`, `"ups"`},
		{`$['with space']`, `1`},
		{`$["it's"]`, `"quote"`},
		{`$['Test\""Name"']`, `"escaped"`},
		{`$['']`, `"empty key"`},
		{`  $.limit  `, `10`},
		// Several names: merged into one object when last, iterated otherwise.
		{`$['nums','limit']`, `{"nums":[0,1,2,3,4,5],"limit":10}`},
		{`$['limit','nope']`, `{"limit":10}`},
		{`$['a','store']['e']`, `[null]`},
		// Wildcards.
		{`$.a.b[*].c`, `[1,2]`},
		{`$.a.b.*.d`, `["x"]`},
		{`$.a.*`, `[[{"c":1},{"c":2,"d":"x"}],null,"str",true]`},
		{`$.matrix[*][*]`, `[1,2,3,4]`},
		{`$.matrix[ * ][1]`, `[2,4]`},
		{`$.empty[*]`, `[]`},
		{`$.limit[*]`, `[]`},
		// Index lists.
		{`$.nums[0,2,-1]`, `[0,2,5]`},
		{`$.nums[1, 9]`, `[1]`},
		// Slices, with Jayway's rules for negative bounds.
		{`$.nums[1:3]`, `[1,2]`},
		{`$.nums[:2]`, `[0,1]`},
		{`$.nums[4:]`, `[4,5]`},
		{`$.nums[-2:]`, `[4,5]`},
		{`$.nums[:-2]`, `[0,1,2,3]`},
		{`$.nums[-10:]`, `[0,1,2,3,4,5]`},
		{`$.nums[:100]`, `[0,1,2,3,4,5]`},
		{`$.nums[3:1]`, `[]`},
		{`$.nums[-2:-1]`, `[4]`},
		{`$.nums[1:-1]`, `[]`},
		{`$.nums[-3:2]`, `[3,4,5,0,1]`},
		{`$.nums[-100:1]`, `[0,1,2,3,4,5,0]`},
		{`$.nums[::2]`, `[0,2,4]`},
		{`$.nums[1::2]`, `[1,3,5]`},
		{`$.nums[-5:-1:2]`, `[1,3]`},
		{`$.nums[-9:2:4]`, `[1,5]`},
		{`$.nums[ 1 : 3 ]`, `[1,2]`},
		{`$.empty[1:]`, `[]`},
		// An indefinite path selects [] where a definite one would fail.
		{`$.nope[1:]`, `[]`},
		{`$.nope[*].x`, `[]`},
		{`$.a.s[*]`, `[]`},
		{`$.a.b[5:].c`, `[]`},
		// Recursive descent, pre-order.
		{`$..c`, `[1,2]`},
		{`$..['d']`, `["x"]`},
		{`$.store..price`, `[8.95,12.99,22.99,19.95]`},
		{`$..book[0].author`, `["Nigel Rees"]`},
		{`$..book[-1:].author`, `["J. R. R. Tolkien"]`},
		{`$.a..*`, `[[{"c":1},{"c":2,"d":"x"}],null,"str",true,{"c":1},{"c":2,"d":"x"},1,2,"x"]`},
		{`$.matrix..[0]`, `[[1,2],1,3]`},
		{`$.store..['color','price']`, `[{"color":"red","price":19.95}]`},
		{`$.store.book..[?(@.price > 20)].author`, `["J. R. R. Tolkien"]`},
		{`$..nope`, `[]`},
		// Filters.
		{`$.items[?(@.status == 'failed')].n`, `[1]`},
		{`$.items[?(@.status == "failed")].n`, `[1]`},
		{`$.items[?(@.status != 'failed')].n`, `["1",3,10.0]`},
		{`$.items[?(@.status)].n`, `[1,"1",3,10.0]`},
		{`$.items[?(@.tags)].n`, `[1,"1"]`},
		{`$.items[?(!@.tags)].n`, `[3,10.0]`},
		{`$.items[?(@.status == null)].n`, `[3]`},
		{`$.items[?(@.n == 1)].status`, `["failed","ok"]`},
		{`$.items[?(@.n === 1)].status`, `["failed"]`},
		{`$.items[?(@.n !== 1)].status`, `["ok",null,"FAILED"]`},
		{`$.items[?(@.n == 10)].status`, `["FAILED"]`},
		{`$.items[?(@.n > 1)].status`, `[null,"FAILED"]`},
		{`$.items[?(@.n >= 1)].status`, `["failed","ok",null,"FAILED"]`},
		{`$.items[?(@.n < 3 && @.status == 'ok')].n`, `["1"]`},
		{`$.items[?(@.n == 3 || @.status == 'ok')].n`, `["1",3]`},
		{`$.items[?(@.n == 3 || @.status == 'ok' && @.n == 99)].n`, `[3]`},
		{`$.items[?((@.n == 3 || @.status == 'ok') && @.n != 3)].n`, `["1"]`},
		{`$.items[?(!(@.status == 'failed'))].n`, `["1",3,10.0]`},
		{`$.items[?(@.status =~ /fail.*/i)].n`, `[1,10.0]`},
		{`$.items[?(@.status =~ /fail/)].n`, `[]`},
		{`$.items[?(@.status in ['ok', 'failed'])].n`, `[1,"1"]`},
		{`$.items[?(@.status nin ['ok', 'failed'])].n`, `[3,10.0]`},
		{`$.items[?(@.tags contains 'red')].n`, `[1]`},
		{`$.items[?(@.tags size 2)].n`, `[1]`},
		{`$.items[?(@.status size 6)].n`, `[1,10.0]`},
		{`$.items[?(@.tags empty true)].n`, `["1"]`},
		{`$.items[?(@.tags subsetof ['red','blue','green'])].n`, `[1,"1"]`},
		{`$.items[?(@.tags anyof ['blue'])].n`, `[1]`},
		{`$.items[?(@.tags noneof ['blue'])].n`, `["1"]`},
		{`$.items[?(@.tags == ['red','blue'])].n`, `[1]`},
		{`$.items[?(@.tags.length() == 2)].n`, `[1]`},
		{`$.items[?(@.n < $.limit)].n`, `[1,"1",3]`},
		{`$.store.book[?(@.price < 10)].author`, `["Nigel Rees"]`},
		{`$.store.book[?(@.isbn && @.price > 20)].author`, `["J. R. R. Tolkien"]`},
		{`$.store.book[?( @.category == 'fiction' )]['author']`, `["Evelyn Waugh","J. R. R. Tolkien"]`},
		{`$.nums[?(@ > 3)]`, `[4,5]`},
		{`$.nums[?(@ == '2')]`, `[2]`},
		{`$.a[?(@.s == 'str')].t`, `[true]`}, // a filter on an object tests the object
		{`$.a[?(@.s == 'nope')]`, `[]`},
		{`$.items[?(@.nope != 'x')].n`, `[1,"1",3,10.0]`},
		{`$.items[?(@.nope == 'x')].n`, `[]`},
		{`$.items[?(@.n > 'x')].n`, `[]`},
		{`$.items[?(@.tags[*] == 'x')].n`, `[]`},
		// Functions.
		{`$.nums.length()`, `6`},
		{`$.a.size()`, `4`},
		{`$.a.s.length()`, `null`},
		{`$.matrix[*].length()`, `[2,2]`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			p, err := Compile(tc.path)
			require.NoError(t, err)
			got, err := p.Apply(bundle.doc)
			require.NoError(t, err)
			want := tc.want
			if want == "" {
				want = jsonvalue.String(bundle.doc)
			}
			require.Equal(t, want, jsonvalue.String(got))
		})
	}
}

func TestApplyNotFound(t *testing.T) {
	t.Parallel()
	bundle := setup(t)

	for _, tc := range []struct {
		path string
		msg  string
	}{
		{`$.NoSuchOutputPath`, `Invalid path '$.NoSuchOutputPath' : No results for path: $['NoSuchOutputPath']`},
		{`$.a.x`, `Invalid path '$.a.x' : No results for path: $['a']['x']`},
		{`$.a.x.y`, `Invalid path '$.a.x.y' : Missing property in path $['a']['x']`},
		{`$.a.x[0]`, `Invalid path '$.a.x[0]' : Missing property in path $['a']['x']`},
		{`$.a.s.y`, `Invalid path '$.a.s.y' : Expected to find an object with property ['y'] in path $['a']['s'] but found 'string'`},
		{`$.a.e.y`, `Invalid path '$.a.e.y' : Expected to find an object with property ['y'] in path $['a']['e'] but found 'null'`},
		{`$.nums.x`, `Invalid path '$.nums.x' : Expected to find an object with property ['x'] in path $['nums'] but found 'array'`},
		{`$.nums['x','y']`, `Invalid path '$.nums['x','y']' : Expected to find an object with property ['x','y'] in path $['nums'] but found 'array'`},
		{`$.nums[6]`, `Invalid path '$.nums[6]' : No results for path: $['nums'][6]`},
		{`$.nums[-7].x`, `Invalid path '$.nums[-7].x' : No results for path: $['nums'][-7]['x']`},
		{`$.a.e[0]`, `Invalid path '$.a.e[0]' : The path $['a']['e'] is null`},
		{`$.a[0].c`, `Invalid path '$.a[0].c' : Filter: [0]['c'] can only be applied to arrays. Current context is: {"b":[{"c":1},{"c":2,"d":"x"}],"e":null,"s":"str","t":true}`},
		{`$.a.s[1]`, `Invalid path '$.a.s[1]' : Filter: [1] can only be applied to arrays. Current context is: "str"`},
		{`$.nope.length()`, `Invalid path '$.nope.length()' : Missing property in path $['nope']`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			p, err := Compile(tc.path)
			require.NoError(t, err)
			_, err = p.Apply(bundle.doc)
			require.EqualError(t, err, tc.msg)
			require.ErrorIs(t, err, ErrNotFound)
			var nf *NotFoundError
			require.ErrorAs(t, err, &nf)
			require.Equal(t, tc.path, nf.Path)
		})
	}
}

func TestApplyNonObjectRoots(t *testing.T) {
	t.Parallel()

	p := MustCompile(`$.a`)
	_, err := p.Apply("text")
	require.EqualError(t, err, `Invalid path '$.a' : Expected to find an object with property ['a'] in path $ but found 'string'`)
	_, err = p.Apply(nil)
	require.EqualError(t, err, `Invalid path '$.a' : Expected to find an object with property ['a'] in path $ but found 'null'`)

	v, err := MustCompile(`$[1]`).Apply([]any{"x", "y"})
	require.NoError(t, err)
	require.Equal(t, "y", v)

	v, err = MustCompile(`$[*][*]`).Apply([]any{[]any{"a"}, []any{"b", "c"}, "d"})
	require.NoError(t, err)
	require.Equal(t, []any{"a", "b", "c"}, v)

	v, err = MustCompile(`$`).Apply(jsonvalue.Number("7"))
	require.NoError(t, err)
	require.Equal(t, jsonvalue.Number("7"), v)
}

func TestCompileProperties(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		path       string
		normalized string
		root       Root
		variable   string
		definite   bool
		reference  bool
	}{
		{`$`, `$`, RootInput, "", true, true},
		{`$.a.b[0]`, `$['a']['b'][0]`, RootInput, "", true, true},
		{`$["a"].b`, `$["a"]['b']`, RootInput, "", true, true},
		{`$[-1]`, `$[-1]`, RootInput, "", true, true},
		{`$.delivery-partner`, `$['delivery-partner']`, RootInput, "", true, true},
		{`$$`, `$$`, RootContext, "", true, true},
		{`$$.Execution.Id`, `$$['Execution']['Id']`, RootContext, "", true, true},
		{`$$.Map.Item.Value`, `$$['Map']['Item']['Value']`, RootContext, "", true, true},
		{`$foo`, `$foo`, RootVariable, "foo", true, true},
		{`$foo.bar`, `$foo['bar']`, RootVariable, "foo", true, true},
		{`$_x9[0]`, `$_x9[0]`, RootVariable, "_x9", true, true},
		{`$héllo.a`, `$héllo['a']`, RootVariable, "héllo", true, true},
		{`$['a','b']`, `$['a','b']`, RootInput, "", true, false},
		{`$['a','b'].c`, `$['a','b']['c']`, RootInput, "", false, false},
		{`$.a.length()`, `$['a'].length()`, RootInput, "", true, false},
		{`$.a[*]`, `$['a'][*]`, RootInput, "", false, false},
		{`$.*`, `$[*]`, RootInput, "", false, false},
		{`$.a[0,1]`, `$['a'][0,1]`, RootInput, "", false, false},
		{`$.a[1:]`, `$['a'][1:]`, RootInput, "", false, false},
		{`$.a[:-1]`, `$['a'][:-1]`, RootInput, "", false, false},
		{`$.a[1:5:2]`, `$['a'][1:5:2]`, RootInput, "", false, false},
		{`$[::1]`, `$[::1]`, RootInput, "", false, false},
		{`$..a`, `$..['a']`, RootInput, "", false, false},
		{`$..*`, `$..[*]`, RootInput, "", false, false},
		{`$.a[?(@.b > 1)].c`, `$['a'][?]['c']`, RootInput, "", false, false},
		{`$var..x`, `$var..['x']`, RootVariable, "var", false, false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			p, err := Compile(tc.path)
			require.NoError(t, err)
			require.Equal(t, tc.path, p.String())
			require.Equal(t, tc.normalized, p.Normalized())
			require.Equal(t, tc.root, p.Root())
			require.Equal(t, tc.variable, p.Variable())
			require.Equal(t, tc.definite, p.IsDefinite())
			require.Equal(t, tc.reference, p.IsReference())
		})
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		path string
		msg  string
	}{
		{``, `invalid path "": empty path (at offset 0)`},
		{`   `, `invalid path "   ": empty path (at offset 3)`},
		{`a.b`, `invalid path "a.b": a path must start with '$' (at offset 0)`},
		{`$.`, `invalid path "$.": a path must not end with '.' (at offset 1)`},
		{`$..`, `invalid path "$..": a path must not end with '..' (at offset 1)`},
		{`$.a.`, `invalid path "$.a.": a path must not end with '.' (at offset 3)`},
		{`$...a`, `invalid path "$...a": unexpected '.' (at offset 3)`},
		{`$a b`, `invalid path "$a b": unexpected ' ', expected '.' or '[' (at offset 2)`},
		{`$*`, `invalid path "$*": unexpected '*', expected '.' or '[' (at offset 1)`},
		{`$$$`, `invalid path "$$$": unexpected '$', expected '.' or '[' (at offset 2)`},
		{`$.a b`, `invalid path "$.a b": use bracket notation ['my name'] for a name that contains spaces (at offset 3)`},
		{`$.*x`, `invalid path "$.*x": unexpected 'x', expected '.' or '[' (at offset 3)`},
		{`$['a']x`, `invalid path "$['a']x": unexpected 'x', expected '.' or '[' (at offset 6)`},
		{`$[`, `invalid path "$[": missing ']' (at offset 1)`},
		{`$['a'`, `invalid path "$['a'": missing ']' (at offset 1)`},
		{`$['a`, `invalid path "$['a": missing closing ' (at offset 2)`},
		{`$['a' 'b']`, `invalid path "$['a' 'b']": expected ',' or ']' after a quoted name (at offset 6)`},
		{`$['a',"b"]`, `invalid path "$['a',\"b\"]": expected a name quoted with ' (at offset 6)`},
		{`$[a]`, `invalid path "$[a]": expected a quoted name, an index, a slice, '*' or a filter after '[' (at offset 2)`},
		{`$[*x]`, `invalid path "$[*x]": expected ']' after '*', found 'x' (at offset 3)`},
		{`$[1`, `invalid path "$[1": missing ']' (at offset 1)`},
		{`$[1 2]`, `invalid path "$[1 2]": expected ',' or ']' after an index (at offset 4)`},
		{`$[1,]`, `invalid path "$[1,]": expected an index (at offset 4)`},
		{`$[-]`, `invalid path "$[-]": expected digits after '-' (at offset 3)`},
		{`$[1.5]`, `invalid path "$[1.5]": expected ',' or ']' after an index (at offset 3)`},
		{`$[99999999999]`, `invalid path "$[99999999999]": index out of range (at offset 2)`},
		{`$[:]`, `invalid path "$[:]": a slice needs a start, an end or a step (at offset 1)`},
		{`$[1:2:0]`, `invalid path "$[1:2:0]": a slice step must be positive (at offset 6)`},
		{`$[1:2:-1]`, `invalid path "$[1:2:-1]": a slice step must be positive (at offset 6)`},
		{`$[1:2`, `invalid path "$[1:2": missing ']' to close the slice (at offset 5)`},
		{`$.a(`, `invalid path "$.a(": function arguments are not supported (at offset 3)`},
		{`$.a.sum()`, `invalid path "$.a.sum()": unknown function "sum" (only length() and size() are supported) (at offset 4)`},
		{`$.a.length().b`, `invalid path "$.a.length().b": a function must end the path (at offset 12)`},
		{`$..length()`, `invalid path "$..length()": a function cannot follow '..' (at offset 1)`},
		{`$[?(@.a == 1)`, `invalid path "$[?(@.a == 1)": missing ']' to close the filter (at offset 13)`},
		{`$[?@.a]`, `invalid path "$[?@.a]": expected '(' after '?', found '@' (at offset 3)`},
		{`$[?()]`, `invalid path "$[?()]": expected a value, found ')' (at offset 4)`},
		{`$[?(@.a == )]`, `invalid path "$[?(@.a == )]": expected a value, found ')' (at offset 11)`},
		{`$[?(@.a = 1)]`, `invalid path "$[?(@.a = 1)]": unknown operator "=" (at offset 8)`},
		{`$[?(@.a like 1)]`, `invalid path "$[?(@.a like 1)]": unknown operator "like" (at offset 8)`},
		{`$[?(1)]`, `invalid path "$[?(1)]": a literal is not a condition; compare it with a path (at offset 4)`},
		{`$[?(!@.a == 1)]`, `invalid path "$[?(!@.a == 1)]": '!' before a path negates an existence test; write !(...) to negate a comparison (at offset 4)`},
		{`$[?(@.a == 'x)]`, `invalid path "$[?(@.a == 'x)]": missing closing ' (at offset 11)`},
		{`$[?(@.a == tru)]`, `invalid path "$[?(@.a == tru)]": unexpected "tru", expected a value (at offset 11)`},
		{`$[?(@.a == 1.)]`, `invalid path "$[?(@.a == 1.)]": invalid number (at offset 11)`},
		{`$[?(@.a == 1 &&)]`, `invalid path "$[?(@.a == 1 &&)]": expected a value, found ')' (at offset 15)`},
		{`$[?((@.a)]`, `invalid path "$[?((@.a)]": expected ')' to close the filter, found ']' (at offset 9)`},
		{`$[?(@.a =~ 'x')]`, `invalid path "$[?(@.a =~ 'x')]": =~ needs a /pattern/ on one side (at offset 8)`},
		{`$[?(@.a == /x/)]`, `invalid path "$[?(@.a == /x/)]": a /pattern/ can only be used with =~ (at offset 8)`},
		{`$[?(@.a =~ /x)]`, `invalid path "$[?(@.a =~ /x)]": missing closing '/' (at offset 11)`},
		{`$[?(@.a =~ /x/g)]`, `invalid path "$[?(@.a =~ /x/g)]": unsupported regular expression flag 'g' (at offset 14)`},
		{`$[?(@.a =~ /(/)]`, "invalid path \"$[?(@.a =~ /(/)]\": invalid regular expression: error parsing regexp: missing closing ): `^(?:()$` (at offset 11)"},
		{`$[?(@.a == 'x\u12')]`, `invalid path "$[?(@.a == 'x\\u12')]": invalid \u escape (at offset 15)`},
		{`$[?(@.a in [1,)]`, `invalid path "$[?(@.a in [1,)]": expected a value, found ')' (at offset 14)`},
		{`$[?(@.a == {x:1})]`, `invalid path "$[?(@.a == {x:1})]": expected a quoted member name (at offset 12)`},
		{`$[?($$.a)]`, `invalid path "$[?($$.a)]": only '$' and '@' paths can be used in a filter (at offset 4)`},
		{`$[?($x.a)]`, `invalid path "$[?($x.a)]": only '$' and '@' paths can be used in a filter (at offset 4)`},
		{`$[?(@.)]`, `invalid path "$[?(@.)]": a path must not end with '.' (at offset 5)`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tc.path)
			require.EqualError(t, err, tc.msg)
			var se *SyntaxError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.path, se.Path)
		})
	}
}

func TestMustCompilePanics(t *testing.T) {
	t.Parallel()
	require.PanicsWithError(t, `invalid path "x": a path must start with '$' (at offset 0)`, func() { MustCompile("x") })
}

func TestEval(t *testing.T) {
	t.Parallel()
	bundle := setup(t)

	ctx, err := jsonvalue.ParseString(`{"Execution": {"Id": "arn:exec", "Input": {"k": [1, 2]}}}`)
	require.NoError(t, err)
	vars := map[string]any{
		"answer": jsonvalue.Number("42"),
		"list":   []any{"x", "y"},
		"obj":    jsonvalue.FromGo(map[string]any{"a": map[string]any{"b": "deep"}}),
		"nil":    nil,
	}
	env := &Env{
		Input:   bundle.doc,
		Context: ctx,
		Vars: func(name string) (any, bool) {
			v, ok := vars[name]
			return v, ok
		},
	}

	for _, tc := range []struct {
		path string
		want string
		msg  string
	}{
		{path: `$.a.s`, want: `"str"`},
		{path: `$$.Execution.Id`, want: `"arn:exec"`},
		{path: `$$.Execution.Input.k[1]`, want: `2`},
		{path: `$$.Execution.Input.k[*]`, want: `[1,2]`},
		{path: `$$`, want: `{"Execution":{"Id":"arn:exec","Input":{"k":[1,2]}}}`},
		{path: `$answer`, want: `42`},
		{path: `$list[1]`, want: `"y"`},
		{path: `$list[*]`, want: `["x","y"]`},
		{path: `$obj.a.b`, want: `"deep"`},
		{path: `$obj..b`, want: `["deep"]`},
		{path: `$nil`, want: `null`},
		{path: `$$.Execution.Nope`, msg: `Invalid path '$$.Execution.Nope' : No results for path: $$['Execution']['Nope']`},
		{path: `$obj.a.c`, msg: `Invalid path '$obj.a.c' : No results for path: $obj['a']['c']`},
		{path: `$missing`, msg: `Invalid path '$missing' : The variable 'missing' is not defined`},
		{path: `$missing[*]`, msg: `Invalid path '$missing[*]' : The variable 'missing' is not defined`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			p := MustCompile(tc.path)
			got, err := p.Eval(env)
			if tc.msg != "" {
				require.EqualError(t, err, tc.msg)
				require.ErrorIs(t, err, ErrNotFound)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, jsonvalue.String(got))
		})
	}

	t.Run("NoVars", func(t *testing.T) {
		t.Parallel()
		_, err := MustCompile(`$x`).Eval(&Env{Input: bundle.doc})
		require.EqualError(t, err, `Invalid path '$x' : The variable 'x' is not defined`)
		_, err = MustCompile(`$x`).Eval(nil)
		require.ErrorIs(t, err, ErrNotFound)
		v, err := MustCompile(`$`).Eval(nil)
		require.NoError(t, err)
		require.Nil(t, v)
	})
}

func TestApplyIndefiniteNeverNil(t *testing.T) {
	t.Parallel()
	v, err := MustCompile(`$.x[*]`).Apply(jsonvalue.NewObject(0))
	require.NoError(t, err)
	require.NotNil(t, v)
	require.Equal(t, []any{}, v)
}

func TestApplySharesValues(t *testing.T) {
	t.Parallel()
	bundle := setup(t)
	want, _ := bundle.doc.(*jsonvalue.Object).Get("a")
	got, err := MustCompile(`$.a`).Apply(bundle.doc)
	require.NoError(t, err)
	require.Same(t, want, got)
}

func TestPathIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	bundle := setup(t)
	p := MustCompile(`$.items[?(@.status =~ /f.*/i && @.n >= 1)].n`)
	done := make(chan error)
	for range 8 {
		go func() {
			var err error
			for range 200 {
				var v any
				if v, err = p.Apply(bundle.doc); err != nil {
					break
				}
				if s := jsonvalue.String(v); s != `[1,10.0]` {
					err = errors.New(s)
					break
				}
			}
			done <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-done)
	}
}

// TestEvalDefiniteDoesNotAllocate does not run in parallel: allocation
// counts are process-wide, so parallel tests would make it flaky.
func TestEvalDefiniteDoesNotAllocate(t *testing.T) { //nolint:paralleltest // see above
	doc, err := jsonvalue.ParseString(`{"a": {"b": [{"c": "hit"}]}}`)
	require.NoError(t, err)
	env := &Env{
		Input: doc,
		Vars:  func(string) (any, bool) { return doc, true },
	}
	for _, path := range []string{`$.a.b[0].c`, `$['a']['b'][-1]['c']`, `$v.a.b[0].c`, `$`} {
		p := MustCompile(path)
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := p.Eval(env); err != nil {
				panic(err)
			}
		})
		require.Zero(t, allocs, path)
	}
}

func BenchmarkEval(b *testing.B) {
	doc, err := jsonvalue.ParseString(`{"x": 1, "a": {"y": 2, "b": [{"c": "hit", "d": 4}, {"c": 5}]}, "z": 3}`)
	require.NoError(b, err)
	env := &Env{Input: doc}

	for _, path := range []string{`$.a.b[0].c`, `$.a.b[*].c`, `$.a.b[?(@.d > 1)].c`, `$..c`} {
		p := MustCompile(path)
		b.Run(path, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Eval(env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(`$.store.book[?(@.price < 10 && @.category == 'fiction')].author`); err != nil {
			b.Fatal(err)
		}
	}
}
