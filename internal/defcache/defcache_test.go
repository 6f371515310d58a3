package defcache

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
)

func TestCacheParsesOnceAndKeepsTheRecent(t *testing.T) {
	t.Parallel()
	c := New(2)
	parses := 0
	parse := func() (*asl.StateMachine, error) { parses++; return &asl.StateMachine{}, nil }
	a, err := c.Get(Key("arn:a", "1"), parse)
	require.NoError(t, err)
	again, err := c.Get(Key("arn:a", "1"), parse)
	require.NoError(t, err)
	require.Same(t, a, again)
	require.Equal(t, 1, parses)

	_, _ = c.Get(Key("arn:b", "1"), parse)
	_, _ = c.Get(Key("arn:a", "1"), parse) // a is now the most recent
	_, _ = c.Get(Key("arn:c", "1"), parse) // b goes
	require.Equal(t, 2, c.Len())
	require.Equal(t, 3, parses)
	_, _ = c.Get(Key("arn:a", "1"), parse)
	require.Equal(t, 3, parses, "a was kept")
	_, _ = c.Get(Key("arn:b", "1"), parse)
	require.Equal(t, 4, parses, "b was dropped")
}

func TestCacheKeepsNoFailure(t *testing.T) {
	t.Parallel()
	c := New(0)
	_, err := c.Get("k", func() (*asl.StateMachine, error) { return nil, errors.New("bad") })
	require.EqualError(t, err, "bad")
	require.Zero(t, c.Len())
	for i := range DefaultSize + 10 {
		c.Put(fmt.Sprint(i), &asl.StateMachine{})
	}
	require.Equal(t, DefaultSize, c.Len())
}
