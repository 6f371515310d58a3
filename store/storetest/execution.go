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

func exerciseExecutions(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("ExecutionInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndGets", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			in := executionFixture(sm.Arn, "x1", baseTime, history.StatusRunning)
			x, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: in})
			require.NoError(t, err)
			require.Equal(t, in, x)
			got, err := b.exec.ExecutionGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, in, got)
			require.Nil(t, got.Output)
			require.Nil(t, got.StopDate)
		})

		t.Run("EveryField", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			in := executionFixture(sm.Arn, "x1", baseTime, history.StatusFailed)
			in.Output = ptr("")
			in.Error = ptr("States.TaskFailed")
			in.Cause = ptr(`{"why":"because"}`)
			in.StopDate = ptr(baseTime.Add(time.Hour))
			in.TraceHeader = "Root=1-abc"
			in.TestCase = "HappyPath"
			in.RedriveCount = 2
			in.RedriveDate = ptr(baseTime.Add(time.Minute))
			in.Version = 7
			in.LastEventID = 42
			x, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: in})
			require.NoError(t, err)
			require.Equal(t, in, x)
			got, err := b.exec.ExecutionGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, in, got)
		})

		t.Run("TruncatesTimesToMillisecondsUTC", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			in := executionFixture(sm.Arn, "x1", time.Date(2026, 3, 4, 5, 6, 7, 8_999_999, time.FixedZone("Y", -5*3600)), history.StatusSucceeded)
			in.StopDate = ptr(in.StartDate)
			x, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: in})
			require.NoError(t, err)
			want := time.Date(2026, 3, 4, 10, 6, 7, 8_000_000, time.UTC)
			require.Equal(t, want, x.StartDate)
			require.Equal(t, want, *x.StopDate)
			got, err := b.exec.ExecutionGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, x, got)
		})

		t.Run("ArnTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			_, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: executionFixture(x.StateMachineArn, "x1", baseTime.Add(time.Hour), history.StatusRunning)})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err := b.exec.ExecutionGet(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, x, got)
		})
	})

	t.Run("ExecutionGet", func(t *testing.T) {
		t.Parallel()

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, err := b.exec.ExecutionGet(ctx, executionArn(stateMachineArn("sm"), "nope"))
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})

	t.Run("ExecutionUpdate", func(t *testing.T) {
		t.Parallel()

		t.Run("WritesAndBumpsVersion", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			got, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{
				Arn:             x.Arn,
				ExpectedVersion: 1,
				Status:          history.StatusRunning,
				LastEventID:     5,
			})
			require.NoError(t, err)
			want := *x
			want.Version = 2
			want.LastEventID = 5
			require.Equal(t, &want, got)

			stop := baseTime.Add(time.Hour)
			got, err = b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{
				Arn:             x.Arn,
				ExpectedVersion: 2,
				Status:          history.StatusSucceeded,
				Output:          ptr(`{"done":true}`),
				StopDate:        &stop,
				LastEventID:     9,
				RedriveCount:    1,
				RedriveDate:     ptr(baseTime.Add(time.Minute)),
			})
			require.NoError(t, err)
			want.Version = 3
			want.Status = history.StatusSucceeded
			want.Output = ptr(`{"done":true}`)
			want.StopDate = &stop
			want.LastEventID = 9
			want.RedriveCount = 1
			want.RedriveDate = ptr(baseTime.Add(time.Minute))
			require.Equal(t, &want, got)

			fetched, err := b.exec.ExecutionGet(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, &want, fetched)

			// Every field is written as given: nil clears.
			got, err = b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{
				Arn:             x.Arn,
				ExpectedVersion: 3,
				Status:          history.StatusFailed,
				Error:           ptr("E"),
				Cause:           ptr("C"),
				StopDate:        &stop,
				LastEventID:     10,
			})
			require.NoError(t, err)
			require.Nil(t, got.Output)
			require.Nil(t, got.RedriveDate)
			require.Equal(t, 0, got.RedriveCount)
			require.Equal(t, "E", *got.Error)
			require.Equal(t, "C", *got.Cause)
			require.Equal(t, int64(4), got.Version)
		})

		t.Run("StaleVersion", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			_, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: history.StatusRunning, LastEventID: 3})
			require.NoError(t, err)

			_, err = b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: history.StatusSucceeded, LastEventID: 4})
			require.ErrorIs(t, err, store.ErrConflict)
			if !b.afterError() {
				return
			}
			got, err := b.exec.ExecutionGet(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, int64(2), got.Version)
			require.Equal(t, history.StatusRunning, got.Status)
			require.Equal(t, int64(3), got.LastEventID)

			_, err = b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 3, Status: history.StatusSucceeded})
			require.ErrorIs(t, err, store.ErrConflict)
		})

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: executionArn(stateMachineArn("sm"), "nope"), ExpectedVersion: 1, Status: history.StatusSucceeded})
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})

	t.Run("ExecutionList", func(t *testing.T) {
		t.Parallel()

		// insertMany inserts executions x0…x5 of sm "a" (x2 and x3 share a
		// start date) and one of sm "b", and returns a's ARN.
		insertMany := func(t *testing.T, b *testBundle) string {
			t.Helper()
			a := b.insertStateMachine(ctx, t, "a")
			other := b.insertStateMachine(ctx, t, "b")
			starts := []time.Duration{0, 1, 2, 2, 3, 4}
			statuses := []history.ExecutionStatus{
				history.StatusSucceeded, history.StatusRunning, history.StatusFailed,
				history.StatusRunning, history.StatusSucceeded, history.StatusRunning,
			}
			for i, d := range starts {
				b.insertExecution(ctx, t, a.Arn, fmt.Sprintf("x%d", i), baseTime.Add(d*time.Second), statuses[i])
			}
			b.insertExecution(ctx, t, other.Arn, "y0", baseTime.Add(10*time.Second), history.StatusRunning)
			return a.Arn
		}

		t.Run("NewestFirst", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			smArn := insertMany(t, b)
			xs, err := b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: smArn})
			require.NoError(t, err)
			// x2 and x3 started together: the larger ARN first.
			require.Equal(t, []string{"x5", "x4", "x3", "x2", "x1", "x0"}, executionNames(xs))
			require.Equal(t, baseTime.Add(4*time.Second), xs[0].StartDate)
			require.Equal(t, `{"n":1}`, xs[0].Input)

			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: stateMachineArn("nope"), Limit: 10})
			require.NoError(t, err)
			require.Empty(t, xs)
		})

		t.Run("Pages", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			smArn := insertMany(t, b)
			var pages [][]string
			p := &store.ExecutionListParams{StateMachineArn: smArn, Limit: 2}
			for {
				xs, err := b.exec.ExecutionList(ctx, p)
				require.NoError(t, err)
				if len(xs) == 0 {
					break
				}
				pages = append(pages, executionNames(xs))
				last := xs[len(xs)-1]
				p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
			}
			require.Equal(t, [][]string{{"x5", "x4"}, {"x3", "x2"}, {"x1", "x0"}}, pages)

			// A cursor between the two rows that share a start date.
			xs, err := b.exec.ExecutionList(ctx, &store.ExecutionListParams{
				StateMachineArn: smArn, AfterStartDate: baseTime.Add(2 * time.Second), AfterArn: executionArn(smArn, "x3"), Limit: 1,
			})
			require.NoError(t, err)
			require.Equal(t, []string{"x2"}, executionNames(xs))
		})

		t.Run("StatusFilter", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			smArn := insertMany(t, b)
			xs, err := b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: smArn, Status: history.StatusRunning})
			require.NoError(t, err)
			require.Equal(t, []string{"x5", "x3", "x1"}, executionNames(xs))

			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: smArn, Status: history.StatusRunning, Limit: 1})
			require.NoError(t, err)
			require.Equal(t, []string{"x5"}, executionNames(xs))

			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{
				StateMachineArn: smArn, Status: history.StatusRunning, AfterStartDate: xs[0].StartDate, AfterArn: xs[0].Arn, Limit: 5,
			})
			require.NoError(t, err)
			require.Equal(t, []string{"x3", "x1"}, executionNames(xs))

			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: smArn, Status: history.StatusSucceeded})
			require.NoError(t, err)
			require.Equal(t, []string{"x4", "x0"}, executionNames(xs))

			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: smArn, Status: history.StatusAborted})
			require.NoError(t, err)
			require.Empty(t, xs)
		})
	})

	t.Run("ExecutionListRunning", func(t *testing.T) {
		t.Parallel()

		t.Run("ByArn", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			a := b.insertStateMachine(ctx, t, "a")
			c := b.insertStateMachine(ctx, t, "c")
			b.insertExecution(ctx, t, c.Arn, "r1", baseTime, history.StatusRunning)
			b.insertExecution(ctx, t, a.Arn, "r2", baseTime.Add(time.Second), history.StatusRunning)
			b.insertExecution(ctx, t, a.Arn, "done", baseTime, history.StatusSucceeded)
			r3 := b.insertExecution(ctx, t, a.Arn, "r3", baseTime, history.StatusRunning)

			xs, err := b.exec.ExecutionListRunning(ctx, "", 0)
			require.NoError(t, err)
			require.Equal(t, []string{"r2", "r3", "r1"}, executionNames(xs)) // a's ARNs sort before c's

			xs, err = b.exec.ExecutionListRunning(ctx, "", 2)
			require.NoError(t, err)
			require.Equal(t, []string{"r2", "r3"}, executionNames(xs))
			xs, err = b.exec.ExecutionListRunning(ctx, xs[1].Arn, 2)
			require.NoError(t, err)
			require.Equal(t, []string{"r1"}, executionNames(xs))
			require.Equal(t, history.StatusRunning, xs[0].Status)

			_, err = b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: r3.Arn, ExpectedVersion: 1, Status: history.StatusAborted, StopDate: &baseTime})
			require.NoError(t, err)
			xs, err = b.exec.ExecutionListRunning(ctx, "", 10)
			require.NoError(t, err)
			require.Equal(t, []string{"r2", "r1"}, executionNames(xs))
		})
	})
}
