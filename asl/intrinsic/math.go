package intrinsic

import (
	"math"
	"math/rand/v2"

	"stepwise/jsonvalue"
)

var mathFunctions = []*function{
	{name: "States.MathRandom", minArgs: 2, maxArgs: 3, evalRand: evalMathRandom},
	{name: "States.MathAdd", minArgs: 2, maxArgs: 2, eval: evalMathAdd},
}

// evalMathRandom returns an integer in [start, end). Bounds are truncated
// toward zero and start must be below end. With a seed the result is
// start + new java.util.Random(seed).nextInt(end - start), the value AWS
// returns for the same seed.
func evalMathRandom(c *Call, r *rand.Rand, args []any) (any, error) {
	start, ok1 := truncInt(args[0])
	end, ok2 := truncInt(args[1])
	if !ok1 || !ok2 || start >= end || end-start > math.MaxInt32 {
		return nil, invalidArgs(c)
	}
	bound := int32(end - start)
	if len(args) == 3 {
		seed, ok := seedValue(args[2])
		if !ok {
			return nil, invalidArgs(c)
		}
		r := newJavaRandom(seed)
		return jsonvalue.NumberFromInt(start + int64(r.nextInt(bound))), nil
	}
	return jsonvalue.NumberFromInt(start + r.Int64N(int64(bound))), nil
}

// seedValue reads a seed as a Java long, truncating fractions.
func seedValue(v any) (int64, bool) {
	n, ok := v.(jsonvalue.Number)
	if !ok {
		return 0, false
	}
	j := toJavaNumber(n)
	switch j.kind {
	case javaInteger, javaLong:
		return j.i, true
	case javaDouble:
		f := math.Trunc(j.f)
		if f != f || f < math.MinInt64 || f >= math.MaxInt64 {
			return 0, false
		}
		return int64(f), true
	default:
		return 0, false
	}
}

// evalMathAdd adds two numbers after rounding each as Math.round does
// (halves toward positive infinity: -1.5 gives -1, 2.5 gives 3). Operands
// and sum must fit in a Java int.
func evalMathAdd(c *Call, args []any) (any, error) {
	var sum int64
	for _, a := range args {
		n, ok := a.(jsonvalue.Number)
		if !ok {
			return nil, invalidArgs(c)
		}
		j := toJavaNumber(n)
		var i int64
		switch j.kind {
		case javaInteger, javaLong:
			i = j.i
		case javaBigInteger:
			return nil, invalidArgs(c)
		default:
			i = javaRound(j.f)
		}
		if i < math.MinInt32 || i > math.MaxInt32 {
			return nil, invalidArgs(c)
		}
		sum += i
	}
	if sum < math.MinInt32 || sum > math.MaxInt32 {
		return nil, invalidArgs(c)
	}
	return jsonvalue.NumberFromInt(sum), nil
}

// javaRandom is java.util.Random's 48-bit linear congruential generator.
type javaRandom struct{ seed int64 }

const (
	javaRandomMultiplier = 0x5DEECE66D
	javaRandomMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaRandomMultiplier) & javaRandomMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaRandomMultiplier + 0xB) & javaRandomMask
	return int32(r.seed >> (48 - bits))
}

// nextInt is Random.nextInt(bound) for bound > 0.
func (r *javaRandom) nextInt(bound int32) int32 {
	x := r.next(31)
	m := bound - 1
	if bound&m == 0 { // power of two
		return int32(int64(bound) * int64(x) >> 31)
	}
	for u := x; ; u = r.next(31) {
		x = u % bound
		if u-x+m >= 0 { // int overflow means a biased draw: retry
			return x
		}
	}
}
