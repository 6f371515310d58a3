package intrinsic

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl/jsonpath"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

// evalCase is one row of a function-family table: an expression evaluated
// against an input, with either the compact JSON of the result or the exact
// cause of the States.Runtime failure.
type evalCase struct {
	name  string
	expr  string
	input string // JSON text of "$"; empty means null
	want  string // compact JSON of the result
	cause string // expected failure cause; set for failures
}

type testBundle struct {
	env *jsonpath.Env
}

func setup(t *testing.T, input string) *testBundle {
	t.Helper()
	var in any
	if input != "" {
		v, err := jsonvalue.ParseString(input)
		require.NoError(t, err)
		in = v
	}
	return &testBundle{env: &jsonpath.Env{Input: in, Context: jsonvalue.NewObject(0)}}
}

// eval parses and evaluates expr against the bundle's environment.
func (b *testBundle) eval(t *testing.T, expr string) (any, error) {
	t.Helper()
	c, err := Parse(expr)
	require.NoError(t, err)
	return c.Eval(b.env)
}

func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.input)
			got, err := b.eval(t, tt.expr)
			if tt.cause != "" {
				requireFailure(t, err, tt.cause)
				require.Nil(t, got)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, jsonvalue.String(got))
		})
	}
}

// requireFailure asserts err is the States.Runtime failure with cause.
func requireFailure(t *testing.T, err error, cause string) {
	t.Helper()
	require.Error(t, err)
	f, ok := err.(*failure.Failure)
	require.True(t, ok, "want *failure.Failure, got %T: %v", err, err)
	require.Equal(t, failure.Runtime, f.Name)
	require.True(t, f.HasCause)
	require.Equal(t, cause, f.Cause)
}

// invalid is the cause AWS gives when fn rejects its arguments in expr.
func invalid(expr, fn string) string {
	return "There was an error while evaluating the intrinsic function: " + expr + ". Invalid arguments in " + fn
}

// jsonString quotes s as a JSON string, for building expected values.
func jsonString(s string) string { return string(jsonvalue.AppendString(nil, s)) }

// bad is a row whose call fails with AWS's invalid-arguments cause for fn.
func bad(name, expr, input, fn string) evalCase {
	return evalCase{name: name, expr: expr, input: input, cause: invalid(expr, fn)}
}
