package intrinsic

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

func TestMathAdd(t *testing.T) {
	t.Parallel()
	const fn = "States.MathAdd"
	runEvalCases(t, []evalCase{
		{name: "Integers", expr: "States.MathAdd($, 3)", input: `-9`, want: `-6`},
		{name: "Decrement", expr: "States.MathAdd($, -1)", input: `111`, want: `110`},
		// Operands are rounded as Math.round does: halves go up.
		{name: "NegativeHalf", expr: "States.MathAdd($, 0)", input: `-1.5`, want: `-1`},
		{name: "BelowNegativeHalf", expr: "States.MathAdd($, 0)", input: `-1.51`, want: `-2`},
		{name: "Half", expr: "States.MathAdd($, 0)", input: `0.5`, want: `1`},
		{name: "TwoAndAHalf", expr: "States.MathAdd($, 0)", input: `2.5`, want: `3`},
		{name: "ThreeAndAHalf", expr: "States.MathAdd($, 0)", input: `3.5`, want: `4`},
		{name: "MinusHalf", expr: "States.MathAdd($, 0)", input: `-0.5`, want: `0`},
		{name: "MinusTwoAndAHalf", expr: "States.MathAdd($, 0)", input: `-2.5`, want: `-2`},
		{name: "RoundEachOperand", expr: "States.MathAdd($, -1.5)", input: `-1.49`, want: `-2`},
		{name: "RoundEachOperandDown", expr: "States.MathAdd($, -1.51)", input: `-1.5`, want: `-3`},
		{name: "BelowHalf", expr: "States.MathAdd($, 0)", input: `1.49`, want: `1`},
		{name: "OneAndAHalf", expr: "States.MathAdd($, 0)", input: `1.5`, want: `2`},
		{name: "AboveHalf", expr: "States.MathAdd($, 0)", input: `1.51`, want: `2`},
		{name: "NegativeBelowHalf", expr: "States.MathAdd($, 0)", input: `-1.49`, want: `-1`},
		{name: "NonTies", expr: "States.MathAdd(1.6, 2.7)", want: `5`},
		{name: "Tiny", expr: "States.MathAdd(0.1, 0.2)", want: `0`},
		{name: "Nested", expr: "States.MathAdd(States.MathAdd(States.MathAdd(44, 9), 6), 4.3)", want: `63`},
		{name: "MaxInt", expr: "States.MathAdd(2147483647, 0)", want: `2147483647`},
		{name: "MinInt", expr: "States.MathAdd(-2147483648, 0)", want: `-2147483648`},
		{name: "UpToMax", expr: "States.MathAdd(2147483646, 1)", want: `2147483647`},
		{name: "DownToMin", expr: "States.MathAdd(-2147483647, -1)", want: `-2147483648`},
		bad("Overflow", "States.MathAdd(2147483647, 1)", ``, fn),
		bad("Underflow", "States.MathAdd(-2147483648, -1)", ``, fn),
		bad("OperandTooLarge", "States.MathAdd(3000000000, 1)", ``, fn),
		bad("OperandTooSmall", "States.MathAdd(-3000000000, 1)", ``, fn),
		bad("String", "States.MathAdd('a', 1)", ``, fn),
		bad("NumericString", "States.MathAdd('-1', 2)", ``, fn),
		bad("Null", "States.MathAdd(null, 1)", ``, fn),
		bad("Boolean", "States.MathAdd(true, 1)", ``, fn),
		bad("Array", "States.MathAdd(-1, $)", `[0,1]`, fn),
		bad("OneArgument", "States.MathAdd(1)", ``, fn),
		bad("ThreeArguments", "States.MathAdd(1, 2, 999)", ``, fn),
	})
}

func TestMathRandom(t *testing.T) {
	t.Parallel()
	const fn = "States.MathRandom"
	// Seeded results are those AWS returned for the same calls.
	runEvalCases(t, []evalCase{
		{name: "Seed42", expr: "States.MathRandom(1, 100, 42)", want: `63`},
		{name: "SeedZero", expr: "States.MathRandom(1, 10, 0)", want: `7`},
		{name: "NegativeSeed", expr: "States.MathRandom(1, 10, -10)", want: `1`},
		{name: "NearMaxInt", expr: "States.MathRandom($, 2147483647, 1)", input: `2147483640`, want: `2147483644`},
		{name: "SeedFromNestedCalls", expr: "States.MathRandom(States.MathAdd(0, 1), States.MathAdd(0, 5), 42)", want: `3`},
		{name: "SingleValue", expr: "States.MathRandom(7, 8, 3)", want: `7`},
		bad("EqualBounds", "States.MathRandom(1, 1)", ``, fn),
		bad("ReversedBounds", "States.MathRandom(10, 5)", ``, fn),
		bad("TruncatedToEqual", "States.MathRandom(1.4, 1.6)", ``, fn),
		bad("RoundedToEqual", "States.MathRandom(1.49, 1.49)", ``, fn),
		bad("StringStart", "States.MathRandom('a', 10)", ``, fn),
		bad("StringEnd", "States.MathRandom(1, 'b')", ``, fn),
		bad("StringSeed", "States.MathRandom(1, 10, 'seed')", ``, fn),
		bad("NullSeed", "States.MathRandom(1, 10, null)", ``, fn),
		bad("RangeTooWide", "States.MathRandom(-2147483648, 2147483647)", ``, fn),
		bad("OneArgument", "States.MathRandom(1)", ``, fn),
		bad("FourArguments", "States.MathRandom(1, 10, 5, 99)", ``, fn),
	})
}

func TestMathRandomRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr     string
		min, max int64 // inclusive, exclusive
	}{
		{"States.MathRandom(9999, 99999)", 9999, 99999},
		{"States.MathRandom(-99999, -9999)", -99999, -9999},
		{"States.MathRandom(1.6, 5.4)", 1, 5},
		{"States.MathRandom(0, 2)", 0, 2},
	}
	for _, tt := range tests {
		b := setup(t, "")
		for range 200 {
			got, err := b.eval(t, tt.expr)
			require.NoError(t, err)
			n, ok := got.(jsonvalue.Number).Int64()
			require.True(t, ok)
			require.GreaterOrEqual(t, n, tt.min, tt.expr)
			require.Less(t, n, tt.max, tt.expr)
		}
	}
}

func TestJavaRandom(t *testing.T) {
	t.Parallel()
	// Values printed by a JVM for the same seeds and bounds.
	r := newJavaRandom(42)
	require.Equal(t, int32(62), r.nextInt(99))
	r = newJavaRandom(42)
	require.Equal(t, int32(0), r.nextInt(10))
	r = newJavaRandom(42)
	require.Equal(t, int32(11), r.nextInt(16))
	r = newJavaRandom(1)
	require.Equal(t, int32(4), r.nextInt(7))
}
