package jsonata

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

func TestEvalWithHostBindings(t *testing.T) {
	t.Parallel()
	e, err := Compile(`{"sum": $add(x, $y), "now": $now(), "ms": $millis(), "day": $now("[Y0001]-[M01]-[D01]")}`)
	require.NoError(t, err)
	at := time.Date(2024, 3, 5, 6, 7, 8, 9e6, time.UTC)
	in, err := jsonvalue.ParseString(`{"x": 2}`)
	require.NoError(t, err)
	got, ok, err := e.EvalWith(in, true, &Options{
		Vars: map[string]any{"y": jsonvalue.Number("40")},
		Funcs: map[string]*Func{"add": {Signature: "<nn:n>", Fn: func(a []any) (any, error) {
			return jsonvalue.Number(string(a[0].(jsonvalue.Number)) + "0"), nil
		}}},
		Now: func() time.Time { return at },
	})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, `{"sum":20,"now":"2024-03-05T06:07:08.009Z","ms":1709618828009,"day":"2024-03-05"}`, jsonvalue.String(got))

	boom := errors.New("boom")
	e, err = Compile(`$fail()`)
	require.NoError(t, err)
	_, _, err = e.EvalWith(nil, false, &Options{Funcs: map[string]*Func{"fail": {Fn: func([]any) (any, error) { return nil, boom }}}})
	require.ErrorIs(t, err, boom)

	e, err = Compile(`$add("a", 1)`)
	require.NoError(t, err)
	_, _, err = e.EvalWith(nil, false, &Options{Funcs: map[string]*Func{"add": {Signature: "<nn:n>", Fn: func([]any) (any, error) { return nil, nil }}}})
	var je *Error
	require.ErrorAs(t, err, &je)
	require.Equal(t, "T0410", je.Code)
}

func TestEvalWithLookup(t *testing.T) {
	t.Parallel()
	e, err := Compile(`[$a, $a, $b, $count([1,2])]`)
	require.NoError(t, err)
	calls := 0
	got, ok, err := e.EvalWith(nil, false, &Options{Lookup: func(name string) (any, bool) {
		calls++
		if name == "a" {
			return jsonvalue.Number("7"), true
		}
		return nil, false
	}})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, `[7,7,2]`, jsonvalue.String(got))
	require.Equal(t, 3, calls, "a is looked up once; b and count once each")
}

func TestEvalWithHostNull(t *testing.T) {
	t.Parallel()
	e, err := Compile(`[$type($null()), $type($undef())]`)
	require.NoError(t, err)
	got, ok, err := e.EvalWith(nil, false, &Options{Funcs: map[string]*Func{
		"null":  {Fn: func([]any) (any, error) { return Null, nil }},
		"undef": {Fn: func([]any) (any, error) { return nil, nil }},
	}})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, `["null"]`, jsonvalue.String(got), "undefined drops out of the array")
}

func TestNumberOutputFollowsJavaScript(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{`1234567.5`, `1234567.5`},
		{`123456789012.25`, `123456789012.25`},
		{`0.000001`, `0.000001`},
		{`0.0000001`, `1e-7`},
		{`1e21`, `1e+21`},
		{`1e20`, `100000000000000000000`},
		{`-1.5e-9`, `-1.5e-9`},
		{`-0`, `0`},
		{`0 * -1`, `0`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			e, err := Compile(tt.expr)
			require.NoError(t, err)
			got, ok, err := e.Eval(nil, nil)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, tt.want, jsonvalue.String(got))
		})
	}
}
