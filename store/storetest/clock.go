package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

func exerciseClock(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("ClockStartAdvanceStop", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		virtual := baseTime.Add(48 * time.Hour)
		real := baseTime
		// No clock yet: a new anchor at the floor.
		c, err := b.exec.ClockStart(ctx, &store.ClockStartParams{Real: real, Floor: virtual})
		require.NoError(t, err)
		require.Equal(t, &store.Clock{Virtual: virtual, Real: real, Ceiling: virtual, Renewed: real}, c)

		// The ceiling only rises.
		require.NoError(t, b.exec.ClockAdvance(ctx, &store.ClockAdvanceParams{Ceiling: virtual.Add(time.Minute), Renewed: real.Add(time.Second)}))
		require.NoError(t, b.exec.ClockAdvance(ctx, &store.ClockAdvanceParams{Ceiling: virtual.Add(time.Second), Renewed: real.Add(2 * time.Second)}))

		// A node joining a running clock keeps its anchor.
		c, err = b.exec.ClockStart(ctx, &store.ClockStartParams{Real: real.Add(3 * time.Second), Floor: baseTime, RunningSince: real})
		require.NoError(t, err)
		require.Equal(t, &store.Clock{Virtual: virtual, Real: real, Ceiling: virtual.Add(time.Minute), Renewed: real.Add(2 * time.Second)}, c)

		// A clock not renewed since is stopped: a new anchor at the
		// ceiling, not before, whatever the floor.
		later := real.Add(time.Hour)
		c, err = b.exec.ClockStart(ctx, &store.ClockStartParams{Real: later, Floor: baseTime, RunningSince: later.Add(-time.Minute)})
		require.NoError(t, err)
		require.Equal(t, &store.Clock{Virtual: virtual.Add(time.Minute), Real: later, Ceiling: virtual.Add(time.Minute), Renewed: later}, c)
		// ... or at the floor when it is later.
		c, err = b.exec.ClockStart(ctx, &store.ClockStartParams{Real: later, Floor: virtual.Add(time.Hour)})
		require.NoError(t, err)
		require.Equal(t, virtual.Add(time.Hour), c.Virtual)
		require.Equal(t, virtual.Add(time.Hour), c.Ceiling)

		// Stopped exactly where it was read last: the next start resumes
		// there, even below the ceiling held while running.
		require.NoError(t, b.exec.ClockAdvance(ctx, &store.ClockAdvanceParams{Ceiling: virtual.Add(2 * time.Hour), Renewed: later}))
		stop := virtual.Add(time.Hour + time.Second)
		require.NoError(t, b.exec.ClockStop(ctx, stop))
		c, err = b.exec.ClockStart(ctx, &store.ClockStartParams{Real: later.Add(time.Hour), Floor: baseTime, RunningSince: later})
		require.NoError(t, err)
		require.Equal(t, &store.Clock{Virtual: stop, Real: later.Add(time.Hour), Ceiling: stop, Renewed: later.Add(time.Hour)}, c)
	})
}
