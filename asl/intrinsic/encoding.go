package intrinsic

import (
	"encoding/base64"
	"unicode/utf8"

	"stepwise/jsonvalue"
)

// MaxEncodingInput is the longest string, in UTF-16 code units as Java
// counts them, that States.Base64Encode, States.Base64Decode and
// States.Hash accept.
const MaxEncodingInput = 10000

var encodingFunctions = []*function{
	{name: "States.Base64Encode", minArgs: 1, maxArgs: 1, eval: evalBase64Encode},
	{name: "States.Base64Decode", minArgs: 1, maxArgs: 1, eval: evalBase64Decode},
}

// evalBase64Encode encodes the UTF-8 bytes of a string with the standard,
// padded alphabet.
func evalBase64Encode(c *Call, args []any) (any, error) {
	s, ok := args[0].(string)
	if !ok || jsonvalue.UTF16Len(s) > MaxEncodingInput {
		return nil, invalidArgs(c)
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

// evalBase64Decode decodes leniently, as Apache Commons Codec does: bytes
// outside the alphabet (standard or URL-safe) are skipped, the first '='
// ends the data and left-over bits are dropped. AWS returns output for
// inputs such as "!!!invalid!!!" or "ab==cd" rather than failing. The bytes
// are read as UTF-8, malformed sequences becoming U+FFFD.
func evalBase64Decode(c *Call, args []any) (any, error) {
	s, ok := args[0].(string)
	if !ok || jsonvalue.UTF16Len(s) > MaxEncodingInput {
		return nil, invalidArgs(c)
	}
	return javaUTF8String(lenientBase64Decode(s)), nil
}

func base64Value(b byte) int {
	switch {
	case b >= 'A' && b <= 'Z':
		return int(b - 'A')
	case b >= 'a' && b <= 'z':
		return int(b-'a') + 26
	case b >= '0' && b <= '9':
		return int(b-'0') + 52
	case b == '+' || b == '-':
		return 62
	case b == '/' || b == '_':
		return 63
	}
	return -1
}

func lenientBase64Decode(s string) []byte {
	out := make([]byte, 0, len(s)*3/4+2)
	var work uint32
	n := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b == '=' {
			break
		}
		v := base64Value(b)
		if v < 0 {
			continue
		}
		work = work<<6 | uint32(v)
		n++
		if n == 4 {
			out = append(out, byte(work>>16), byte(work>>8), byte(work))
			work, n = 0, 0
		}
	}
	switch n {
	case 2: // 12 bits: one byte
		out = append(out, byte(work>>4))
	case 3: // 18 bits: two bytes
		work >>= 2
		out = append(out, byte(work>>8), byte(work))
	}
	return out
}

// javaUTF8String is new String(b, UTF_8): each maximal invalid subpart
// becomes one U+FFFD, with Java's treatment of encoded surrogates.
func javaUTF8String(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			out = append(out, b[i:i+size]...)
			i += size
			continue
		}
		i += invalidSubpart(b[i:])
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	return string(out)
}

// invalidSubpart returns the length of the maximal subpart of an
// ill-formed UTF-8 sequence at the start of b (at least 1).
func invalidSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEF:
		// Java reads ED A0..BF xx (an encoded surrogate) as one
		// malformed sequence, unlike the Unicode recommendation.
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		x := b[n]
		if x < lo || x > hi {
			break
		}
		lo, hi = 0x80, 0xBF
		n++
	}
	return n
}
