package awsjson

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScanBody(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for _, tt := range []struct {
		body string
		want bool
	}{
		{`{}`, true},
		{" \n\t{\"a\": [1, {\"b\": 2}]}", true},
		{`{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{{{{"}`, true}, // brackets in a string do not nest
		{`{"a": "\"[[[", "b": "\\"}`, true},
		{deep(maxDepth), true},
		{deep(maxDepth + 1), false},
		{`[1]`, false},
		{`"{}"`, false},
		{"{\"a\": \"\xff\"}", false},
		{``, false},
	} {
		plain, _ := scanBody([]byte(tt.body))
		require.Equal(t, tt.want, plain, tt.body)
	}
}

func TestScanBodyUnpairedSurrogates(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		body     string
		unpaired bool
	}{
		{`{"name": "abc"}`, false},
		{`{"name": "\u00e9\u4e2d"}`, false},
		{`{"name": "\ud83d\ude00"}`, false}, // a pair
		{`{"name": "\uD83D\uDE00"}`, false},
		{`{"name": "a\ud800"}`, true},
		{`{"name": "\ud800b"}`, true},
		{`{"name": "\udc00"}`, true},       // a low surrogate alone
		{`{"name": "\ud800\ud800"}`, true}, // two high ones
		{`{"name": "\ude00\ud83d"}`, true}, // a pair the wrong way round
		{`{"name": "\ud800\u0041"}`, true}, // a high one before another escape
		{`{"input": "\\ud800"}`, false},    // an escaped backslash, then text
		{`{"input": "\\\ud800"}`, true},    // an escaped backslash, then an escape
		{`{"input": "{\"a\": \"\\ud800\"}"}`, false},
		{`{"a\ud800": 1}`, true}, // in a member name too
	} {
		plain, unpaired := scanBody([]byte(tt.body))
		require.True(t, plain, tt.body)
		require.Equal(t, tt.unpaired, unpaired, tt.body)
	}
}
