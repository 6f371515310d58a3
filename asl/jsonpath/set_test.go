package jsonpath

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

func TestSet(t *testing.T) {
	t.Parallel()

	const input = `{"comment": "x", "a": {"b": 1, "s": "str", "arr": [{"k": 1}, 2], "n": null}, "list": [1, 2, 3]}`

	for _, tc := range []struct {
		path  string
		value string
		want  string
		msg   string
	}{
		{path: `$`, value: `"Hello"`, want: `"Hello"`},
		{path: `$.taskresult`, value: `"Hello"`, want: `{"comment":"x","a":{"b":1,"s":"str","arr":[{"k":1},2],"n":null},"list":[1,2,3],"taskresult":"Hello"}`},
		{path: `$.comment`, value: `{"r":1}`, want: `{"comment":{"r":1},"a":{"b":1,"s":"str","arr":[{"k":1},2],"n":null},"list":[1,2,3]}`},
		{path: `$.a.b`, value: `2`, want: `{"comment":"x","a":{"b":2,"s":"str","arr":[{"k":1},2],"n":null},"list":[1,2,3]}`},
		{path: `$['a']["c"]`, value: `true`, want: `{"comment":"x","a":{"b":1,"s":"str","arr":[{"k":1},2],"n":null,"c":true},"list":[1,2,3]}`},
		{path: `$.x.y.z`, value: `[]`, want: `{"comment":"x","a":{"b":1,"s":"str","arr":[{"k":1},2],"n":null},"list":[1,2,3],"x":{"y":{"z":[]}}}`},
		{path: `$.a.n`, value: `1`, want: `{"comment":"x","a":{"b":1,"s":"str","arr":[{"k":1},2],"n":1},"list":[1,2,3]}`},
		{path: `$.list[1]`, value: `"two"`, want: `{"comment":"x","a":{"b":1,"s":"str","arr":[{"k":1},2],"n":null},"list":[1,"two",3]}`},
		{path: `$.list[-1]`, value: `"last"`, want: `{"comment":"x","a":{"b":1,"s":"str","arr":[{"k":1},2],"n":null},"list":[1,2,"last"]}`},
		{path: `$.a.arr[0].k`, value: `null`, want: `{"comment":"x","a":{"b":1,"s":"str","arr":[{"k":null},2],"n":null},"list":[1,2,3]}`},
		{path: `$.a.arr[0].new.deep`, value: `1`, want: `{"comment":"x","a":{"b":1,"s":"str","arr":[{"k":1,"new":{"deep":1}},2],"n":null},"list":[1,2,3]}`},
		{path: `$.a.s.x`, value: `1`, msg: `expected to find an object with property ['x'] in path $['a']['s'] but found 'string'`},
		{path: `$.a.n.x`, value: `1`, msg: `expected to find an object with property ['x'] in path $['a']['n'] but found 'null'`},
		{path: `$.list.x`, value: `1`, msg: `expected to find an object with property ['x'] in path $['list'] but found 'array'`},
		{path: `$.a.b[0]`, value: `1`, msg: `expected to find an array with index [0] in path $['a']['b'] but found 'number'`},
		{path: `$.list[3]`, value: `1`, msg: `index [3] is out of bounds in path $['list'] (length 3)`},
		{path: `$.list[-4]`, value: `1`, msg: `index [-4] is out of bounds in path $['list'] (length 3)`},
		{path: `$.nope[0]`, value: `1`, msg: `missing property in path $['nope'], so [0] cannot be applied`},
		{path: `$.a.arr[1].x`, value: `1`, msg: `expected to find an object with property ['x'] in path $['a']['arr'][1] but found 'number'`},
		{path: `$.list[*]`, value: `1`, msg: `'$.list[*]' is not a reference path`},
		{path: `$['a','b']`, value: `1`, msg: `'$['a','b']' is not a reference path`},
		{path: `$..a`, value: `1`, msg: `'$..a' is not a reference path`},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			root, err := jsonvalue.ParseString(input)
			require.NoError(t, err)
			v, err := jsonvalue.ParseString(tc.value)
			require.NoError(t, err)
			before := jsonvalue.DeepCopy(root)

			got, err := MustCompile(tc.path).Set(root, v)

			require.True(t, jsonvalue.Equal(before, root), "Set changed its input")
			require.Equal(t, jsonvalue.String(before), jsonvalue.String(root), "Set changed its input's order")
			if tc.msg != "" {
				require.EqualError(t, err, tc.msg)
				var se *SetError
				require.ErrorAs(t, err, &se)
				require.Equal(t, tc.path, se.Path)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, jsonvalue.String(got))
		})
	}
}

func TestSetCopiesOnlyThePath(t *testing.T) {
	t.Parallel()
	root, err := jsonvalue.ParseString(`{"keep": {"x": 1}, "a": {"other": [1], "b": {"c": 1}}, "list": [{"y": 1}, {"z": 2}]}`)
	require.NoError(t, err)
	obj := root.(*jsonvalue.Object)
	keep, _ := obj.Get("keep")
	a, _ := obj.Get("a")
	other, _ := a.(*jsonvalue.Object).Get("other")
	list, _ := obj.Get("list")

	got, err := MustCompile(`$.a.b.c`).Set(root, "new")
	require.NoError(t, err)
	gotObj := got.(*jsonvalue.Object)
	gotKeep, _ := gotObj.Get("keep")
	gotA, _ := gotObj.Get("a")
	gotOther, _ := gotA.(*jsonvalue.Object).Get("other")
	require.Same(t, keep, gotKeep, "a value off the path is shared")
	require.NotSame(t, a, gotA, "an object on the path is copied")
	require.Equal(t, []any{jsonvalue.Number("1")}, gotOther)
	require.Same(t, &other.([]any)[0], &gotOther.([]any)[0], "an array off the path is shared")

	got, err = MustCompile(`$.list[1].z`).Set(root, "new")
	require.NoError(t, err)
	gotList, _ := got.(*jsonvalue.Object).Get("list")
	require.Same(t, list.([]any)[0], gotList.([]any)[0], "an element off the path is shared")
	require.Equal(t, `{"keep":{"x":1},"a":{"other":[1],"b":{"c":1}},"list":[{"y":1},{"z":2}]}`, jsonvalue.String(root))
	require.Equal(t, `{"keep":{"x":1},"a":{"other":[1],"b":{"c":1}},"list":[{"y":1},{"z":"new"}]}`, jsonvalue.String(got))
}

func TestSetOnNonObjectRoot(t *testing.T) {
	t.Parallel()
	_, err := MustCompile(`$.a`).Set("text", 1)
	require.EqualError(t, err, `expected to find an object with property ['a'] in path $ but found 'string'`)

	got, err := MustCompile(`$[0]`).Set([]any{"x"}, "y")
	require.NoError(t, err)
	require.Equal(t, []any{"y"}, got)

	got, err = MustCompile(`$`).Set(nil, "y")
	require.NoError(t, err)
	require.Equal(t, "y", got)
}
