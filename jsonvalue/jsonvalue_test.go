package jsonvalue

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseKeepsOrderAndLiterals(t *testing.T) {
	t.Parallel()
	v, err := ParseString(`{"b": 1.0, "a": [1e3, -0, "x\u00e9\ud83d\ude00"], "c": {"z": null, "y": true}}`)
	require.NoError(t, err)
	require.Equal(t, `{"b":1.0,"a":[1e3,-0,"xé😀"],"c":{"z":null,"y":true}}`, String(v))
	o := v.(*Object)
	require.Equal(t, []string{"b", "a", "c"}, o.Keys())
	b, _ := o.Get("b")
	require.Equal(t, Number("1.0"), b)
}

func TestParseDuplicateKeyKeepsFirstPositionLastValue(t *testing.T) {
	t.Parallel()
	v, err := ParseString(`{"a": 1, "b": 2, "a": 3}`)
	require.NoError(t, err)
	require.Equal(t, `{"a":3,"b":2}`, String(v))
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, msg string
	}{
		{``, "unexpected end of JSON input at offset 0"},
		{`{"a":}`, `invalid character '}' looking for beginning of value at offset 5`},
		{`[1,]`, `invalid character ']' looking for beginning of value at offset 3`},
		{`01`, "invalid number: leading zero at offset 0"},
		{`[nulls]`, `invalid literal, expected "null" at offset 1`},
		{`{"a" 1}`, "expected ':' after object member name at offset 5"},
		{`[1}`, "expected ',' or ']' after array element at offset 2"},
		{`1.`, "invalid number: unexpected end of JSON input at offset 2"},
		{`1.x`, "invalid number: no digits after decimal point at offset 2"},
		{`"a` + "\x01" + `"`, "invalid control character in string at offset 2"},
		{"\"\xff\"", "invalid UTF-8 in string at offset 1"},
		{`"\q"`, `invalid escape character 'q' in string at offset 2`},
		{`{} x`, "unexpected data after top-level value at offset 3"},
		{`nul`, `invalid literal, expected "null" at offset 0`},
	} {
		_, err := ParseString(tc.in)
		require.Error(t, err, tc.in)
		require.Equal(t, tc.msg, err.Error(), tc.in)
	}
}

func TestParseDepthLimit(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 50) + strings.Repeat("]", 50)
	_, err := ParseDepth([]byte(deep), 50)
	require.NoError(t, err)
	_, err = ParseDepth([]byte("["+deep+"]"), 50)
	require.True(t, errors.Is(err, ErrTooDeep), "got %v", err)
}

func TestEncodeEscapes(t *testing.T) {
	t.Parallel()
	require.Equal(t, `"a\"b\\c\n\t\u0001<>&é"`, String("a\"b\\c\n\t\x01<>&é"))
}

func TestEqual(t *testing.T) {
	t.Parallel()
	a, _ := ParseString(`{"x": [1, 2.50], "y": {"k": "v"}}`)
	b, _ := ParseString(`{"y": {"k": "v"}, "x": [1.0, 2.5]}`)
	c, _ := ParseString(`{"y": {"k": "v"}, "x": [1.0, 2.51]}`)
	require.True(t, Equal(a, b))
	require.False(t, Equal(a, c))
	require.False(t, Equal(Number("1"), "1"))
	require.Equal(t, -1, CompareNumbers("9", "10"))
	require.Equal(t, 1, CompareNumbers("1e3", "999.999"))
	require.Equal(t, 0, CompareNumbers("123456789012345678901234567890", "1.2345678901234567890123456789e29"))
}

func TestObjectSetDeleteClone(t *testing.T) {
	t.Parallel()
	o := NewObject(0)
	for i := 0; i < 20; i++ { // crosses the index threshold
		o.Set(string(rune('a'+i)), NumberFromInt(int64(i)))
	}
	o.Delete("c")
	o.Set("a", "first")
	c := o.Clone()
	c.Set("b", "changed")
	v, _ := o.Get("b")
	require.Equal(t, Number("1"), v, "clone must not share members")
	v, ok := o.Get("t")
	require.True(t, ok)
	require.Equal(t, Number("19"), v)
	require.False(t, o.Has("c"))
	require.Equal(t, 19, o.Len())
	require.Equal(t, "a", o.Keys()[0])
}

func TestNumberHelpers(t *testing.T) {
	t.Parallel()
	require.True(t, Number("1.0").IsInteger())
	require.False(t, Number("1.5").IsInteger())
	i, ok := Number("2e3").Int64()
	require.True(t, ok)
	require.Equal(t, int64(2000), i)
	require.Equal(t, Number("3"), NumberFromFloat(3))
	require.Equal(t, Number("0.1"), NumberFromFloat(0.1))
}

// FuzzParse checks that Parse never panics and that what it accepts
// round-trips through the encoder and agrees with encoding/json.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `-0.5e-3`, `[[[[]]]]`, `{"a":1,"a":2}`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseDepth(data, 64)
		if err != nil {
			return
		}
		text := Marshal(v)
		v2, err := Parse(text)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", text, err)
		}
		if !Equal(v, v2) {
			t.Fatalf("round trip changed %q to %q", data, text)
		}
		if !json.Valid(text) {
			t.Fatalf("encoder wrote invalid JSON %q", text)
		}
	})
}

func TestAppendLimit(t *testing.T) {
	t.Parallel()
	v, err := ParseString(`{"a": [1, "two", {"b": null}], "c": true}`)
	require.NoError(t, err)
	full := String(v)
	got, ok := AppendLimit([]byte("prefix"), v, len(full))
	require.True(t, ok)
	require.Equal(t, "prefix"+full, string(got), "within the limit the text is Append's")
	_, ok = AppendLimit(nil, v, len(full)-1)
	require.False(t, ok)

	// An array holding the same array 2^40 times over stops at the limit.
	shared := any([]any{"x"})
	for range 40 {
		shared = []any{shared, shared}
	}
	got, ok = AppendLimit(nil, shared, 1000)
	require.False(t, ok)
	require.Less(t, len(got), 2000)
}
