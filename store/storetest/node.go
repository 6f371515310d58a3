package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

func exerciseNodes(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	const live = time.Hour
	// expired registers a node whose lease runs out at once.
	expired := func(t *testing.T, b *testBundle, node string) store.Fence {
		t.Helper()
		f, err := b.exec.NodeRegister(ctx, node, time.Millisecond)
		require.NoError(t, err)
		time.Sleep(20 * time.Millisecond)
		return f
	}
	// brief registers a node whose lease runs out soon (expire waits for
	// it): the executions it starts meanwhile are its own.
	const briefLease = 300 * time.Millisecond
	brief := func(t *testing.T, b *testBundle, node string) store.Fence {
		t.Helper()
		f, err := b.exec.NodeRegister(ctx, node, briefLease)
		require.NoError(t, err)
		return f
	}
	expire := func() { time.Sleep(briefLease + 50*time.Millisecond) }
	// start inserts a running execution owned by f (unowned for nil).
	start := func(t *testing.T, b *testBundle, smArn, name string, f *store.Fence) *store.Execution {
		t.Helper()
		x := executionFixture(smArn, name, baseTime, history.StatusRunning)
		require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{{Insert: x, Fence: f, Events: eventFixtures(x.Arn, 1, 2)}}))
		got, err := b.exec.ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		return got
	}
	// step is a step of x's that only writes its replay log.
	step := func(x *store.Execution, seq int64, f *store.Fence) *store.Step {
		return &store.Step{Fence: f, Input: &store.Input{ExecutionArn: x.Arn, Seq: seq, At: baseTime, Body: []byte(fmt.Sprintf(`{"seq":%d}`, seq))}}
	}
	update := func(x *store.Execution, f *store.Fence) *store.Step {
		return &store.Step{Fence: f, Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: x.Version,
			Status: history.StatusRunning, LastEventID: x.LastEventID + 1}, Input: &store.Input{ExecutionArn: x.Arn, Seq: 1, At: baseTime, Body: []byte(`{}`)},
			Events: eventFixtures(x.Arn, x.LastEventID+1, x.LastEventID+1)}
	}

	t.Run("Nodes", func(t *testing.T) {
		t.Parallel()

		t.Run("RegisterAndRenew", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			a1, err := b.exec.NodeRegister(ctx, "a", live)
			require.NoError(t, err)
			require.Equal(t, "a", a1.Node)
			other, err := b.exec.NodeRegister(ctx, "b", live)
			require.NoError(t, err)
			require.NoError(t, b.exec.NodeRenew(ctx, a1, live))
			a2, err := b.exec.NodeRegister(ctx, "a", live)
			require.NoError(t, err)
			require.Greater(t, a2.Epoch, a1.Epoch, "a new epoch each registration")
			require.ErrorIs(t, b.exec.NodeRenew(ctx, a1, live), store.ErrFenced, "the earlier epoch is fenced")
			require.NoError(t, b.exec.NodeRenew(ctx, a2, live))
			require.NoError(t, b.exec.NodeRenew(ctx, other, live), "nodes do not fence each other")

			gone := expired(t, b, "c")
			require.ErrorIs(t, b.exec.NodeRenew(ctx, gone, live), store.ErrFenced, "a lease that ran out is not renewed")
			require.ErrorIs(t, b.exec.NodeRenew(ctx, store.Fence{Node: "nobody", Epoch: 1}, live), store.ErrFenced)
		})

		t.Run("ClaimOrphans", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "sm")
			a := brief(t, b, "a")
			bn, err := b.exec.NodeRegister(ctx, "b", live)
			require.NoError(t, err)
			c, err := b.exec.NodeRegister(ctx, "c", live)
			require.NoError(t, err)

			mine := start(t, b, sm.Arn, "b1", &bn)
			orphan := start(t, b, sm.Arn, "a1", &a)
			unowned := start(t, b, sm.Arn, "n1", nil)
			ended := executionFixture(sm.Arn, "a2", baseTime, history.StatusSucceeded)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{{Insert: ended, Fence: &a, Events: eventFixtures(ended.Arn, 1, 2)}}))
			expire()

			got, err := b.exec.ExecutionClaim(ctx, c, 10)
			require.NoError(t, err)
			require.ElementsMatch(t, []string{orphan.Arn, unowned.Arn}, got,
				"running executions of a node whose lease ran out, and unowned ones; not a live node's, not ended ones")
			again, err := b.exec.ExecutionClaim(ctx, c, 10)
			require.NoError(t, err)
			require.Empty(t, again, "claimed once")
			after, err := b.exec.ExecutionGet(ctx, orphan.Arn)
			require.NoError(t, err)
			require.Greater(t, after.Version, orphan.Version, "a claim moves the version on")

			// The new owner writes; the live node keeps its own.
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{update(after, &c), update(mine, &bn)}))
		})

		t.Run("ClaimLimit", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "sm")
			for i := range 5 {
				start(t, b, sm.Arn, fmt.Sprintf("n%d", i), nil)
			}
			c, err := b.exec.NodeRegister(ctx, "c", live)
			require.NoError(t, err)
			first, err := b.exec.ExecutionClaim(ctx, c, 3)
			require.NoError(t, err)
			require.Len(t, first, 3)
			rest, err := b.exec.ExecutionClaim(ctx, c, 3)
			require.NoError(t, err)
			require.Len(t, rest, 2)
			require.NotContains(t, rest, first[0])
		})

		t.Run("ReleaseHandsOver", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "sm")
			a, err := b.exec.NodeRegister(ctx, "a", live)
			require.NoError(t, err)
			c, err := b.exec.NodeRegister(ctx, "c", live)
			require.NoError(t, err)
			x := start(t, b, sm.Arn, "x", &a)
			got, err := b.exec.ExecutionClaim(ctx, c, 10)
			require.NoError(t, err)
			require.Empty(t, got, "a live node's")
			require.NoError(t, b.exec.NodeRelease(ctx, a))
			require.ErrorIs(t, b.exec.NodeRenew(ctx, a, live), store.ErrFenced, "released")
			got, err = b.exec.ExecutionClaim(ctx, c, 10)
			require.NoError(t, err)
			require.Equal(t, []string{x.Arn}, got, "released at once")
		})

		t.Run("ReRegisteredNodeClaimsItsOwn", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "sm")
			a1, err := b.exec.NodeRegister(ctx, "a", live)
			require.NoError(t, err)
			x := start(t, b, sm.Arn, "x", &a1)
			a2, err := b.exec.NodeRegister(ctx, "a", live)
			require.NoError(t, err)
			got, err := b.exec.ExecutionClaim(ctx, a2, 10)
			require.NoError(t, err)
			require.Equal(t, []string{x.Arn}, got, "owned under an earlier epoch")
		})

		t.Run("ClaimNeedsALiveLease", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "sm")
			start(t, b, sm.Arn, "n", nil)
			gone := expired(t, b, "a")
			_, err := b.exec.ExecutionClaim(ctx, gone, 10)
			require.ErrorIs(t, err, store.ErrFenced)
		})

		t.Run("FencedStepsRefused", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "sm")
			a := brief(t, b, "a")
			c, err := b.exec.NodeRegister(ctx, "c", live)
			require.NoError(t, err)
			x := start(t, b, sm.Arn, "x", &a)
			y := start(t, b, sm.Arn, "y", &a)
			expire()
			_, err = b.exec.ExecutionClaim(ctx, c, 10)
			require.NoError(t, err)

			if b.inTx {
				// A failed write ends the transaction's use.
				require.ErrorIs(t, b.exec.StepWrite(ctx, []*store.Step{step(x, 1, &a)}), store.ErrFenced)
				return
			}
			require.ErrorIs(t, b.exec.StepWrite(ctx, []*store.Step{update(x, &a)}), store.ErrFenced,
				"the former owner's update, at the version it knew")
			require.ErrorIs(t, b.exec.StepWrite(ctx, []*store.Step{step(y, 1, &a)}), store.ErrFenced,
				"a step that only writes the replay log")
			ins, err := b.exec.InputList(ctx, y.Arn)
			require.NoError(t, err)
			require.Empty(t, ins, "nothing of a fenced step is written")
			fresh, err := b.exec.ExecutionGet(ctx, y.Arn)
			require.NoError(t, err)
			require.ErrorIs(t, b.exec.StepWrite(ctx, []*store.Step{step(fresh, 1, &c), step(x, 1, &a)}), store.ErrFenced, "all or none")
			ins, err = b.exec.InputList(ctx, y.Arn)
			require.NoError(t, err)
			require.Empty(t, ins)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{step(fresh, 1, &c)}), "the new owner writes")
		})

		t.Run("LeaseRanOut", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "sm")
			a, err := b.exec.NodeRegister(ctx, "a", 300*time.Millisecond)
			require.NoError(t, err)
			x := start(t, b, sm.Arn, "x", &a)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{step(x, 1, &a)}), "the owner writes while its lease is live")
			time.Sleep(400 * time.Millisecond)
			// No one claimed x: the owner's lease alone ran out.
			require.ErrorIs(t, b.exec.StepWrite(ctx, []*store.Step{step(x, 2, &a)}), store.ErrFenced,
				"a node whose lease ran out writes nothing more")
			if b.inTx {
				return // a failed write ends the transaction's use
			}
			y := executionFixture(sm.Arn, "y", baseTime, history.StatusRunning)
			require.ErrorIs(t, b.exec.StepWrite(ctx, []*store.Step{{Insert: y, Fence: &a, Events: eventFixtures(y.Arn, 1, 2)}}), store.ErrFenced,
				"nor starts an execution")
			_, err = b.exec.ExecutionGet(ctx, y.Arn)
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})
}
