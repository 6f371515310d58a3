package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEval(t *testing.T) {
	t.Parallel()
	b := setup(t)
	inFile := b.write(t, "in.json", `{"items":[{"price":2},{"price":3}]}`)
	tests := []struct {
		name string
		args []string
		out  string
		code int
	}{
		{"Value", []string{"--jsonata", `$sum(items.price) * $rate`, "--input-file", inFile, "--var", "rate=10"}, `{"value":50}`, 0},
		{"StatesInput", []string{"--jsonata", `$states.input.a & "/" & a`, "--input", `{"a":"x"}`}, `{"value":"x/x"}`, 0},
		{"Template", []string{"--jsonata", `{% $states.input.a %}`, "--input", `{"a":[1,2]}`}, `{"value":[1,2]}`, 0},
		{"Undefined", []string{"--jsonata", `missing`, "--input", `{}`}, `{}`, 0},
		{"NoInput", []string{"--jsonata", `[$, $states.input, 1]`}, `{"value":[1]}`, 0},
		{"VarWithCommas", []string{"--jsonata", `$v.b`, "--var", `v={"a":1,"b":[1,2]}`}, `{"value":[1,2]}`, 0},
		{"LaterVarWins", []string{"--jsonata", `$v`, "--var", `v=1`, "--var", `$v=2`}, `{"value":2}`, 0},
		{"StepFunctionsFunction", []string{"--jsonata", `$partition([1,2,3], 2)`}, `{"value":[[1,2],[3]]}`, 0},
		{"NumberFormat", []string{"--jsonata", `1234567.5 & ""`}, `{"value":"1234567.5"}`, 0},
		{"SyntaxError", []string{"--jsonata", `1 +`}, `{"error":"S0207","message":"Unexpected end of expression"}`, 1},
		{"TypeError", []string{"--jsonata", `"a" + 1`}, `{"error":"T2001","message":"The left side of the + operator must evaluate to a number"}`, 1},
		{"FunctionError", []string{"--jsonata", `$range(1, 2, 0)`}, `{"error":"States.QueryEvaluationError","message":"Invalid arguments in $range: the step must not be zero"}`, 1},
		{"JSONPath", []string{"--jsonpath", `$.items[1].price`, "--input-file", inFile}, `{"value":3}`, 0},
		{"JSONPathVariable", []string{"--jsonpath", `$v.a`, "--var", `v={"a":null}`}, `{"value":null}`, 0},
		{"JSONPathNotFound", []string{"--jsonpath", `$.b`, "--input", `{"a":1}`}, `{"error":"States.Runtime","message":"Invalid path '$.b' : No results for path: $['b']"}`, 1},
		{"JSONPathSyntax", []string{"--jsonpath", `$.[`}, `{"error":"InvalidDefinition","message":"invalid path \"$.[\": missing ']' (at offset 2)"}`, 1},
		{"Intrinsic", []string{"--intrinsic", `States.Format('{} and {}', $.a, $v)`, "--input", `{"a":1}`, "--var", `v="b"`}, `{"value":"1 and b"}`, 0},
		{"IntrinsicFails", []string{"--intrinsic", `States.ArrayGetItem($.a, 5)`, "--input", `{"a":[1]}`}, `{"error":"States.Runtime","message":"There was an error while evaluating the intrinsic function: States.ArrayGetItem($.a, 5). Invalid arguments in States.ArrayGetItem"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := execute(append([]string{"eval"}, tt.args...)...)
			require.Equal(t, tt.out+"\n", out, errOut)
			require.Equal(t, "", errOut)
			require.Equal(t, tt.code, code)
		})
	}
}

func TestEvalUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		err  string
	}{
		{"NoExpression", nil, "stepwise: give exactly one of --jsonata, --jsonpath, --intrinsic\n"},
		{"TwoExpressions", []string{"--jsonata", "1", "--jsonpath", "$"}, "stepwise: give exactly one of --jsonata, --jsonpath, --intrinsic\n"},
		{"BadInput", []string{"--jsonata", "1", "--input", "{"}, "stepwise: invalid input: "},
		{"BadVar", []string{"--jsonata", "1", "--var", "x"}, "stepwise: --var wants NAME=JSON, got x\n"},
		{"BadVarJSON", []string{"--jsonata", "1", "--var", "x={"}, "stepwise: --var x: invalid JSON: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := execute(append([]string{"eval"}, tt.args...)...)
			require.Equal(t, "", out)
			require.Equal(t, 2, code)
			require.Equal(t, tt.err, errOut[:min(len(errOut), len(tt.err))])
		})
	}
}
