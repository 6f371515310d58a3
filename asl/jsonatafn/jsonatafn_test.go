package jsonatafn

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl/jsonata"
	"stepwise/jsonvalue"
)

type testBundle struct {
	env Env
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	draws := []float64{0.25, 0.5, 0.75, 0.125}
	i := 0
	return &testBundle{env: Env{Rand: func() float64 {
		f := draws[i%len(draws)]
		i++
		return f
	}}}
}

// eval evaluates expr with the functions bound and returns the result as
// JSON text ("" when undefined), or the error.
func (b *testBundle) eval(t *testing.T, expr, input string) (string, error) {
	t.Helper()
	e, err := jsonata.Compile(expr)
	require.NoError(t, err)
	var in any
	if input != "" {
		in, err = jsonvalue.ParseString(input)
		require.NoError(t, err)
	}
	v, ok, err := e.EvalWith(in, input != "", &jsonata.Options{Funcs: Funcs(b.env)})
	if err != nil || !ok {
		return "", err
	}
	return jsonvalue.String(v), nil
}

func TestFuncs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr, input, want string
	}{
		// The recorded AWS results for $partition and $range.
		{"PartitionSingle", `$partition([0], 2)`, ``, `[[0]]`},
		{"PartitionEven", `$partition(fst, snd)`, `{"fst":[0,1,2,3],"snd":2}`, `[[0,1],[2,3]]`},
		{"PartitionRemainder", `$partition([0,1,2], 2)`, ``, `[[0,1],[2]]`},
		{"PartitionLarger", `$partition([0,1,2,3], 5)`, ``, `[[0,1,2,3]]`},
		{"PartitionEmpty", `$partition([], 3)`, ``, `[]`},
		{"PartitionObjects", `$partition([{"a":1},"x",null,true], 3)`, ``, `[[{"a":1},"x",null],[true]]`},
		{"RangeInclusiveEnd", `$range(0, 9, 3)`, ``, `[0,3,6,9]`},
		{"RangePastEnd", `$range(0, 10, 3)`, ``, `[0,3,6,9]`},
		{"RangeOneItemIsTheItem", `$range(1, 9, 9)`, ``, `1`},
		{"RangeOdd", `$range(1, 9, 2)`, ``, `[1,3,5,7,9]`},
		{"RangeDescending", `$range(3, -3, -2)`, ``, `[3,1,-1,-3]`},
		{"RangeWrongDirectionIsUndefined", `$range(5, 1, 1)`, ``, ``},
		{"RangeCount", `$count($range(1, 1000, 1))`, ``, `1000`},
		{"HashMD5", `$hash('hello', 'MD5')`, ``, `"5d41402abc4b2a76b9719d911017c592"`},
		{"HashSHA1", `$hash('hello', 'SHA-1')`, ``, `"aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"`},
		{"HashSHA256", `$hash('hello', 'SHA-256')`, ``, `"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"`},
		{"HashSHA384Length", `$length($hash('', 'SHA-384'))`, ``, `96`},
		{"HashSHA512Length", `$length($hash('', 'SHA-512'))`, ``, `128`},
		{"HashUTF8", `$hash('é', 'MD5')`, ``, `"66ddcd97cfdeabb2f6fb8a999b4bc76f"`},
		{"RandomSeeded", `$random(42)`, ``, `0.7275636800328681`},
		{"RandomSeedZero", `$random(0)`, ``, `0.730967787376657`},
		{"RandomSeedIsStable", `$random(7) = $random(7)`, ``, `true`},
		{"RandomFromEnv", `[$random(), $random()]`, ``, `[0.25,0.5]`},
		{"ParseZero", `$parse('-0')`, ``, `0`},
		{"ParseNumber", `$parse('1.1')`, ``, `1.1`},
		{"ParseString", `$parse('"HelloWorld"')`, ``, `"HelloWorld"`},
		{"ParseArray", `$parse(s)`, `{"s":"[1, 2, \"HelloWorld\"]"}`, `[1,2,"HelloWorld"]`},
		{"ParseObject", `$parse('{"Arg1": 1, "Arg2": []}')`, ``, `{"Arg1":1,"Arg2":[]}`},
		{"ParseNull", `$type($parse('null'))`, ``, `"null"`},
		{"ParseTrue", `$parse('true')`, ``, `true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			got, err := b.eval(t, tt.expr, tt.input)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestFuncsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, expr, want string
	}{
		{"PartitionZero", `$partition([1], 0)`, "Invalid arguments in $partition: the chunk size must be a positive integer"},
		{"PartitionFraction", `$partition([1], 1.5)`, "Invalid arguments in $partition: the chunk size must be a positive integer"},
		{"RangeFraction", `$range(0, 2.5, 1)`, "Invalid arguments in $range: the start, end and step must be integers"},
		{"RangeZeroStep", `$range(0, 2, 0)`, "Invalid arguments in $range: the step must not be zero"},
		{"RangeTooLong", `$range(1, 1001, 1)`, "Invalid arguments in $range: the range can contain at most 1000 items"},
		{"HashAlgorithm", `$hash('a', 'sha256')`, "Invalid arguments in $hash: the algorithm must be one of MD5, SHA-1, SHA-256, SHA-384, SHA-512"},
		{"RandomSeedFraction", `$random(1.5)`, "Invalid arguments in $random: the seed must be an integer"},
		{"ParseInvalid", `$parse('{')`, "Invalid arguments in $parse: the argument is not valid JSON: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.eval(t, tt.expr, "")
			var fe *Error
			require.ErrorAs(t, err, &fe)
			require.Contains(t, fe.Message, tt.want)
			require.Equal(t, tt.want, fe.Message[:len(tt.want)])
		})
	}
}

func TestFuncsSignatures(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, code string }{
		{`$hash(1, 'MD5')`, "T0410"},
		{`$partition([1], 'a')`, "T0410"},
		{`$uuid(1)`, "T0410"},
		{`$parse(1)`, "T0410"},
		{`$range(1, 2)`, "T0410"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.eval(t, tt.expr, "")
			var je *jsonata.Error
			require.ErrorAs(t, err, &je)
			require.Equal(t, tt.code, je.Code)
		})
	}
}

func TestUUID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	got, err := b.eval(t, `$uuid()`, "")
	require.NoError(t, err)
	// Draws 0.25, 0.5, 0.75, 0.125 are the words 40000000 80000000 c0000000 20000000.
	require.Equal(t, `"40000000-8000-4000-8000-000020000000"`, got)

	b.env.Rand = nil // math/rand/v2
	got, err = b.eval(t, `$uuid()`, "")
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$`), got)
	other, err := b.eval(t, `$uuid()`, "")
	require.NoError(t, err)
	require.NotEqual(t, got, other)
}

func TestRandomReplays(t *testing.T) {
	t.Parallel()
	first, err := setup(t).eval(t, `[$random(), $uuid(), $random()]`, "")
	require.NoError(t, err)
	again, err := setup(t).eval(t, `[$random(), $uuid(), $random()]`, "")
	require.NoError(t, err)
	require.Equal(t, first, again, "the same Rand sequence gives the same values")
}
