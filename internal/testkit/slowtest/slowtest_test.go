package slowtest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEnabled(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "1": true, "true": true} {
		t.Setenv(Env, v)
		require.Equal(t, want, Enabled(), "%s=%q", Env, v)
	}
}

func TestRequire(t *testing.T) {
	t.Setenv(Env, "")
	ran := false
	t.Run("off", func(t *testing.T) {
		Require(t, "a real process")
		ran = true
	})
	require.False(t, ran, "skipped when the slow suite is off")

	t.Setenv(Env, "1")
	t.Run("on", func(t *testing.T) {
		Require(t, "a real process")
		ran = true
	})
	require.True(t, ran, "run when it is on")
}
