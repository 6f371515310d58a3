package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

// mapItems are items n, n+1, ... (count of them) as an ItemReader would
// spool them: JSON text, each telling its index and run.
func mapItems(run string, n, count int) []string {
	items := make([]string, count)
	for i := range items {
		items[i] = fmt.Sprintf(`{"run":%q,"i":%d}`, run, n+i)
	}
	return items
}

// listMapItems reads all of a map run's items from index from, limit at a
// time.
func listMapItems(ctx context.Context, t *testing.T, ex store.Executor, run string, from int64, limit int) []string {
	t.Helper()
	all := []string{}
	for {
		items, err := ex.MapItemsList(ctx, run, from, limit)
		require.NoError(t, err)
		require.LessOrEqual(t, len(items), limit)
		all = append(all, items...)
		if len(items) < limit {
			return all
		}
		from += int64(len(items))
	}
}

func exerciseMapItems(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	sm := stateMachineArn("orders")
	runA, runB := mapRunArn(sm, "map", "a"), mapRunArn(sm, "map", "b")

	t.Run("MapItems", func(t *testing.T) {
		t.Parallel()

		t.Run("PutAndList", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			// Put out of order: they are listed by index.
			all := mapItems("a", 0, 10)
			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 5, all[5:]))
			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 0, all[:5]))

			got, err := b.exec.MapItemsList(ctx, runA, 0, 0) // no limit
			require.NoError(t, err)
			require.Equal(t, all, got)
			got, err = b.exec.MapItemsList(ctx, runA, 0, 100)
			require.NoError(t, err)
			require.Equal(t, all, got)

			// From an index, up to a limit.
			got, err = b.exec.MapItemsList(ctx, runA, 3, 4)
			require.NoError(t, err)
			require.Equal(t, all[3:7], got)
			got, err = b.exec.MapItemsList(ctx, runA, 8, 4)
			require.NoError(t, err)
			require.Equal(t, all[8:], got)
			got, err = b.exec.MapItemsList(ctx, runA, 9, 1)
			require.NoError(t, err)
			require.Equal(t, all[9:], got)
			got, err = b.exec.MapItemsList(ctx, runA, 10, 4)
			require.NoError(t, err)
			require.Empty(t, got)

			// Pages.
			for _, limit := range []int{1, 2, 3, 10, 11} {
				require.Equal(t, all, listMapItems(ctx, t, b.exec, runA, 0, limit), "limit %d", limit)
			}

			// Bodies come back as they went in, whatever they hold.
			odd := []string{
				`"quotes \" and \\ backslashes"`,
				`{"text":"ünïcødé ✓ 日本語","nul":"\u0000"}`,
				`null`,
				`[1,2,{"deep":[true,false]}]`,
				`{"big":"` + strings.Repeat("x", 100_000) + `"}`,
				``,
			}
			require.NoError(t, b.exec.MapItemsPut(ctx, runB, 0, odd))
			got, err = b.exec.MapItemsList(ctx, runB, 0, 0)
			require.NoError(t, err)
			require.Equal(t, odd, got)

			// Indexes beyond 32 bits, and gaps: from is an index, not
			// an offset.
			far := int64(1) << 40
			require.NoError(t, b.exec.MapItemsPut(ctx, runB, far, []string{`"far"`, `"farther"`}))
			got, err = b.exec.MapItemsList(ctx, runB, int64(len(odd)), 10)
			require.NoError(t, err)
			require.Equal(t, []string{`"far"`, `"farther"`}, got)
			got, err = b.exec.MapItemsList(ctx, runB, far+1, 10)
			require.NoError(t, err)
			require.Equal(t, []string{`"farther"`}, got)

			// Nothing to put is no error, and puts nothing.
			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 10, nil))
			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 10, []string{}))
			got, err = b.exec.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Equal(t, all, got)

			// A map run without items.
			got, err = b.exec.MapItemsList(ctx, mapRunArn(sm, "map", "none"), 0, 10)
			require.NoError(t, err)
			require.Empty(t, got)
		})

		t.Run("PutReplaces", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 0, mapItems("a", 0, 5)))
			// Over 2..4 and on to 6: those stored are replaced, not
			// added to nor refused.
			again := []string{`"two"`, `"three"`, `"four"`, `"five"`, `"six"`}
			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 2, again))
			want := append(mapItems("a", 0, 2), again...)
			got, err := b.exec.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Equal(t, want, got)

			// The same batch put twice (a page read again after a
			// restart), across statements.
			big := mapItems("a", 0, 1000)
			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 0, big))
			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 0, big))
			require.Equal(t, big, listMapItems(ctx, t, b.exec, runA, 0, 1000))
		})

		t.Run("RunsNotMixed", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			// Interleaved, on the same indexes; and a run whose ARN the
			// others' begin with.
			runAB := runA + "b"
			for n := 0; n < 9; n += 3 {
				require.NoError(t, b.exec.MapItemsPut(ctx, runB, int64(n), mapItems("b", n, 3)))
				require.NoError(t, b.exec.MapItemsPut(ctx, runA, int64(n), mapItems("a", n, 3)))
				require.NoError(t, b.exec.MapItemsPut(ctx, runAB, int64(n), mapItems("ab", n, 3)))
			}
			for run, want := range map[string][]string{
				runA:  mapItems("a", 0, 9),
				runB:  mapItems("b", 0, 9),
				runAB: mapItems("ab", 0, 9),
			} {
				got, err := b.exec.MapItemsList(ctx, run, 0, 0)
				require.NoError(t, err)
				require.Equal(t, want, got, run)
				require.Equal(t, want, listMapItems(ctx, t, b.exec, run, 0, 2), run)
			}
		})

		t.Run("Delete", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 0, mapItems("a", 0, 500)))
			require.NoError(t, b.exec.MapItemsPut(ctx, runB, 0, mapItems("b", 0, 3)))

			require.NoError(t, b.exec.MapItemsDelete(ctx, runA))
			got, err := b.exec.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Empty(t, got)
			got, err = b.exec.MapItemsList(ctx, runB, 0, 0)
			require.NoError(t, err)
			require.Equal(t, mapItems("b", 0, 3), got)

			// Again, and of a run that has none: no error.
			require.NoError(t, b.exec.MapItemsDelete(ctx, runA))
			require.NoError(t, b.exec.MapItemsDelete(ctx, mapRunArn(sm, "map", "none")))

			// A run's items can be put again after.
			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 0, []string{`"new"`}))
			got, err = b.exec.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Equal(t, []string{`"new"`}, got)
		})

		t.Run("Large", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			const total, batch = 10_000, 1000
			pad := strings.Repeat("p", 200)
			want := make([]string, total)
			for i := range want {
				want[i] = fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, pad[:i%len(pad)])
			}
			start := time.Now()
			for n := 0; n < total; n += batch {
				require.NoError(t, b.exec.MapItemsPut(ctx, runA, int64(n), want[n:n+batch]))
			}
			t.Logf("put %d items in batches of %d: %v", total, batch, time.Since(start))

			require.Equal(t, want, listMapItems(ctx, t, b.exec, runA, 0, batch))
			require.Equal(t, want, listMapItems(ctx, t, b.exec, runA, 0, 777))
			got, err := b.exec.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Equal(t, want, got)
			got, err = b.exec.MapItemsList(ctx, runA, 4321, 3)
			require.NoError(t, err)
			require.Equal(t, want[4321:4324], got)

			// One put of them all, replacing.
			for i := range want {
				want[i] = fmt.Sprintf(`{"i":%d,"again":true}`, i)
			}
			require.NoError(t, b.exec.MapItemsPut(ctx, runA, 0, want))
			require.Equal(t, want, listMapItems(ctx, t, b.exec, runA, 0, batch))

			require.NoError(t, b.exec.MapItemsDelete(ctx, runA))
			got, err = b.exec.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Empty(t, got)
		})

		// A put of several statements is all or none with the
		// transaction it is made in.
		t.Run("InTransaction", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if b.inTx {
				t.Skip("needs transactions of its own")
			}

			items := mapItems("a", 0, 1000)
			tx, err := b.driver.Begin(ctx)
			require.NoError(t, err)
			require.NoError(t, tx.MapItemsPut(ctx, runA, 0, items))
			got, err := tx.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Equal(t, items, got)
			require.NoError(t, tx.Rollback(ctx))
			got, err = b.exec.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Empty(t, got)

			tx, err = b.driver.Begin(ctx)
			require.NoError(t, err)
			require.NoError(t, tx.MapItemsPut(ctx, runA, 0, items))
			require.NoError(t, tx.Commit(ctx))
			got, err = b.exec.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Equal(t, items, got)

			tx, err = b.driver.Begin(ctx)
			require.NoError(t, err)
			require.NoError(t, tx.MapItemsDelete(ctx, runA))
			require.NoError(t, tx.Rollback(ctx))
			got, err = b.exec.MapItemsList(ctx, runA, 0, 0)
			require.NoError(t, err)
			require.Equal(t, items, got)
		})

		t.Run("DeletedWithTheirExecution", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			cutoff := baseTime.Add(24 * time.Hour)
			oldX := executionFixture(sm.Arn, "old", baseTime, history.StatusSucceeded)
			oldX.StopDate = ptr(cutoff.Add(-time.Hour))
			old, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: oldX})
			require.NoError(t, err)
			running := b.insertExecution(ctx, t, sm.Arn, "running", baseTime, history.StatusRunning)

			oldRuns := []*store.MapRun{
				mapRunFixture(sm.Arn, old.Arn, "old-1", baseTime),
				mapRunFixture(sm.Arn, old.Arn, "old-2", baseTime.Add(time.Second)),
			}
			kept := mapRunFixture(sm.Arn, running.Arn, "kept", baseTime)
			for _, m := range append(oldRuns, kept) {
				require.NoError(t, b.exec.MapRunPut(ctx, m))
				require.NoError(t, b.exec.MapItemsPut(ctx, m.Arn, 0, mapItems(m.Arn, 0, 300)))
			}

			n, err := b.exec.ExecutionDeleteClosed(ctx, &store.ExecutionDeleteClosedParams{StoppedBefore: cutoff, Limit: 10})
			require.NoError(t, err)
			require.Equal(t, 1, n)

			for _, m := range oldRuns {
				got, err := b.exec.MapItemsList(ctx, m.Arn, 0, 0)
				require.NoError(t, err)
				require.Empty(t, got, m.Arn)
			}
			got, err := b.exec.MapItemsList(ctx, kept.Arn, 0, 0)
			require.NoError(t, err)
			require.Equal(t, mapItems(kept.Arn, 0, 300), got)

			// Nothing left to delete: the kept run's items stay.
			n, err = b.exec.ExecutionDeleteClosed(ctx, &store.ExecutionDeleteClosedParams{StoppedBefore: cutoff, Limit: 10})
			require.NoError(t, err)
			require.Zero(t, n)
			got, err = b.exec.MapItemsList(ctx, kept.Arn, 0, 0)
			require.NoError(t, err)
			require.Equal(t, mapItems(kept.Arn, 0, 300), got)
		})
	})
}
