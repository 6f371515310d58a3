package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

func exerciseVersions(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	// publish publishes revision of sm, expecting a new version when
	// created says so.
	publish := func(t *testing.T, b *testBundle, smArn, revision string, created bool) *store.Version {
		t.Helper()
		v, isNew, err := b.exec.VersionPublish(ctx, &store.Version{StateMachineArn: smArn, RevisionID: revision,
			Description: "of " + revision, CreatedAt: baseTime.Add(time.Minute)})
		require.NoError(t, err)
		require.Equal(t, created, isNew, "created")
		return v
	}
	numbers := func(vs []*store.Version) []int64 {
		ns := make([]int64, len(vs))
		for i, v := range vs {
			ns[i] = v.Number
		}
		return ns
	}
	aliasNames := func(as []*store.Alias) []string {
		names := make([]string, len(as))
		for i, a := range as {
			names[i] = a.Name
		}
		return names
	}

	t.Run("Versions", func(t *testing.T) {
		t.Parallel()

		t.Run("PublishNumbersFromOne", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			other := b.insertStateMachine(ctx, t, "other")
			for i, rev := range []string{"rev-1", "rev-2", "rev-3"} {
				v := publish(t, b, sm.Arn, rev, true)
				require.Equal(t, &store.Version{StateMachineArn: sm.Arn, Number: int64(i + 1), RevisionID: rev,
					Description: "of " + rev, CreatedAt: baseTime.Add(time.Minute)}, v)
				require.Equal(t, fmt.Sprintf("%s:%d", sm.Arn, i+1), v.Arn())
			}
			require.Equal(t, int64(1), publish(t, b, other.Arn, "rev-1", true).Number, "numbers are per state machine")

			got, err := b.exec.VersionGet(ctx, sm.Arn, 2)
			require.NoError(t, err)
			require.Equal(t, &store.Version{StateMachineArn: sm.Arn, Number: 2, RevisionID: "rev-2",
				Description: "of rev-2", CreatedAt: baseTime.Add(time.Minute)}, got)
			_, err = b.exec.VersionGet(ctx, sm.Arn, 4)
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = b.exec.VersionGet(ctx, stateMachineArn("nope"), 1)
			require.ErrorIs(t, err, store.ErrNotFound)
		})

		t.Run("PublishTruncatesTime", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			v, created, err := b.exec.VersionPublish(ctx, &store.Version{StateMachineArn: sm.Arn, RevisionID: "rev-1", Number: 42,
				CreatedAt: time.Date(2026, 3, 4, 5, 6, 7, 8_999_999, time.FixedZone("Y", -5*3600))})
			require.NoError(t, err)
			require.True(t, created)
			require.Equal(t, int64(1), v.Number, "the number given is ignored")
			require.Equal(t, time.Date(2026, 3, 4, 10, 6, 7, 8_000_000, time.UTC), v.CreatedAt)
			got, err := b.exec.VersionGet(ctx, sm.Arn, 1)
			require.NoError(t, err)
			require.Equal(t, v, got)
		})

		t.Run("PublishedRevisionReturnsItsVersion", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			v1 := publish(t, b, sm.Arn, "rev-1", true)
			publish(t, b, sm.Arn, "rev-2", true)
			again, created, err := b.exec.VersionPublish(ctx, &store.Version{StateMachineArn: sm.Arn, RevisionID: "rev-1",
				Description: "another", CreatedAt: baseTime.Add(time.Hour)})
			require.NoError(t, err)
			require.False(t, created)
			require.Equal(t, v1, again, "the version as it was published")
			require.Equal(t, int64(3), publish(t, b, sm.Arn, "rev-3", true).Number, "no number was spent")
		})

		t.Run("NumbersNotReused", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			publish(t, b, sm.Arn, "rev-1", true)
			publish(t, b, sm.Arn, "rev-2", true)
			require.NoError(t, b.exec.VersionDelete(ctx, sm.Arn, 2))
			_, err := b.exec.VersionGet(ctx, sm.Arn, 2)
			require.ErrorIs(t, err, store.ErrNotFound)
			require.Equal(t, int64(3), publish(t, b, sm.Arn, "rev-3", true).Number, "the newest's number is not used again")
			require.Equal(t, int64(4), publish(t, b, sm.Arn, "rev-2", true).Number, "a deleted version's revision is published anew")
			require.NoError(t, b.exec.VersionDelete(ctx, sm.Arn, 1))
			require.NoError(t, b.exec.VersionDelete(ctx, sm.Arn, 3))
			require.NoError(t, b.exec.VersionDelete(ctx, sm.Arn, 4))
			vs, err := b.exec.VersionList(ctx, sm.Arn, 0, 0)
			require.NoError(t, err)
			require.Empty(t, vs)
			require.Equal(t, int64(5), publish(t, b, sm.Arn, "rev-1", true).Number, "with none left, the count goes on")
		})

		t.Run("List", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			other := b.insertStateMachine(ctx, t, "other")
			for i := 1; i <= 5; i++ {
				publish(t, b, sm.Arn, fmt.Sprintf("rev-%d", i), true)
			}
			publish(t, b, other.Arn, "rev-1", true)

			for _, tc := range []struct {
				before int64
				limit  int
				want   []int64
			}{
				{0, 0, []int64{5, 4, 3, 2, 1}},
				{0, 2, []int64{5, 4}},
				{4, 2, []int64{3, 2}},
				{2, 10, []int64{1}},
				{1, 10, []int64{}},
				{100, 1, []int64{5}},
			} {
				vs, err := b.exec.VersionList(ctx, sm.Arn, tc.before, tc.limit)
				require.NoError(t, err)
				require.Equal(t, tc.want, numbers(vs), "before %d, limit %d", tc.before, tc.limit)
			}
			vs, err := b.exec.VersionList(ctx, sm.Arn, 0, 1)
			require.NoError(t, err)
			require.Equal(t, []*store.Version{{StateMachineArn: sm.Arn, Number: 5, RevisionID: "rev-5",
				Description: "of rev-5", CreatedAt: baseTime.Add(time.Minute)}}, vs)
			vs, err = b.exec.VersionList(ctx, stateMachineArn("nope"), 0, 0)
			require.NoError(t, err)
			require.Empty(t, vs)
		})

		t.Run("DeleteMissing", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			publish(t, b, sm.Arn, "rev-1", true)
			require.ErrorIs(t, b.exec.VersionDelete(ctx, sm.Arn, 2), store.ErrNotFound)
			if !b.afterError() {
				return
			}
			require.ErrorIs(t, b.exec.VersionDelete(ctx, stateMachineArn("nope"), 1), store.ErrNotFound)
			require.NoError(t, b.exec.VersionDelete(ctx, sm.Arn, 1))
			require.ErrorIs(t, b.exec.VersionDelete(ctx, sm.Arn, 1), store.ErrNotFound)
		})

		t.Run("PublishStateMachineMissing", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, _, err := b.exec.VersionPublish(ctx, &store.Version{StateMachineArn: stateMachineArn("nope"), RevisionID: "rev-1", CreatedAt: baseTime})
			require.ErrorIs(t, err, store.ErrNotFound)
		})

		t.Run("ConcurrentPublishes", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if b.inTx {
				t.Skip("concurrent publishers each need a connection of their own")
			}

			sm := b.insertStateMachine(ctx, t, "orders")
			const n = 8
			type result struct {
				v       *store.Version
				created bool
				err     error
			}
			run := func(revision func(i int) string) []result {
				results := make([]result, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := &results[i]
						r.v, r.created, r.err = b.driver.Executor().VersionPublish(ctx,
							&store.Version{StateMachineArn: sm.Arn, RevisionID: revision(i), CreatedAt: baseTime})
					}()
				}
				wg.Wait()
				return results
			}

			// One revision: one version.
			created := 0
			for _, r := range run(func(int) string { return "rev-same" }) {
				require.NoError(t, r.err)
				require.Equal(t, int64(1), r.v.Number)
				if r.created {
					created++
				}
			}
			require.Equal(t, 1, created)

			// Distinct revisions: distinct numbers, none skipped.
			seen := map[int64]bool{}
			for _, r := range run(func(i int) string { return fmt.Sprintf("rev-%d", i) }) {
				require.NoError(t, r.err)
				require.True(t, r.created)
				require.False(t, seen[r.v.Number], "number %d twice", r.v.Number)
				seen[r.v.Number] = true
			}
			vs, err := b.exec.VersionList(ctx, sm.Arn, 0, 0)
			require.NoError(t, err)
			require.Len(t, vs, n+1)
			require.Equal(t, int64(n+1), vs[0].Number)
		})
	})

	t.Run("Aliases", func(t *testing.T) {
		t.Parallel()

		alias := func(smArn, name string, routes ...store.AliasRoute) *store.Alias {
			return &store.Alias{StateMachineArn: smArn, Name: name, Description: "about " + name, Routing: routes,
				CreatedAt: baseTime, UpdatedAt: baseTime}
		}

		t.Run("InsertGetUpdateListDelete", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			other := b.insertStateMachine(ctx, t, "other")
			for _, rev := range []string{"rev-1", "rev-2", "rev-3"} {
				publish(t, b, sm.Arn, rev, true)
			}
			publish(t, b, other.Arn, "rev-1", true)
			prod := alias(sm.Arn, "prod", store.AliasRoute{Version: 1, Weight: 100})
			beta := alias(sm.Arn, "beta", store.AliasRoute{Version: 2, Weight: 80}, store.AliasRoute{Version: 1, Weight: 20})
			for _, a := range []*store.Alias{prod, beta, alias(sm.Arn, "canary", store.AliasRoute{Version: 2, Weight: 100}),
				alias(other.Arn, "prod", store.AliasRoute{Version: 1, Weight: 100})} {
				require.NoError(t, b.exec.AliasInsert(ctx, a))
			}
			require.Equal(t, sm.Arn+":prod", prod.Arn())

			got, err := b.exec.AliasGet(ctx, sm.Arn, "beta")
			require.NoError(t, err)
			require.Equal(t, beta, got, "the routes in their order")
			_, err = b.exec.AliasGet(ctx, sm.Arn, "nope")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = b.exec.AliasGet(ctx, stateMachineArn("nope"), "prod")
			require.ErrorIs(t, err, store.ErrNotFound)

			for _, tc := range []struct {
				after string
				limit int
				want  []string
			}{
				{"", 0, []string{"beta", "canary", "prod"}},
				{"", 1, []string{"beta"}},
				{"beta", 1, []string{"canary"}},
				{"canary", 0, []string{"prod"}},
				{"prod", 0, []string{}},
			} {
				as, err := b.exec.AliasList(ctx, sm.Arn, tc.after, tc.limit)
				require.NoError(t, err)
				require.Equal(t, tc.want, aliasNames(as), "after %q, limit %d", tc.after, tc.limit)
			}
			as, err := b.exec.AliasList(ctx, sm.Arn, "canary", 0)
			require.NoError(t, err)
			require.Equal(t, []*store.Alias{prod}, as)

			updated := &store.Alias{StateMachineArn: sm.Arn, Name: "prod", Description: "moved",
				Routing:   []store.AliasRoute{{Version: 3, Weight: 90}, {Version: 1, Weight: 10}},
				CreatedAt: baseTime.Add(time.Hour), UpdatedAt: baseTime.Add(time.Minute)}
			require.NoError(t, b.exec.AliasUpdate(ctx, updated))
			got, err = b.exec.AliasGet(ctx, sm.Arn, "prod")
			require.NoError(t, err)
			want := *updated
			want.CreatedAt = baseTime // never updated
			require.Equal(t, &want, got)
			got, err = b.exec.AliasGet(ctx, other.Arn, "prod")
			require.NoError(t, err)
			require.Equal(t, alias(other.Arn, "prod", store.AliasRoute{Version: 1, Weight: 100}), got, "another state machine's alias of the name stays")

			require.NoError(t, b.exec.AliasDelete(ctx, sm.Arn, "beta"))
			_, err = b.exec.AliasGet(ctx, sm.Arn, "beta")
			require.ErrorIs(t, err, store.ErrNotFound)
			as, err = b.exec.AliasList(ctx, sm.Arn, "", 0)
			require.NoError(t, err)
			require.Equal(t, []string{"canary", "prod"}, aliasNames(as))

			require.ErrorIs(t, b.exec.AliasDelete(ctx, sm.Arn, "beta"), store.ErrNotFound)
			if !b.afterError() {
				return
			}
			require.ErrorIs(t, b.exec.AliasUpdate(ctx, alias(sm.Arn, "beta")), store.ErrNotFound)
			if !b.afterError() {
				return
			}
			require.ErrorIs(t, b.exec.AliasUpdate(ctx, alias(stateMachineArn("nope"), "prod")), store.ErrNotFound)
		})

		t.Run("NameTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			publish(t, b, sm.Arn, "rev-1", true)
			publish(t, b, sm.Arn, "rev-2", true)
			first := alias(sm.Arn, "prod", store.AliasRoute{Version: 1, Weight: 100})
			require.NoError(t, b.exec.AliasInsert(ctx, first))
			err := b.exec.AliasInsert(ctx, alias(sm.Arn, "prod", store.AliasRoute{Version: 2, Weight: 100}))
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err := b.exec.AliasGet(ctx, sm.Arn, "prod")
			require.NoError(t, err)
			require.Equal(t, first, got)
		})

		t.Run("VersionMissing", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			publish(t, b, sm.Arn, "rev-1", true)
			err := b.exec.AliasInsert(ctx, alias(sm.Arn, "prod", store.AliasRoute{Version: 1, Weight: 50}, store.AliasRoute{Version: 2, Weight: 50}))
			var missing *store.VersionMissingError
			require.ErrorAs(t, err, &missing)
			require.Equal(t, int64(2), missing.Number)
			require.ErrorIs(t, err, store.ErrNotFound)
			if !b.afterError() {
				return
			}
			_, err = b.exec.AliasGet(ctx, sm.Arn, "prod")
			require.ErrorIs(t, err, store.ErrNotFound, "nothing inserted")

			first := alias(sm.Arn, "prod", store.AliasRoute{Version: 1, Weight: 100})
			require.NoError(t, b.exec.AliasInsert(ctx, first))
			err = b.exec.AliasUpdate(ctx, alias(sm.Arn, "prod", store.AliasRoute{Version: 3, Weight: 100}))
			require.ErrorAs(t, err, &missing)
			require.Equal(t, int64(3), missing.Number)
			got, err := b.exec.AliasGet(ctx, sm.Arn, "prod")
			require.NoError(t, err)
			require.Equal(t, first, got, "nothing updated")
		})

		t.Run("VersionInUse", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			publish(t, b, sm.Arn, "rev-1", true)
			publish(t, b, sm.Arn, "rev-2", true)
			require.NoError(t, b.exec.AliasInsert(ctx, alias(sm.Arn, "prod", store.AliasRoute{Version: 1, Weight: 100})))
			require.NoError(t, b.exec.AliasInsert(ctx, alias(sm.Arn, "beta", store.AliasRoute{Version: 2, Weight: 60}, store.AliasRoute{Version: 1, Weight: 40})))
			err := b.exec.VersionDelete(ctx, sm.Arn, 1)
			var inUse *store.VersionInUseError
			require.ErrorAs(t, err, &inUse)
			require.Equal(t, []string{"beta", "prod"}, inUse.Aliases)
			require.ErrorIs(t, err, store.ErrConflict)
			if !b.afterError() {
				return
			}
			_, err = b.exec.VersionGet(ctx, sm.Arn, 1)
			require.NoError(t, err, "not deleted")
			require.NoError(t, b.exec.AliasUpdate(ctx, alias(sm.Arn, "beta", store.AliasRoute{Version: 2, Weight: 100})))
			require.NoError(t, b.exec.AliasDelete(ctx, sm.Arn, "prod"))
			require.NoError(t, b.exec.VersionDelete(ctx, sm.Arn, 1))
		})

		// A version's deletion racing an alias's creation or update onto
		// it: one of them wins, and no alias ever routes to a deleted
		// version.
		t.Run("DeleteVersionRacesAlias", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if b.inTx {
				t.Skip("concurrent writers each need a connection of their own")
			}
			ex := b.driver.Executor()
			sm := b.insertStateMachine(ctx, t, "orders")
			base := publish(t, b, sm.Arn, "rev-base", true)
			require.NoError(t, ex.AliasInsert(ctx, alias(sm.Arn, "moving", store.AliasRoute{Version: base.Number, Weight: 100})))
			for i := range 30 {
				v := publish(t, b, sm.Arn, fmt.Sprintf("rev-%d", i), true)
				name := fmt.Sprintf("new-%d", i)
				var wg sync.WaitGroup
				var delErr, insErr, updErr error
				wg.Add(3)
				go func() {
					defer wg.Done()
					delErr = ex.VersionDelete(ctx, sm.Arn, v.Number)
				}()
				go func() {
					defer wg.Done()
					insErr = ex.AliasInsert(ctx, alias(sm.Arn, name, store.AliasRoute{Version: v.Number, Weight: 100}))
				}()
				go func() {
					defer wg.Done()
					updErr = ex.AliasUpdate(ctx, alias(sm.Arn, "moving", store.AliasRoute{Version: v.Number, Weight: 100}))
				}()
				wg.Wait()
				for _, err := range []error{insErr, updErr} {
					if err != nil {
						var missing *store.VersionMissingError
						require.ErrorAs(t, err, &missing, "round %d", i)
					}
				}
				if delErr != nil {
					var inUse *store.VersionInUseError
					require.ErrorAs(t, delErr, &inUse, "round %d", i)
				}
				_, err := ex.VersionGet(ctx, sm.Arn, v.Number)
				deleted := errors.Is(err, store.ErrNotFound)
				require.Equal(t, delErr == nil, deleted, "round %d", i)
				aliases, err := ex.AliasList(ctx, sm.Arn, "", 0)
				require.NoError(t, err)
				for _, a := range aliases {
					for _, r := range a.Routing {
						if r.Version == v.Number {
							require.False(t, deleted, "round %d: alias %s routes to deleted version %d", i, a.Name, v.Number)
						}
					}
				}
				if !deleted {
					// Point "moving" back so the next round starts alike.
					require.NoError(t, ex.AliasUpdate(ctx, alias(sm.Arn, "moving", store.AliasRoute{Version: base.Number, Weight: 100})))
				}
			}
		})

		t.Run("StateMachineMissing", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			err := b.exec.AliasInsert(ctx, alias(stateMachineArn("nope"), "prod", store.AliasRoute{Version: 1, Weight: 100}))
			require.ErrorIs(t, err, store.ErrNotFound)
			if !b.afterError() {
				return
			}
			_, err = b.exec.AliasGet(ctx, stateMachineArn("nope"), "prod")
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})

	t.Run("StateMachineDeleteRemovesVersionsAndAliases", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		sm := b.insertStateMachine(ctx, t, "orders")
		other := b.insertStateMachine(ctx, t, "other")
		for _, arn := range []string{sm.Arn, other.Arn} {
			publish(t, b, arn, "rev-1", true)
			publish(t, b, arn, "rev-2", true)
			require.NoError(t, b.exec.AliasInsert(ctx, &store.Alias{StateMachineArn: arn, Name: "prod",
				Routing: []store.AliasRoute{{Version: 2, Weight: 100}}, CreatedAt: baseTime, UpdatedAt: baseTime}))
		}
		require.NoError(t, b.exec.StateMachineDelete(ctx, sm.Arn))

		_, err := b.exec.VersionGet(ctx, sm.Arn, 1)
		require.ErrorIs(t, err, store.ErrNotFound)
		vs, err := b.exec.VersionList(ctx, sm.Arn, 0, 0)
		require.NoError(t, err)
		require.Empty(t, vs)
		_, err = b.exec.AliasGet(ctx, sm.Arn, "prod")
		require.ErrorIs(t, err, store.ErrNotFound)
		as, err := b.exec.AliasList(ctx, sm.Arn, "", 0)
		require.NoError(t, err)
		require.Empty(t, as)

		vs, err = b.exec.VersionList(ctx, other.Arn, 0, 0)
		require.NoError(t, err)
		require.Equal(t, []int64{2, 1}, numbers(vs), "another state machine's stay")
		as, err = b.exec.AliasList(ctx, other.Arn, "", 0)
		require.NoError(t, err)
		require.Equal(t, []string{"prod"}, aliasNames(as))

		// A state machine of the same name starts over: its count went
		// with the one deleted.
		again := stateMachineFixture("orders")
		again.RevisionID = "rev-again" // the deleted one's revisions stay
		_, err = b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: again})
		require.NoError(t, err)
		require.Equal(t, int64(1), publish(t, b, sm.Arn, "rev-again", true).Number)
		as, err = b.exec.AliasList(ctx, sm.Arn, "", 0)
		require.NoError(t, err)
		require.Empty(t, as)

		_, _, err = b.exec.VersionPublish(ctx, &store.Version{StateMachineArn: stateMachineArn("gone"), RevisionID: "rev-1", CreatedAt: baseTime})
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("Executions", func(t *testing.T) {
		t.Parallel()

		t.Run("RoundTrip", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			in := executionFixture(sm.Arn, "direct", baseTime, history.StatusRunning)
			in.VersionArn = sm.Arn + ":1"
			x, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: in})
			require.NoError(t, err)
			require.Equal(t, in, x)
			got, err := b.exec.ExecutionGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, in, got)

			// Through a step, unowned and owned (the two inserts of a
			// driver may differ).
			viaStep := executionFixture(sm.Arn, "step", baseTime, history.StatusRunning)
			viaStep.VersionArn, viaStep.AliasArn = sm.Arn+":2", sm.Arn+":prod"
			f, err := b.exec.NodeRegister(ctx, "node-a", time.Hour)
			require.NoError(t, err)
			owned := executionFixture(sm.Arn, "owned", baseTime, history.StatusRunning)
			owned.VersionArn, owned.AliasArn = sm.Arn+":3", sm.Arn+":beta"
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{
				{Insert: viaStep, Events: eventFixtures(viaStep.Arn, 1, 2)},
				{Insert: owned, Fence: &f, Events: eventFixtures(owned.Arn, 1, 2)},
			}))
			for _, want := range []*store.Execution{viaStep, owned} {
				got, err := b.exec.ExecutionGet(ctx, want.Arn)
				require.NoError(t, err)
				require.Equal(t, want, got)
			}

			// An update leaves them, and returns them.
			up, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: viaStep.Arn, ExpectedVersion: 1,
				Status: history.StatusSucceeded, Output: ptr("{}"), StopDate: ptr(baseTime.Add(time.Second)), LastEventID: 3})
			require.NoError(t, err)
			require.Equal(t, viaStep.VersionArn, up.VersionArn)
			require.Equal(t, viaStep.AliasArn, up.AliasArn)
			got, err = b.exec.ExecutionGet(ctx, viaStep.Arn)
			require.NoError(t, err)
			require.Equal(t, up, got)

			running, err := b.exec.ExecutionListRunning(ctx, "", 0)
			require.NoError(t, err)
			require.Equal(t, []*store.Execution{in, owned}, running)
		})

		t.Run("ListFilters", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			other := b.insertStateMachine(ctx, t, "other")
			v1, v2 := sm.Arn+":1", sm.Arn+":2"
			prod, beta := sm.Arn+":prod", sm.Arn+":beta"
			for i, x := range []struct {
				name, version, alias string
				status               history.ExecutionStatus
			}{
				{"plain", "", "", history.StatusRunning},
				{"v1", v1, "", history.StatusRunning},
				{"v1-prod", v1, prod, history.StatusSucceeded},
				{"v2-prod", v2, prod, history.StatusRunning},
				{"v2-beta", v2, beta, history.StatusRunning},
				{"v1-prod-2", v1, prod, history.StatusRunning},
				{"v1-done", v1, "", history.StatusFailed},
			} {
				in := executionFixture(sm.Arn, x.name, baseTime.Add(time.Duration(i)*time.Second), x.status)
				in.VersionArn, in.AliasArn = x.version, x.alias
				_, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: in})
				require.NoError(t, err)
			}
			// Another state machine's execution, named after sm's version
			// and alias: ANDed with the state machine, it never shows.
			stray := executionFixture(other.Arn, "stray", baseTime.Add(time.Hour), history.StatusRunning)
			stray.VersionArn, stray.AliasArn = v1, prod
			_, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: stray})
			require.NoError(t, err)

			for _, tc := range []struct {
				p    store.ExecutionListParams
				want []string
			}{
				{store.ExecutionListParams{}, []string{"v1-done", "v1-prod-2", "v2-beta", "v2-prod", "v1-prod", "v1", "plain"}},
				{store.ExecutionListParams{VersionArn: v1}, []string{"v1-done", "v1-prod-2", "v1-prod", "v1"}},
				{store.ExecutionListParams{VersionArn: v2}, []string{"v2-beta", "v2-prod"}},
				{store.ExecutionListParams{VersionArn: sm.Arn + ":3"}, []string{}},
				{store.ExecutionListParams{AliasArn: prod}, []string{"v1-prod-2", "v2-prod", "v1-prod"}},
				{store.ExecutionListParams{AliasArn: beta}, []string{"v2-beta"}},
				{store.ExecutionListParams{VersionArn: v1, AliasArn: prod}, []string{"v1-prod-2", "v1-prod"}},
				{store.ExecutionListParams{VersionArn: v2, AliasArn: prod}, []string{"v2-prod"}},
				{store.ExecutionListParams{VersionArn: v1, Status: history.StatusRunning}, []string{"v1-prod-2", "v1"}},
				{store.ExecutionListParams{AliasArn: prod, Status: history.StatusSucceeded}, []string{"v1-prod"}},
				{store.ExecutionListParams{VersionArn: v1, AliasArn: prod, Status: history.StatusRunning}, []string{"v1-prod-2"}},
				{store.ExecutionListParams{Status: history.StatusRunning}, []string{"v1-prod-2", "v2-beta", "v2-prod", "v1", "plain"}},
			} {
				p := tc.p
				p.StateMachineArn = sm.Arn
				xs, err := b.exec.ExecutionList(ctx, &p)
				require.NoError(t, err)
				require.Equal(t, tc.want, executionNames(xs), "%+v", tc.p)
			}

			// Pages of a version, by the cursor.
			var names []string
			p := store.ExecutionListParams{StateMachineArn: sm.Arn, VersionArn: v1, Limit: 3}
			for {
				xs, err := b.exec.ExecutionList(ctx, &p)
				require.NoError(t, err)
				names = append(names, executionNames(xs)...)
				if len(xs) < p.Limit {
					break
				}
				last := xs[len(xs)-1]
				p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
			}
			require.Equal(t, []string{"v1-done", "v1-prod-2", "v1-prod", "v1"}, names)

			xs, err := b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: other.Arn, AliasArn: prod})
			require.NoError(t, err)
			require.Equal(t, []string{"stray"}, executionNames(xs))
			require.Equal(t, v1, xs[0].VersionArn)
			require.Equal(t, prod, xs[0].AliasArn)
		})
	})
}
