package integration_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
)

// closer counts its closes.
type closer struct{ closed *atomic.Int32 }

func (c closer) Close() { c.closed.Add(1) }

type sharedKey struct{}

var made, closes atomic.Int32

func init() {
	// Two modules share one value a registry.
	for _, res := range []string{"arn:aws:states:::test:sharedA", "arn:aws:states:::test:sharedB"} {
		integration.Register(integration.Module{
			Resource: res,
			New: func(cfg *integration.Config) (integration.Integration, error) {
				_, err := cfg.Shared(sharedKey{}, func() (any, error) {
					made.Add(1)
					return closer{&closes}, nil
				})
				return integration.Func(func(context.Context, *integration.Request) (any, error) { return nil, nil }), err
			},
		})
	}
}

// The modules of a registry share a value it keeps, and its Close closes
// it; a Config that was not given to New keeps nothing.
func TestSharedValues(t *testing.T) {
	before, closedBefore := made.Load(), closes.Load()
	reg, err := integration.New(integration.Config{})
	require.NoError(t, err)
	require.Equal(t, before+1, made.Load(), "one value for the two modules")
	require.IsType(t, closer{}, reg.Shared(sharedKey{}))
	require.Nil(t, reg.Shared("absent"))
	reg.Close()
	require.Equal(t, closedBefore+1, closes.Load())

	var cfg integration.Config
	calls := 0
	for range 2 {
		_, err := cfg.Shared(sharedKey{}, func() (any, error) { calls++; return calls, nil })
		require.NoError(t, err)
	}
	require.Equal(t, 2, calls)
	require.Nil(t, (&integration.Registry{}).Shared(sharedKey{}))
	(&integration.Registry{}).Close()
}
