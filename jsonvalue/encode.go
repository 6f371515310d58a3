package jsonvalue

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// Marshal returns the compact JSON text of v.
func Marshal(v any) []byte { return Append(nil, v) }

// String returns the compact JSON text of v as a string.
func String(v any) string { return string(Append(nil, v)) }

// Append appends the compact JSON text of v to dst. Strings are written the
// way Step Functions writes them: only quotes, backslashes and control
// characters are escaped; other characters are kept as they are.
func Append(dst []byte, v any) []byte { return appendValue(dst, v, math.MaxInt) }

// AppendLimit is Append that gives up once the text passes limit bytes
// (reporting false), so a value whose parts are shared many times over
// (an array holding the same large value again and again) is never
// written out whole.
func AppendLimit(dst []byte, v any, limit int) ([]byte, bool) {
	start := len(dst)
	dst = appendValue(dst, v, start+limit)
	return dst, len(dst)-start <= limit
}

// appendValue appends v, stopping between members once dst is longer than
// end.
func appendValue(dst []byte, v any, end int) []byte {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if t {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		if t == "" {
			return append(dst, '0')
		}
		return append(dst, t...)
	case string:
		return AppendString(dst, t)
	case []any:
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst = appendValue(dst, e, end); len(dst) > end {
				return dst
			}
		}
		return append(dst, ']')
	case *Object:
		dst = append(dst, '{')
		if t != nil {
			for i, k := range t.keys {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = AppendString(dst, k)
				dst = append(dst, ':')
				if dst = appendValue(dst, t.vals[i], end); len(dst) > end {
					return dst
				}
			}
		}
		return append(dst, '}')
	default:
		panic(fmt.Sprintf("jsonvalue: cannot encode %T", v))
	}
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a quoted JSON string.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			if c < utf8.RuneSelf {
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// MarshalJSON lets an Object be embedded in values encoded by encoding/json.
func (o *Object) MarshalJSON() ([]byte, error) { return Append(nil, o), nil }

// MarshalJSON writes the number's literal form.
func (n Number) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("0"), nil
	}
	return []byte(n), nil
}

// UTF16Len is the length of s in UTF-16 code units, as Java's
// String.length() and JavaScript's string length count it (what AWS's
// limits and JSONata's $length measure).
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
