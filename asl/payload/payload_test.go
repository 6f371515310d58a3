package payload

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl/jsonpath"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

func mustValue(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonvalue.ParseString(s)
	require.NoError(t, err)
	return v
}

func TestTemplateEval(t *testing.T) {
	t.Parallel()
	tpl, errs := Compile(mustValue(t, `{
		"literal": "$.not.a.path",
		"fromInput.$": "$.a",
		"fromContext.$": "$$.Execution.Id",
		"fromVar.$": "$v.x",
		"call.$": "States.Format('{}-{}', $.a, $v.x)",
		"nested": [{"deep.$": "$.b[1]"}, 3]
	}`))
	require.Empty(t, errs)
	ctx := mustValue(t, `{"Execution": {"Id": "arn:x"}}`)
	env := &jsonpath.Env{
		Input:       mustValue(t, `{"a": "A", "b": [1, 2]}`),
		ContextFunc: func() any { return ctx },
		Vars: func(name string) (any, bool) {
			if name == "v" {
				return mustValue(t, `{"x": 7}`), true
			}
			return nil, false
		},
	}
	out, err := tpl.Eval(env)
	require.NoError(t, err)
	require.Equal(t, `{"literal":"$.not.a.path","fromInput":"A","fromContext":"arn:x","fromVar":7,"call":"A-7","nested":[{"deep":2},3]}`, jsonvalue.String(out))
	var exprs []string
	tpl.Exprs(func(e *Expr) { exprs = append(exprs, e.Text) })
	require.Equal(t, []string{"$.a", "$$.Execution.Id", "$v.x", "States.Format('{}-{}', $.a, $v.x)", "$.b[1]"}, exprs)
}

func TestTemplateLiteralIsShared(t *testing.T) {
	t.Parallel()
	lit := mustValue(t, `{"a": [1, {"b": 2}]}`)
	tpl, errs := Compile(lit)
	require.Empty(t, errs)
	out, err := tpl.Eval(&jsonpath.Env{})
	require.NoError(t, err)
	require.Same(t, lit.(*jsonvalue.Object), out.(*jsonvalue.Object), "a template with no .$ key evaluates to itself")
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	_, errs := Compile(mustValue(t, `{"a.$": 1, "b": {"c.$": "not a path"}, "d": [{"e.$": "States.Nope()"}]}`))
	require.Len(t, errs, 3)
	var ptrs []string
	for _, err := range errs {
		ptrs = append(ptrs, err.(*CompileError).Pointer)
	}
	require.Equal(t, []string{"/a.$", "/b/c.$", "/d/0/e.$"}, ptrs)
	require.Contains(t, errs[0].Error(), "the value of field 'a.$' must be a path or an intrinsic function")
}

func TestPathNotFound(t *testing.T) {
	t.Parallel()
	tpl, errs := Compile(mustValue(t, `{"value.$": "$.no_such_jsonpath"}`))
	require.Empty(t, errs)
	_, err := tpl.Eval(&jsonpath.Env{Input: mustValue(t, `{"x": 1}`)})
	fl, ok := err.(*failure.Failure)
	require.True(t, ok)
	require.Equal(t, failure.Runtime, fl.Name)
	require.Equal(t, `The JSONPath '$.no_such_jsonpath' specified for the field 'value.$' could not be found in the input '{"x":1}'`, fl.Cause)
}
