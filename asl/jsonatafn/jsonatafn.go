package jsonatafn

import (
	"encoding/hex"
	"math"
	"math/rand/v2"

	"stepwise/asl/intrinsic"
	"stepwise/asl/jsonata"
	"stepwise/jsonvalue"
)

// MaxRangeItems is the most items $range returns, as for States.ArrayRange.
const MaxRangeItems = 1000

// Env is what the functions draw on besides their arguments.
type Env struct {
	// Rand returns uniform numbers in [0, 1) for $random() without a seed
	// and for $uuid(). Nil uses math/rand/v2; give a deterministic source
	// when evaluations are replayed.
	Rand func() float64
}

// Error is a failure of one of these functions on arguments of the right
// JSONata type. The interpreter reports it as States.QueryEvaluationError
// with Message in the cause.
type Error struct {
	Message string
}

func (e *Error) Error() string { return e.Message }

func fail(msg string) error { return &Error{Message: msg} }

// Funcs returns the Step Functions JSONata functions bound to env, keyed by
// name without the $.
func Funcs(env Env) map[string]*jsonata.Func {
	if env.Rand == nil {
		env.Rand = rand.Float64
	}
	return map[string]*jsonata.Func{
		"partition": {Signature: "<an:a>", Fn: partition},
		"range":     {Signature: "<nnn:a>", Fn: rangeFn},
		"hash":      {Signature: "<ss:s>", Fn: hashFn},
		"random":    {Signature: "<n?:n>", Fn: env.random},
		"uuid":      {Signature: "<:s>", Fn: env.uuid},
		"parse":     {Signature: "<s:j>", Fn: parse},
	}
}

// arg returns args[i], or nil when the call left it undefined.
func arg(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// integer reads a number argument that must be a whole number.
func integer(v any) (int64, bool) {
	n, ok := v.(jsonvalue.Number)
	if !ok || !n.IsInteger() {
		return 0, false
	}
	return n.Int64()
}

func partition(args []any) (any, error) {
	items, _ := arg(args, 0).([]any)
	size, ok := integer(arg(args, 1))
	if !ok || size <= 0 {
		return nil, fail("Invalid arguments in $partition: the chunk size must be a positive integer")
	}
	out := make([]any, 0, (int64(len(items))+size-1)/size)
	for len(items) > 0 {
		n := int(min(size, int64(len(items))))
		out = append(out, items[:n:n])
		items = items[n:]
	}
	return out, nil
}

func rangeFn(args []any) (any, error) {
	start, ok1 := integer(arg(args, 0))
	end, ok2 := integer(arg(args, 1))
	step, ok3 := integer(arg(args, 2))
	switch {
	case !ok1 || !ok2 || !ok3:
		return nil, fail("Invalid arguments in $range: the start, end and step must be integers")
	case step == 0:
		return nil, fail("Invalid arguments in $range: the step must not be zero")
	}
	var count int64
	if (step > 0 && start <= end) || (step < 0 && start >= end) {
		// (end-start)/step cannot overflow for int64 bounds read from float64.
		count = (end-start)/step + 1
	}
	if count > MaxRangeItems {
		return nil, fail("Invalid arguments in $range: the range can contain at most 1000 items")
	}
	out := make([]any, count)
	for i := range out {
		out[i] = jsonvalue.NumberFromInt(start + int64(i)*step)
	}
	// A JSONata sequence of one item is that item; none is undefined.
	switch count {
	case 0:
		return nil, nil
	case 1:
		return out[0], nil
	}
	return out, nil
}

func hashFn(args []any) (any, error) {
	data, _ := arg(args, 0).(string)
	alg, _ := arg(args, 1).(string)
	h := intrinsic.NewHash(alg)
	if h == nil {
		return nil, fail("Invalid arguments in $hash: the algorithm must be one of MD5, SHA-1, SHA-256, SHA-384, SHA-512")
	}
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (env Env) random(args []any) (any, error) {
	if arg(args, 0) == nil {
		return jsonvalue.NumberFromFloat(env.Rand()), nil
	}
	seed, ok := integer(args[0])
	if !ok {
		return nil, fail("Invalid arguments in $random: the seed must be an integer")
	}
	return jsonvalue.NumberFromFloat(newJavaRandom(seed).nextDouble()), nil
}

// uuid builds a version 4 UUID from four 32-bit draws of Rand.
func (env Env) uuid([]any) (any, error) {
	var u [16]byte
	for i := 0; i < 16; i += 4 {
		x := uint32(env.Rand() * (1 << 32))
		u[i], u[i+1], u[i+2], u[i+3] = byte(x>>24), byte(x>>16), byte(x>>8), byte(x)
	}
	return intrinsic.UUIDv4(u), nil
}

func parse(args []any) (any, error) {
	s, _ := arg(args, 0).(string)
	v, err := jsonvalue.ParseString(s)
	if err != nil {
		return nil, fail("Invalid arguments in $parse: the argument is not valid JSON: " + err.Error())
	}
	if v == nil {
		return jsonata.Null, nil
	}
	return v, nil
}

// javaRandom is java.util.Random's 48-bit linear congruential generator.
type javaRandom struct{ seed int64 }

const (
	javaMultiplier = 0x5DEECE66D
	javaMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaMultiplier) & javaMask}
}

func (r *javaRandom) next(bits uint) int64 {
	r.seed = (r.seed*javaMultiplier + 0xB) & javaMask
	return int64(int32(r.seed >> (48 - bits)))
}

// nextDouble is Random.nextDouble: 53 random bits scaled into [0, 1).
func (r *javaRandom) nextDouble() float64 {
	hi := r.next(26)
	lo := r.next(27)
	return float64(hi<<27+lo) * math.Ldexp(1, -53)
}
