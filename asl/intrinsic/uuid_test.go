package intrinsic

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUUID(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	seen := make(map[string]bool)
	for range 100 {
		got, err := b.eval(t, "States.UUID()")
		require.NoError(t, err)
		s, ok := got.(string)
		require.True(t, ok)
		require.Regexp(t, uuidV4, s)
		require.False(t, seen[s], "duplicate UUID %s", s)
		seen[s] = true
	}
}

func TestUUIDArguments(t *testing.T) {
	t.Parallel()
	runEvalCases(t, []evalCase{
		bad("OneArgument", "States.UUID('x')", ``, "States.UUID"),
	})
}
