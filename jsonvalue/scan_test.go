package jsonvalue

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestScannerTokens(t *testing.T) {
	t.Parallel()
	text := ` {"a" : [1, "x\n", true, {}], "b": null , "c":false} `
	s := NewScanner([]byte(text))
	var kinds []TokenKind
	var spans []string
	for {
		tok, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		kinds = append(kinds, tok.Kind)
		spans = append(spans, text[tok.Start:tok.End])
	}
	require.Equal(t, []TokenKind{BeginObject, NameToken, BeginArray, NumberToken, StringToken, TrueToken, BeginObject, EndObject, EndArray,
		NameToken, NullToken, NameToken, FalseToken, EndObject}, kinds)
	require.Equal(t, []string{"{", `"a"`, "[", "1", `"x\n"`, "true", "{", "}", "]", `"b"`, "null", `"c"`, "false", "}"}, spans)
	_, err := s.Next()
	require.ErrorIs(t, err, io.EOF, "the end is reported again")
}

func TestScannerErrorsSayWhereAndWhat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in     string
		code   ErrorCode
		expect Expect
		offset int
		inside byte
		open   int
	}{
		{``, ErrEnd, 0, 0, 0, -1},
		{`{"a":1`, ErrEnd, 0, 6, '{', 0},
		{`[1, [2`, ErrEnd, 0, 6, '[', 4},
		{`"abc`, ErrEndInString, 0, 4, 0, -1},
		{`[-`, ErrEndInNumber, 0, 2, '[', 0},
		{`{"a" 1}`, ErrUnexpected, ExpectColon, 5, '{', 0},
		{`{1:2}`, ErrUnexpected, ExpectName, 1, '{', 0},
		{`{"a":1,}`, ErrUnexpected, ExpectName, 7, '{', 0},
		{`{"a":1 "b"}`, ErrUnexpected, ExpectObjectComma, 7, '{', 0},
		{`[1 2]`, ErrUnexpected, ExpectArrayComma, 3, '[', 0},
		{`[1,]`, ErrUnexpected, ExpectValue, 3, '[', 0},
		{`"\u12x4"`, ErrUnexpected, ExpectHex, 5, 0, -1},
		{`-x`, ErrUnexpected, ExpectMinusDigit, 1, 0, -1},
		{`1.e`, ErrUnexpected, ExpectFraction, 2, 0, -1},
		{`1e+]`, ErrUnexpected, ExpectExponent, 3, 0, -1},
		{`[nulls]`, ErrInvalidToken, 0, 1, '[', 0},
		{`[tru]`, ErrInvalidToken, 0, 1, '[', 0},
		{`{"a": abc}`, ErrInvalidToken, 0, 6, '{', 0},
		{`007`, ErrLeadingZero, 0, 0, 0, -1},
		{`"\x"`, ErrBadEscape, 0, 2, 0, -1},
		{"\"a\tb\"", ErrControl, 0, 2, 0, -1},
		{"[\"\xc3\"]", ErrInvalidUTF8, 0, 2, '[', 0},
		{`{"a":[1}`, ErrMismatched, 0, 7, '[', 5},
		{`{} {}`, ErrTrailing, 0, 3, 0, -1},
		{`[[[]]]`, ErrDepth, 0, 2, '[', 1},
	} {
		s := NewScanner([]byte(tt.in))
		s.SetMaxDepth(2)
		var err error
		for err == nil {
			_, err = s.Next()
		}
		var se *SyntaxError
		require.ErrorAs(t, err, &se, tt.in)
		require.Equal(t, tt.code, se.Code, "%s: %v", tt.in, err)
		require.Equal(t, tt.expect, se.Expect, "%s: %v", tt.in, err)
		require.Equal(t, tt.offset, se.Offset, "%s: %v", tt.in, err)
		require.Equal(t, tt.inside, se.In, "%s: %v", tt.in, err)
		require.Equal(t, tt.open, se.Open, "%s: %v", tt.in, err)
		_, again := s.Next()
		require.Same(t, err, again, "an error is returned again")
	}
}

func TestScannerDepthIsErrTooDeep(t *testing.T) {
	t.Parallel()
	_, err := ParseDepth([]byte("[[[]]]"), 2)
	require.ErrorIs(t, err, ErrTooDeep)
	require.EqualError(t, err, "JSON nested too deeply (more than 2 levels) at offset 2")
}

func TestTextKeepsUnpairedSurrogatesOnlyInWTF8(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw, wtf8, text string
		unpaired        bool
	}{
		{`"abc"`, "abc", "abc", false},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", "a\"b\\c/d\b\f\n\r\t", false},
		{`"\u00e9\ud83d\ude00é"`, "é😀é", "é😀é", false},
		{`"a\ud800"`, "a\xed\xa0\x80", "a\uFFFD", true},
		{`"\uDBFF!"`, "\xed\xaf\xbf!", "\uFFFD!", true},
		{`"\udc00\ud83d\ude00"`, "\xed\xb0\x80😀", "\uFFFD😀", true},
		{`"\ud800\ud800"`, "\xed\xa0\x80\xed\xa0\x80", "\uFFFD\uFFFD", true},
		{`"\\ud800"`, `\ud800`, `\ud800`, false},
	} {
		s := NewScanner([]byte(tt.raw))
		tok, err := s.Next()
		require.NoError(t, err, tt.raw)
		require.Equal(t, StringToken, tok.Kind, tt.raw)
		require.Equal(t, tt.unpaired, tok.Unpaired, tt.raw)
		require.Equal(t, tt.wtf8, s.TextWTF8(tok), tt.raw)
		require.Equal(t, tt.text, s.Text(tok), tt.raw)
	}
}

func TestSkip(t *testing.T) {
	t.Parallel()
	s := NewScanner([]byte(`{"a": {"x": [1, {"y": 2}]}, "b": 3}`))
	_, _ = s.Next() // {
	name, _ := s.Next()
	require.Equal(t, "a", s.Text(name))
	v, _ := s.Next()
	require.NoError(t, s.Skip(v))
	name, _ = s.Next()
	require.Equal(t, "b", s.Text(name))
	require.Equal(t, 1, s.Depth())
}

func TestParseWithReportsDuplicates(t *testing.T) {
	t.Parallel()
	type dup struct {
		obj  string
		name string
	}
	var got []dup
	v, err := ParseWith([]byte(`{"a": 1, "o": {"x": 1, "x": 2, "x": 3}, "a": 2}`), Options{OnDuplicate: func(o *Object, name string) {
		got = append(got, dup{String(o), name})
	}})
	require.NoError(t, err)
	require.Equal(t, `{"a":2,"o":{"x":3}}`, String(v))
	require.Equal(t, []dup{{`{"x":1}`, "x"}, {`{"x":2}`, "x"}, {`{"a":1,"o":{"x":3}}`, "a"}}, got)
}

// FuzzScanner checks the scanner against encoding/json: the same texts are
// valid (for valid UTF-8, which encoding/json does not check inside
// strings), they give the same values, and a syntax error is positioned
// inside the text.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud800\udc00"`, `[nulls]`, `01`, `{"a":1,"a":2}`, `[1e5,-0.5E-3]`, `{"a" 1}`, `"\u00e9"`, ` [ ] `, `{"a":[1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseDepth([]byte(s), 64)
		if utf8.ValidString(s) && strings.Count(s, "[")+strings.Count(s, "{") < 64 {
			if ok := json.Valid([]byte(s)); ok != (err == nil) {
				t.Fatalf("%q: encoding/json valid=%v, Parse: %v", s, ok, err)
			}
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(s) || se.Msg == "" {
				t.Fatalf("%q: error %#v", s, err)
			}
			return
		}
		var std any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if dec.Decode(&std) == nil && utf8.ValidString(s) && !strings.Contains(s, `\u`) {
			if !Equal(v, fromStd(std)) {
				t.Fatalf("%q: Parse %s, encoding/json %v", s, String(v), std)
			}
		}
		back, err := Parse(Marshal(v))
		if err != nil || !Equal(back, v) {
			t.Fatalf("%q: %s does not parse back: %v", s, Marshal(v), err)
		}
	})
}

// fromStd is a value encoding/json decoded with UseNumber, in the model.
func fromStd(v any) any {
	switch t := v.(type) {
	case json.Number:
		return Number(t)
	case []any:
		for i, e := range t {
			t[i] = fromStd(e)
		}
		return t
	case map[string]any:
		for k, e := range t {
			t[k] = fromStd(e)
		}
		return FromGo(t)
	default:
		return v
	}
}

func TestUTF16Len(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 1, "€": 1, "😀": 2, "a😀b": 4, "\xff": 1} {
		require.Equal(t, want, UTF16Len(s), "%q", s)
	}
}
