package intrinsic

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl/jsonpath"
	"stepwise/jsonvalue"
)

func TestEvalPathNotFound(t *testing.T) {
	t.Parallel()
	runEvalCases(t, []evalCase{
		{name: "StringToJson", expr: "States.StringToJson($.missing)", input: `{}`,
			cause: "The function 'States.StringToJson($.missing)' had the following error: The JsonPath argument for the field '$.missing' could not be found in the input '{}'"},
		{name: "Hash", expr: "States.Hash($.missing, 'SHA-256')", input: `{}`,
			cause: "The function 'States.Hash($.missing, 'SHA-256')' had the following error: The JsonPath argument for the field '$.missing' could not be found in the input '{}'"},
		{name: "NestedCallNamesOutermost", expr: "States.Format('{}', States.ArrayLength($.items))", input: `{"other":[1]}`,
			cause: "The function 'States.Format('{}', States.ArrayLength($.items))' had the following error: The JsonPath argument for the field '$.items' could not be found in the input '{\"other\":[1]}'"},
		{name: "BeforeArity", expr: "States.MathAdd($.missing)", input: `{}`,
			cause: "The function 'States.MathAdd($.missing)' had the following error: The JsonPath argument for the field '$.missing' could not be found in the input '{}'"},
	})
}

func TestEvalNestedFailureNamesOutermost(t *testing.T) {
	t.Parallel()
	runEvalCases(t, []evalCase{
		{name: "ArrayLengthOfString", expr: "States.ArrayLength(States.JsonToString($))", input: `[1,2,3]`,
			cause: "There was an error while evaluating the intrinsic function: States.ArrayLength(States.JsonToString($)). Invalid arguments in States.ArrayLength"},
		{name: "InnerFails", expr: "States.Array(1, States.MathAdd('a', 1))",
			cause: "There was an error while evaluating the intrinsic function: States.Array(1, States.MathAdd('a', 1)). Invalid arguments in States.MathAdd"},
	})
}

func TestEvalContextAndVariables(t *testing.T) {
	t.Parallel()
	ctx := jsonvalue.NewObject(2)
	ctx.Set("Id", "arn:aws:states:us-east-1:111111111111:stateMachine:sm")
	ctx.Set("Name", "sm")
	c, err := Parse("States.Format('{}', $$)")
	require.NoError(t, err)
	got, err := c.Eval(&jsonpath.Env{Context: ctx})
	require.NoError(t, err)
	require.Equal(t, "{Id=arn:aws:states:us-east-1:111111111111:stateMachine:sm, Name=sm}", got)

	// The context object may be built on first use.
	c, err = Parse("States.StringSplit($$.Name, 'm')")
	require.NoError(t, err)
	got, err = c.Eval(&jsonpath.Env{ContextFunc: func() any { return ctx }})
	require.NoError(t, err)
	require.Equal(t, []any{"s"}, got)

	vars := func(name string) (any, bool) {
		if name == "greeting" {
			v, err := jsonvalue.ParseString(`{"text":"Hi {}","n":[1,2]}`)
			return v, err == nil
		}
		return nil, false
	}
	c, err = Parse("States.Format($greeting.text, States.ArrayLength($greeting.n))")
	require.NoError(t, err)
	got, err = c.Eval(&jsonpath.Env{Vars: vars})
	require.NoError(t, err)
	require.Equal(t, "Hi 2", got)

	c, err = Parse("States.ArrayLength($greeting.missing)")
	require.NoError(t, err)
	_, err = c.Eval(&jsonpath.Env{Vars: vars})
	requireFailure(t, err, "The function 'States.ArrayLength($greeting.missing)' had the following error: The JsonPath argument for the field '$greeting.missing' could not be found in the input '{\"text\":\"Hi {}\",\"n\":[1,2]}'")

	// A nil environment reads null everywhere.
	c, err = Parse("States.Array($)")
	require.NoError(t, err)
	got, err = c.Eval(nil)
	require.NoError(t, err)
	require.Equal(t, []any{nil}, got)
}

func TestEvalDoesNotModifyArguments(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"a":{"x":1},"b":{"y":2},"arr":[3,1,3]}`)
	before := jsonvalue.String(b.env.Input)
	for _, expr := range []string{
		"States.JsonMerge($, $, false)",
		"States.ArrayUnique(States.Array(3, 1, 3))",
		"States.ArrayPartition(States.Array($, $, $), 2)",
		"States.Array($, $)",
	} {
		_, err := b.eval(t, expr)
		require.NoError(t, err, expr)
	}
	require.Equal(t, before, jsonvalue.String(b.env.Input))
}

func TestEvalConcurrent(t *testing.T) {
	t.Parallel()
	c, err := Parse("States.Format('{}-{}', States.MathRandom(1, 100, 42), States.ArrayUnique(States.Array(1, 1, 2)))")
	require.NoError(t, err)
	results := make([][]any, 8)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			for range 50 {
				got, err := c.Eval(&jsonpath.Env{})
				if err != nil {
					got = err.Error()
				}
				results[i] = append(results[i], got)
			}
		})
	}
	wg.Wait()
	for _, rs := range results {
		for _, got := range rs {
			require.Equal(t, "63-[1, 2]", got)
		}
	}
}

func BenchmarkEvalFormat(b *testing.B) {
	c, err := Parse("States.Format('Hello {}, welcome to {}!', $, 'LocalStack')")
	require.NoError(b, err)
	env := &jsonpath.Env{Input: "John"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Eval(env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvalMathAdd(b *testing.B) {
	c, err := Parse("States.MathAdd(States.MathAdd($, 1), -1.5)")
	require.NoError(b, err)
	env := &jsonpath.Env{Input: jsonvalue.Number("41")}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Eval(env); err != nil {
			b.Fatal(err)
		}
	}
}
