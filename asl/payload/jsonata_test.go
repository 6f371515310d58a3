package payload

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/jsonvalue"
)

func TestReadsContext(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		"$states.input.a + 1":                       false,
		"$states.result.x & $states.errorOutput":    false,
		"$x":                                        false,
		"$states.context.Execution.Id":              true,
		"$states":                                   true,
		"$s := $states; $s.context":                 true,
		"$states.inputs":                            true,
		"$lookup($states, 'context')":               true,
		"$map([1], function($v) { $states.input })": false,
	} {
		require.Equal(t, want, readsContext(src), src)
	}
}

func TestJSONataEval(t *testing.T) {
	t.Parallel()
	v, err := jsonvalue.ParseString(`{"a": "{% $states.input.n * 2 %}", "b": ["{% $states.context.Name %}", "lit"], "c": {"d": "{% $states.result %}"}}`)
	require.NoError(t, err)
	tpl, errs := CompileJSONata(v)
	require.Empty(t, errs)
	contexts := 0
	env := &JSONataEnv{
		Input:      mustJSON(t, `{"n": 21}`),
		Context:    func() any { contexts++; return mustJSON(t, `{"Name": "ctx"}`) },
		ResultName: "result",
		Result:     "r",
	}
	out, err := tpl.Eval(env, "Output")
	require.NoError(t, err)
	require.Equal(t, `{"a":42,"b":["ctx","lit"],"c":{"d":"r"}}`, jsonvalue.String(out))
	require.Equal(t, 1, contexts, "the context is built only for the expression that reads it")

	v, err = jsonvalue.ParseString(`{"x": ["{% $nothing %}"]}`)
	require.NoError(t, err)
	tpl, errs = CompileJSONata(v)
	require.Empty(t, errs)
	_, err = tpl.Eval(env, "Output")
	fl, ok := err.(*failure.Failure)
	require.True(t, ok, "%T", err)
	require.Equal(t, failure.QueryEvaluationError, fl.Name)
	require.Equal(t, "Output/x/0", fl.Location)
	require.Equal(t, "The JSONata expression '$nothing' specified for the field 'Output/x/0' returned nothing (undefined).", fl.Cause)
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonvalue.ParseString(s)
	require.NoError(t, err)
	return v
}
