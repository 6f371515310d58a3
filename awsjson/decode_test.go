package awsjson

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlainObject(t *testing.T) {
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
		require.Equal(t, tt.want, plainObject([]byte(tt.body)), tt.body)
	}
}
