package awsjson

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/security/quota"
	"stepwise/sfnapi"
)

// TestQuotaOperations checks that a quota can be set for every operation
// of the API, and for no other name but StateTransition.
func TestQuotaOperations(t *testing.T) {
	t.Parallel()
	for _, op := range sfnapi.Operations {
		require.True(t, quota.IsOperation(op), op)
	}
	require.Len(t, sfnapi.Operations, 37) // as many as quota knows
	require.False(t, quota.IsOperation(quota.StateTransition))
}
