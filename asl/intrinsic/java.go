package intrinsic

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"stepwise/jsonvalue"
)

// Step Functions runs on the JVM and shows it: arguments become plain Java
// objects (String, Integer, Long, BigInteger, Double, Boolean, null,
// LinkedHashMap, ArrayList) and several functions expose how Java prints,
// hashes and compares them. This file reproduces those behaviours.

// javaKind is the Java class a JSON number becomes.
type javaKind uint8

const (
	javaInteger javaKind = iota
	javaLong
	javaBigInteger
	javaDouble
)

// javaNumber is a JSON number seen as the Java object it becomes.
type javaNumber struct {
	kind javaKind
	i    int64    // javaInteger, javaLong
	big  *big.Int // javaBigInteger
	f    float64  // javaDouble
}

func isIntegerLiteral(s string) bool {
	return !strings.ContainsAny(s, ".eE")
}

func toJavaNumber(n jsonvalue.Number) javaNumber {
	s := string(n)
	if s == "" {
		return javaNumber{kind: javaInteger}
	}
	if isIntegerLiteral(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				return javaNumber{kind: javaInteger, i: i}
			}
			return javaNumber{kind: javaLong, i: i}
		}
		if b, ok := new(big.Int).SetString(s, 10); ok {
			return javaNumber{kind: javaBigInteger, big: b}
		}
	}
	return javaNumber{kind: javaDouble, f: n.Float64()}
}

// appendJavaString appends String.valueOf(v) for the Java object v becomes:
// strings as they are, maps as {k=v, ...}, lists as [a, b], numbers and
// literals as Java prints them.
func appendJavaString(dst []byte, v any) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, t)
	case string:
		return append(dst, t...)
	case jsonvalue.Number:
		return appendJavaNumber(dst, t)
	case []any:
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJavaString(dst, e)
		}
		return append(dst, ']')
	case *jsonvalue.Object:
		dst = append(dst, '{')
		for i, k := range t.Keys() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			_, e := t.At(i)
			dst = append(dst, k...)
			dst = append(dst, '=')
			dst = appendJavaString(dst, e)
		}
		return append(dst, '}')
	default:
		return append(dst, "null"...)
	}
}

func javaString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return string(appendJavaString(nil, v))
}

func appendJavaNumber(dst []byte, n jsonvalue.Number) []byte {
	j := toJavaNumber(n)
	switch j.kind {
	case javaInteger, javaLong:
		return strconv.AppendInt(dst, j.i, 10)
	case javaBigInteger:
		return j.big.Append(dst, 10)
	default:
		return appendJavaDouble(dst, j.f)
	}
}

// appendJavaDouble appends Double.toString(f) as JDK 19+ writes it: the
// shortest decimal that reads back as f (at least two digits), written
// plainly for 1e-3 <= |f| < 1e7 and as d.dddEn otherwise, always with a
// fractional digit.
func appendJavaDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
		if !strings.Contains(string(dst[start:]), ".") {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d.ddde±XX
	if !strings.Contains(string(e), ".") {
		// Java picks among two-digit decimals when one digit would do,
		// the closest to f: 4.9E-324 rather than 5.0E-324.
		e = strconv.AppendFloat(buf[:0], f, 'e', 1, 64)
	}
	mant, exp, _ := strings.Cut(string(e), "e")
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		mant = strings.TrimRight(mant, "0")
		if mant[len(mant)-1] == '.' {
			mant += "0"
		}
	}
	dst = append(dst, mant...)
	dst = append(dst, 'E')
	if exp[0] == '-' {
		dst = append(dst, '-')
	}
	exp = strings.TrimLeft(exp[1:], "0")
	if exp == "" {
		exp = "0"
	}
	return append(dst, exp...)
}

// javaHash returns hashCode() of the Java object v becomes (0 for null, as
// HashMap treats it).
func javaHash(v any) int32 {
	switch t := v.(type) {
	case nil:
		return 0
	case bool:
		if t {
			return 1231
		}
		return 1237
	case string:
		return javaStringHash(t)
	case jsonvalue.Number:
		j := toJavaNumber(t)
		switch j.kind {
		case javaInteger:
			return int32(j.i)
		case javaLong:
			return int32(j.i ^ int64(uint64(j.i)>>32))
		case javaBigInteger:
			return javaBigIntegerHash(j.big)
		default:
			bits := math.Float64bits(j.f)
			if j.f != j.f {
				bits = 0x7ff8000000000000 // doubleToLongBits canonical NaN
			}
			return int32(bits ^ bits>>32)
		}
	case []any:
		h := int32(1)
		for _, e := range t {
			h = 31*h + javaHash(e)
		}
		return h
	case *jsonvalue.Object:
		var h int32
		for k, e := range t.All() {
			h += javaStringHash(k) ^ javaHash(e)
		}
		return h
	default:
		return 0
	}
}

// javaStringHash is String.hashCode over the UTF-16 code units of s.
func javaStringHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			h = 31*h + int32(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + r1
			h = 31*h + r2
			continue
		}
		h = 31*h + r
	}
	return h
}

// javaBigIntegerHash is BigInteger.hashCode: the magnitude's 32-bit words,
// most significant first, folded with 31, times the sign.
func javaBigIntegerHash(b *big.Int) int32 {
	mag := b.Bytes()
	var h int32
	// Walk 32-bit words from the most significant, padding the first.
	first := len(mag) % 4
	word := func(bs []byte) int32 {
		var w uint32
		for _, x := range bs {
			w = w<<8 | uint32(x)
		}
		return int32(w)
	}
	if first > 0 {
		h = 31*h + word(mag[:first])
	}
	for i := first; i < len(mag); i += 4 {
		h = 31*h + word(mag[i:i+4])
	}
	return h * int32(b.Sign())
}

// javaEqual is equals() between the Java objects a and b become: numbers of
// different Java classes differ, doubles compare by bits, maps ignore order.
func javaEqual(a, b any) bool { return jsonvalue.EqualWith(a, b, javaNumbersEqual) }

func javaNumbersEqual(x, y jsonvalue.Number) bool {
	m, n := toJavaNumber(x), toJavaNumber(y)
	if m.kind != n.kind {
		return false
	}
	switch m.kind {
	case javaInteger, javaLong:
		return m.i == n.i
	case javaBigInteger:
		return m.big.Cmp(n.big) == 0
	default:
		return math.Float64bits(m.f) == math.Float64bits(n.f) || m.f != m.f && n.f != n.f
	}
}

// javaHashSetOrder returns the indexes of the distinct values of vals (the
// first of each equal run) in the order new java.util.HashSet<>(vals)
// iterates them: by bucket of the table HashSet sizes for len(vals)
// elements, then in insertion order within a bucket.
func javaHashSetOrder(vals []any) []int {
	// HashSet(Collection c) sizes its map for max(c.size()/.75f + 1, 16).
	capacity := max(int(float32(len(vals))/0.75)+1, 16)
	table := 1
	for table < capacity {
		table <<= 1
	}
	mask := uint32(table - 1)

	type entry struct {
		idx    int
		bucket uint32
	}
	seen := make(map[int32][]int, len(vals)) // hash -> indexes kept
	kept := make([]entry, 0, len(vals))
outer:
	for i, v := range vals {
		h := javaHash(v)
		for _, j := range seen[h] {
			if javaEqual(vals[j], v) {
				continue outer
			}
		}
		seen[h] = append(seen[h], i)
		spread := uint32(h) ^ uint32(h)>>16
		kept = append(kept, entry{idx: i, bucket: spread & mask})
	}
	// Stable by bucket: insertion order within a bucket is kept.
	slices.SortStableFunc(kept, func(a, b entry) int { return cmp.Compare(a.bucket, b.bucket) })
	order := make([]int, len(kept))
	for i, e := range kept {
		order[i] = e.idx
	}
	return order
}

// javaRound is Math.round(double): the closest long, ties rounding up.
func javaRound(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	r := math.Floor(f)
	if f-r >= 0.5 {
		r++
	}
	return int64(r)
}

// truncInt returns a number argument truncated toward zero, as AWS does for
// counts, indexes and bounds. It fails for non-numbers and for values that
// do not fit in a Java int.
func truncInt(v any) (int64, bool) {
	n, ok := v.(jsonvalue.Number)
	if !ok {
		return 0, false
	}
	j := toJavaNumber(n)
	var i int64
	switch j.kind {
	case javaInteger, javaLong:
		i = j.i
	case javaBigInteger:
		return 0, false
	default:
		f := math.Trunc(j.f)
		if f != f || f < math.MinInt32 || f > math.MaxInt32 {
			return 0, false
		}
		i = int64(f)
	}
	if i < math.MinInt32 || i > math.MaxInt32 {
		return 0, false
	}
	return i, true
}
