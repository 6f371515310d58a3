package intrinsic

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
)

func TestAppendJavaDouble(t *testing.T) {
	t.Parallel()
	// Double.toString results printed by a JDK 25 JVM.
	tests := []struct {
		f    float64
		want string
	}{
		{1.0, "1.0"},
		{100.0, "100.0"},
		{1e7, "1.0E7"},
		{1.0e-4, "1.0E-4"},
		{0.001, "0.001"},
		{123456.789, "123456.789"},
		{1e21, "1.0E21"},
		{1e23, "1.0E23"},
		{math.Copysign(0, -1), "-0.0"},
		{0, "0.0"},
		{9999999.999, "9999999.999"},
		{1.5e300, "1.5E300"},
		{4.9e-324, "4.9E-324"},
		{2e-3, "0.002"},
		{12345678.9, "1.23456789E7"},
		{math.Inf(1), "Infinity"},
		{math.Inf(-1), "-Infinity"},
		{math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, string(appendJavaDouble(nil, tt.f)), "%v", tt.f)
	}
	a, b := 0.1, 0.2
	require.Equal(t, "0.30000000000000004", string(appendJavaDouble(nil, a+b)))
}

func TestJavaString(t *testing.T) {
	t.Parallel()
	obj := jsonvalue.NewObject(2)
	obj.Set("Arg1", jsonvalue.Number("1"))
	obj.Set("Arg2", []any{})
	require.Equal(t, "{Arg1=1, Arg2=[]}", javaString(obj))
	require.Equal(t, "[null, true, x, 2147483648, 1.5]", javaString([]any{nil, true, "x", jsonvalue.Number("2147483648"), jsonvalue.Number("15e-1")}))
	require.Equal(t, "{}", javaString(jsonvalue.NewObject(0)))
	require.Equal(t, "0", javaString(jsonvalue.Number("")))
}

func TestJavaHash(t *testing.T) {
	t.Parallel()
	// hashCode() values of the Java objects, printed by a JVM.
	require.Equal(t, int32(0), javaHash(nil))
	require.Equal(t, int32(1231), javaHash(true))
	require.Equal(t, int32(1237), javaHash(false))
	require.Equal(t, int32(69609650), javaHash("Hello"))
	require.Equal(t, int32(1773027), javaHash("🚀"))
	require.Equal(t, int32(7), javaHash(jsonvalue.Number("7")))
	require.Equal(t, int32(-2147483648), javaHash(jsonvalue.Number("2147483648")))
	require.Equal(t, int32(1072693248), javaHash(jsonvalue.Number("1.0")))
	require.Equal(t, int32(994), javaHash([]any{jsonvalue.Number("1"), jsonvalue.Number("2")}))
	require.Equal(t, int32(1915528825), javaHash(jsonvalue.Number("123456789012345678901234567890")))
	require.Equal(t, int32(-1915528825), javaHash(jsonvalue.Number("-123456789012345678901234567890")))
}

func TestJavaRound(t *testing.T) {
	t.Parallel()
	tests := map[float64]int64{
		0.5: 1, -0.5: 0, 1.5: 2, -1.5: -1, 2.5: 3, -2.5: -2, 0.49999999999999994: 0,
		-1.51: -2, 1e300: math.MaxInt64, -1e300: math.MinInt64, math.NaN(): 0,
	}
	for f, want := range tests {
		require.Equal(t, want, javaRound(f), "%v", f)
	}
}
