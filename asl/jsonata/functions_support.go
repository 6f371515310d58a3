package jsonata

import (
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"stepwise/jsonvalue"
)

// The helpers of the built-in functions: argument handling, JavaScript's
// number and string conversions, sorting.

// minmax is $max (max set) or $min.
func minmax(max bool) func(c *callCtx, a []any) (any, error) {
	return func(c *callCtx, a []any) (any, error) {
		if a[0] == nil || len(a[0].(*arr).v) == 0 {
			return nil, nil
		}
		vs := a[0].(*arr).v
		m := vs[0].(float64)
		for _, x := range vs[1:] {
			f := x.(float64)
			if (max && f > m) || (!max && f < m) {
				m = f
			}
		}
		return m, nil
	}
}

// wsRe matches the white space $trim collapses.
var wsRe = regexp.MustCompile(`[ \t\n\r]+`)

// num1 is a function of one number that maps undefined to undefined.
func num1(f func(float64) float64) func(c *callCtx, a []any) (any, error) {
	return func(c *callCtx, a []any) (any, error) {
		if a[0] == nil {
			return nil, nil
		}
		return f(a[0].(float64)), nil
	}
}

// spread is $spread of one value.
func spread(v any) any {
	switch t := v.(type) {
	case *arr:
		// As jsonata.js: appending makes a plain array, which a
		// single item does not unwrap.
		var out any = newSeq()
		for _, x := range t.v {
			out = fnAppend(out, spread(x))
		}
		return out
	case *jsonvalue.Object:
		out := newSeq()
		for k, x := range t.All() {
			o := jsonvalue.NewObject(1)
			o.Set(k, x)
			out.push(o)
		}
		return out
	}
	return v
}

// decodeURL is $decodeUrl and $decodeUrlComponent.
func decodeURL(c *callCtx, a []any) (any, error) {
	if a[0] == nil {
		return nil, nil
	}
	s, err := url.PathUnescape(a[0].(string))
	if err != nil {
		return nil, argErr("D3140", c, "Malformed URL passed to $decodeUrlComponent()")
	}
	return s, nil
}

func jsEncode(s, keep string) string {
	var sb strings.Builder
	for _, b := range []byte(s) {
		if b < 0x80 && (b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte(keep, b) >= 0) {
			sb.WriteByte(b)
		} else {
			sb.WriteString("%" + strings.ToUpper(strconv.FormatInt(int64(b)>>4, 16)+strconv.FormatInt(int64(b)&15, 16)))
		}
	}
	return sb.String()
}

func expandReplacement(r string, s string, loc []int) string {
	var sb strings.Builder
	ngroups := len(loc)/2 - 1
	for i := 0; i < len(r); i++ {
		if r[i] == '$' && i+1 < len(r) {
			if r[i+1] == '$' {
				sb.WriteByte('$')
				i++
				continue
			}
			if r[i+1] >= '0' && r[i+1] <= '9' {
				j := i + 1
				g := 0
				for j < len(r) && r[j] >= '0' && r[j] <= '9' {
					ng := g*10 + int(r[j]-'0')
					if ng > ngroups && j > i+1 {
						break
					}
					g = ng
					j++
				}
				if g <= ngroups && loc[2*g] >= 0 {
					sb.WriteString(s[loc[2*g]:loc[2*g+1]])
				}
				i = j - 1
				continue
			}
		}
		sb.WriteByte(r[i])
	}
	return sb.String()
}

func mergeSort(items []any, swap func(a, b any) (bool, error)) ([]any, error) {
	if len(items) <= 1 {
		return items, nil
	}
	mid := len(items) / 2
	l, err := mergeSort(items[:mid], swap)
	if err != nil {
		return nil, err
	}
	r, err := mergeSort(items[mid:], swap)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items))
	i, j := 0, 0
	for i < len(l) && j < len(r) {
		s, err := swap(l[i], r[j])
		if err != nil {
			return nil, err
		}
		if s {
			out = append(out, r[j])
			j++
		} else {
			out = append(out, l[i])
			i++
		}
	}
	out = append(out, l[i:]...)
	return append(out, r[j:]...), nil
}

// jsIntegerToRadix is JavaScript's Number.prototype.toString(radix) for a
// whole number, as V8 computes it (DoubleToRadixCString): digits the
// double cannot hold are written as zeros.
func jsIntegerToRadix(v float64, radix int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	neg := v < 0
	v = math.Abs(v)
	r := float64(radix)
	var buf []byte
	for doubleExponent(v/r) > 0 {
		v /= r
		buf = append(buf, '0')
	}
	for {
		rem := math.Mod(v, r)
		buf = append(buf, digits[int(rem)])
		v = (v - rem) / r
		if v <= 0 {
			break
		}
	}
	if neg {
		buf = append(buf, '-')
	}
	slices.Reverse(buf)
	return string(buf)
}

// doubleExponent is the binary exponent of d's 53-bit integer significand
// (V8's Double::Exponent).
func doubleExponent(d float64) int {
	bits := math.Float64bits(d)
	biased := int(bits >> 52 & 0x7ff)
	if biased == 0 {
		return -1074
	}
	return biased - 1075
}
