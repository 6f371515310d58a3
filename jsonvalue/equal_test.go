package jsonvalue

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEqualText(t *testing.T) {
	t.Parallel()
	require.True(t, EqualText(`{"a": 1, "b": [1.0]}`, `{"b":[1],"a":1}`))
	require.True(t, EqualText(`not json`, `not json`), "equal text is equal")
	require.False(t, EqualText(`{"a": 1}`, `{"a": 2}`))
	require.False(t, EqualText(`{"a": 1}`, `{"a": 1`))
}
