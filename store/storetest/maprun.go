package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

// mapRunArn is the ARN of a map run of the state machine smArn's Map
// state label.
func mapRunArn(smArn, label, id string) string {
	return arnPrefix + "mapRun:" + smArn[len(arnPrefix+"stateMachine:"):] + "/" + label + ":" + id
}

// mapRunFixture is a RUNNING map run of executionArn (of the state
// machine smArn, Map state "map") that started at start.
func mapRunFixture(smArn, executionArn, id string, start time.Time) *store.MapRun {
	return &store.MapRun{
		Arn:                        mapRunArn(smArn, "map", id),
		ExecutionArn:               executionArn,
		StateMachineArn:            smArn + "/map",
		Status:                     "RUNNING",
		StartDate:                  start,
		MaxConcurrency:             10,
		ToleratedFailureCount:      1 << 40, // beyond 32 bits
		ToleratedFailurePercentage: 12.5,
		ItemCounts:                 `{"pending":3,"running":0,"succeeded":0,"total":3}`,
		ExecutionCounts:            `{"pending":3,"running":0,"succeeded":0,"total":3}`,
	}
}

func mapRunArns(ms []*store.MapRun) []string {
	arns := make([]string, len(ms))
	for i, m := range ms {
		arns[i] = m.Arn
	}
	return arns
}

func exerciseMapRuns(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("MapRuns", func(t *testing.T) {
		t.Parallel()

		t.Run("PutAndGet", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			parent := b.newExecution(ctx, t, "parent")
			m := mapRunFixture(parent.StateMachineArn, parent.Arn, "one", baseTime)
			require.NoError(t, b.exec.MapRunPut(ctx, m))
			got, err := b.exec.MapRunGet(ctx, m.Arn)
			require.NoError(t, err)
			require.Equal(t, m, got)

			// Put again: the row is replaced, every column of it.
			done := *m
			done.Status = "SUCCEEDED"
			done.StopDate = ptr(baseTime.Add(time.Minute))
			done.MaxConcurrency = 3
			done.ToleratedFailureCount = 2
			done.ToleratedFailurePercentage = 0.25
			done.ItemCounts = `{"pending":0,"running":0,"succeeded":3,"total":3}`
			done.ExecutionCounts = `{"pending":0,"running":0,"succeeded":3,"total":3}`
			done.RedriveCount = 1
			done.RedriveDate = ptr(baseTime.Add(30 * time.Second))
			require.NoError(t, b.exec.MapRunPut(ctx, &done))
			got, err = b.exec.MapRunGet(ctx, m.Arn)
			require.NoError(t, err)
			require.Equal(t, &done, got)
			ms, err := b.exec.MapRunList(ctx, &store.MapRunListParams{ExecutionArn: parent.Arn})
			require.NoError(t, err)
			require.Equal(t, []*store.MapRun{&done}, ms) // one row, not two

			// Times read back as whole milliseconds in UTC.
			odd := mapRunFixture(parent.StateMachineArn, parent.Arn, "odd", baseTime.Add(1234567*time.Nanosecond).In(time.FixedZone("X", 3600)))
			require.NoError(t, b.exec.MapRunPut(ctx, odd))
			got, err = b.exec.MapRunGet(ctx, odd.Arn)
			require.NoError(t, err)
			require.Equal(t, baseTime.Add(time.Millisecond), got.StartDate)
			require.Nil(t, got.StopDate)
			require.Nil(t, got.RedriveDate)

			_, err = b.exec.MapRunGet(ctx, mapRunArn(parent.StateMachineArn, "map", "none"))
			require.ErrorIs(t, err, store.ErrNotFound)
		})

		t.Run("List", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			parent := b.newExecution(ctx, t, "parent")
			other := b.insertExecution(ctx, t, parent.StateMachineArn, "other", baseTime, history.StatusRunning)
			// Put out of order, two starting at the same time (ordered by
			// ARN then).
			for _, x := range []struct {
				id    string
				start time.Duration
			}{
				{"c", 2 * time.Second},
				{"a", 0},
				{"e", 3 * time.Second},
				{"d", time.Second},
				{"b", time.Second},
			} {
				require.NoError(t, b.exec.MapRunPut(ctx, mapRunFixture(parent.StateMachineArn, parent.Arn, x.id, baseTime.Add(x.start))))
			}
			// Another execution's, older than them all.
			require.NoError(t, b.exec.MapRunPut(ctx, mapRunFixture(parent.StateMachineArn, other.Arn, "other", baseTime.Add(-time.Hour))))

			want := []string{"a", "b", "d", "c", "e"}
			for i, id := range want {
				want[i] = mapRunArn(parent.StateMachineArn, "map", id)
			}
			ms, err := b.exec.MapRunList(ctx, &store.MapRunListParams{ExecutionArn: parent.Arn})
			require.NoError(t, err)
			require.Equal(t, want, mapRunArns(ms))

			// Pages, by the cursor.
			for _, limit := range []int{1, 2, 5} {
				var arns []string
				p := store.MapRunListParams{ExecutionArn: parent.Arn, Limit: limit}
				for {
					ms, err := b.exec.MapRunList(ctx, &p)
					require.NoError(t, err)
					require.LessOrEqual(t, len(ms), limit)
					arns = append(arns, mapRunArns(ms)...)
					if len(ms) < limit {
						break
					}
					last := ms[len(ms)-1]
					p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
				}
				require.Equal(t, want, arns, "limit %d", limit)
			}

			ms, err = b.exec.MapRunList(ctx, &store.MapRunListParams{ExecutionArn: other.Arn})
			require.NoError(t, err)
			require.Equal(t, []string{mapRunArn(parent.StateMachineArn, "map", "other")}, mapRunArns(ms))
			ms, err = b.exec.MapRunList(ctx, &store.MapRunListParams{ExecutionArn: executionArn(parent.StateMachineArn, "none")})
			require.NoError(t, err)
			require.Empty(t, ms)
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
			}
			// A child of an old map run that still runs stays.
			child := executionFixture(sm.Arn+"/map", "child", baseTime, history.StatusRunning)
			child.MapRunArn = oldRuns[0].Arn
			_, err = b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: child})
			require.NoError(t, err)

			n, err := b.exec.ExecutionDeleteClosed(ctx, &store.ExecutionDeleteClosedParams{StoppedBefore: cutoff, Limit: 10})
			require.NoError(t, err)
			require.Equal(t, 1, n)

			for _, m := range oldRuns {
				_, err := b.exec.MapRunGet(ctx, m.Arn)
				require.ErrorIs(t, err, store.ErrNotFound)
			}
			ms, err := b.exec.MapRunList(ctx, &store.MapRunListParams{ExecutionArn: old.Arn})
			require.NoError(t, err)
			require.Empty(t, ms)

			got, err := b.exec.MapRunGet(ctx, kept.Arn)
			require.NoError(t, err)
			require.Equal(t, kept, got)
			gotChild, err := b.exec.ExecutionGet(ctx, child.Arn)
			require.NoError(t, err)
			require.Equal(t, child, gotChild)
		})
	})

	t.Run("MapRunExecutions", func(t *testing.T) {
		t.Parallel()

		t.Run("RoundTrip", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			childSm := sm.Arn + "/map"
			run := mapRunArn(sm.Arn, "map", "run")
			in := executionFixture(childSm, "direct", baseTime, history.StatusRunning)
			in.MapRunArn = run
			x, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: in})
			require.NoError(t, err)
			require.Equal(t, in, x)
			got, err := b.exec.ExecutionGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, in, got)

			// Through a step, unowned and owned (the two inserts of a
			// driver may differ).
			viaStep := executionFixture(childSm, "step", baseTime, history.StatusRunning)
			viaStep.MapRunArn = run
			f, err := b.exec.NodeRegister(ctx, "node-a", time.Hour)
			require.NoError(t, err)
			owned := executionFixture(childSm, "owned", baseTime, history.StatusRunning)
			owned.MapRunArn = run
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{
				{Insert: viaStep, Events: eventFixtures(viaStep.Arn, 1, 2)},
				{Insert: owned, Fence: &f, Events: eventFixtures(owned.Arn, 1, 2)},
			}))
			for _, want := range []*store.Execution{viaStep, owned} {
				got, err := b.exec.ExecutionGet(ctx, want.Arn)
				require.NoError(t, err)
				require.Equal(t, want, got)
			}

			// An update leaves it, and returns it.
			up, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: viaStep.Arn, ExpectedVersion: 1,
				Status: history.StatusSucceeded, Output: ptr("{}"), StopDate: ptr(baseTime.Add(time.Second)), LastEventID: 3})
			require.NoError(t, err)
			require.Equal(t, run, up.MapRunArn)
			got, err = b.exec.ExecutionGet(ctx, viaStep.Arn)
			require.NoError(t, err)
			require.Equal(t, up, got)

			running, err := b.exec.ExecutionListRunning(ctx, "", 0)
			require.NoError(t, err)
			require.Equal(t, []*store.Execution{in, owned}, running)
			xs, err := b.exec.ExecutionList(ctx, &store.ExecutionListParams{MapRunArn: run})
			require.NoError(t, err)
			require.Equal(t, []string{"step", "owned", "direct"}, executionNames(xs))
			for _, x := range xs {
				require.Equal(t, run, x.MapRunArn, x.Name)
			}
		})

		t.Run("List", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			other := b.insertStateMachine(ctx, t, "other")
			childSm := sm.Arn + "/map"
			runA, runB := mapRunArn(sm.Arn, "map", "a"), mapRunArn(sm.Arn, "map", "b")
			for i, x := range []struct {
				name, smArn, run string
				status           history.ExecutionStatus
			}{
				{"parent", sm.Arn, "", history.StatusRunning},
				{"a1", childSm, runA, history.StatusSucceeded},
				{"a2", childSm, runA, history.StatusRunning},
				{"b1", childSm, runB, history.StatusRunning},
				{"a3", childSm, runA, history.StatusFailed},
				{"a4", childSm, runA, history.StatusRunning},
				{"loose", childSm, "", history.StatusRunning},
				{"parent-2", sm.Arn, "", history.StatusSucceeded},
				// Named after runA, another state machine's: a map run's
				// children are its own, whatever their state machine.
				{"stray", other.Arn, runA, history.StatusRunning},
			} {
				in := executionFixture(x.smArn, x.name, baseTime.Add(time.Duration(i)*time.Second), x.status)
				in.MapRunArn = x.run
				_, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: in})
				require.NoError(t, err)
			}

			for _, tc := range []struct {
				p    store.ExecutionListParams
				want []string
			}{
				{store.ExecutionListParams{MapRunArn: runA}, []string{"stray", "a4", "a3", "a2", "a1"}},
				// The state machine is not looked at.
				{store.ExecutionListParams{MapRunArn: runA, StateMachineArn: sm.Arn}, []string{"stray", "a4", "a3", "a2", "a1"}},
				{store.ExecutionListParams{MapRunArn: runA, StateMachineArn: childSm}, []string{"stray", "a4", "a3", "a2", "a1"}},
				{store.ExecutionListParams{MapRunArn: runB}, []string{"b1"}},
				{store.ExecutionListParams{MapRunArn: mapRunArn(sm.Arn, "map", "c")}, []string{}},
				{store.ExecutionListParams{MapRunArn: runA, Status: history.StatusRunning}, []string{"stray", "a4", "a2"}},
				{store.ExecutionListParams{MapRunArn: runA, Status: history.StatusFailed}, []string{"a3"}},
				{store.ExecutionListParams{MapRunArn: runB, Status: history.StatusSucceeded}, []string{}},
				// A list of a state machine's holds no map run's children,
				// whatever their state machine: they are their map run's.
				{store.ExecutionListParams{StateMachineArn: sm.Arn}, []string{"parent-2", "parent"}},
				{store.ExecutionListParams{StateMachineArn: sm.Arn, Status: history.StatusRunning}, []string{"parent"}},
				{store.ExecutionListParams{StateMachineArn: other.Arn}, []string{}},
				{store.ExecutionListParams{StateMachineArn: childSm}, []string{"loose"}},
				{store.ExecutionListParams{StateMachineArn: childSm, Status: history.StatusRunning}, []string{"loose"}},
			} {
				xs, err := b.exec.ExecutionList(ctx, &tc.p)
				require.NoError(t, err)
				require.Equal(t, tc.want, executionNames(xs), "%+v", tc.p)
				for _, x := range xs {
					if tc.p.MapRunArn != "" {
						require.Equal(t, tc.p.MapRunArn, x.MapRunArn, x.Name)
					}
				}
			}

			// Pages of a map run, by the cursor.
			var names []string
			p := store.ExecutionListParams{MapRunArn: runA, Limit: 2}
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
			require.Equal(t, []string{"stray", "a4", "a3", "a2", "a1"}, names)
		})
	})
}
