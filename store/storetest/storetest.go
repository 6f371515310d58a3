// Package storetest is the conformance suite every store driver passes, as
// river's riverdrivertest is for river's drivers. A driver's tests call
// Exercise with a constructor of fresh drivers:
//
//	func TestDriver(t *testing.T) {
//		t.Parallel()
//		storetest.Exercise(ctx, t, func(t *testing.T) store.Driver {
//			d, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "db"), sqlitestore.Options{})
//			require.NoError(t, err)
//			return d
//		})
//	}
//
// Each aggregate's tests run twice: through Driver.Executor() and through
// a transaction from Driver.Begin (rolled back at the end), so every method
// is exercised both outside and inside a transaction. A few more tests
// check the transactions themselves.
//
// After a write fails inside a transaction the suite does not use that
// transaction again: a driver may abort it (PostgreSQL does). A read that
// finds nothing (store.ErrNotFound) is not such a failure.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/stepwisetype"
	"stepwise/store"
)

// Exercise runs the suite. newDriver returns a driver on a new, empty,
// migrated database that nothing else uses; Exercise closes it when the
// test that asked for it ends. Reads through Executor() must not wait for
// an open transaction, so an in-memory database on one connection cannot
// run the suite.
func Exercise(ctx context.Context, t *testing.T, newDriver func(t *testing.T) store.Driver) {
	t.Helper()

	for _, inTx := range []bool{false, true} {
		name := "Executor"
		if inTx {
			name = "Tx"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()

			setup := func(t *testing.T) *testBundle {
				t.Helper()
				driver := newDriver(t)
				t.Cleanup(func() { require.NoError(t, driver.Close()) })
				b := &testBundle{driver: driver, exec: driver.Executor(), inTx: inTx}
				if inTx {
					tx, err := driver.Begin(ctx)
					require.NoError(t, err)
					t.Cleanup(func() { _ = tx.Rollback(ctx) })
					b.exec = tx
				}
				return b
			}

			exerciseStateMachines(ctx, t, setup)
			exerciseExecutions(ctx, t, setup)
			exerciseHistory(ctx, t, setup)
			exerciseInputs(ctx, t, setup)
			exerciseTimers(ctx, t, setup)
			exerciseTasks(ctx, t, setup)
			exerciseTags(ctx, t, setup)
			exerciseMeta(ctx, t, setup)
			exerciseActivities(ctx, t, setup)
			exerciseSteps(ctx, t, setup)
		})
	}

	t.Run("Transaction", func(t *testing.T) {
		t.Parallel()

		setup := func(t *testing.T) *testBundle {
			t.Helper()
			driver := newDriver(t)
			t.Cleanup(func() { require.NoError(t, driver.Close()) })
			return &testBundle{driver: driver, exec: driver.Executor()}
		}

		exerciseTransactions(ctx, t, setup)
	})
}

// testBundle is what each test works with.
type testBundle struct {
	driver store.Driver
	exec   store.Executor // the driver's, or a transaction's
	inTx   bool
}

// afterError reports whether a test may go on using b.exec after a write
// failed: not inside a transaction, which the driver may have aborted.
func (b *testBundle) afterError() bool { return !b.inTx }

// baseTime is a whole millisecond, as the store keeps times.
var baseTime = time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)

const (
	arnPrefix = "arn:aws:states:us-east-1:123456789012:"
	roleArn   = "arn:aws:iam::123456789012:role/StepFunctions"
)

func stateMachineArn(name string) string { return arnPrefix + "stateMachine:" + name }

func executionArn(smArn, name string) string {
	return strings.Replace(smArn, ":stateMachine:", ":execution:", 1) + ":" + name
}

func definition(comment string) string {
	return fmt.Sprintf(`{"Comment":%q,"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`, comment)
}

func stateMachineFixture(name string) *store.StateMachine {
	return &store.StateMachine{
		Arn:        stateMachineArn(name),
		Name:       name,
		Type:       "STANDARD",
		Status:     "ACTIVE",
		RevisionID: "rev-1",
		Definition: definition(name),
		RoleArn:    roleArn,
		CreatedAt:  baseTime,
		UpdatedAt:  baseTime,
	}
}

func (b *testBundle) insertStateMachine(ctx context.Context, t *testing.T, name string) *store.StateMachine {
	t.Helper()
	sm, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: stateMachineFixture(name)})
	require.NoError(t, err)
	return sm
}

func executionFixture(smArn, name string, start time.Time, status stepwisetype.ExecutionStatus) *store.Execution {
	return &store.Execution{
		Arn:             executionArn(smArn, name),
		StateMachineArn: smArn,
		RevisionID:      "rev-1",
		Name:            name,
		Status:          status,
		Input:           `{"n":1}`,
		StartDate:       start,
		RoleArn:         roleArn,
		Version:         1,
		LastEventID:     2,
	}
}

func (b *testBundle) insertExecution(ctx context.Context, t *testing.T, smArn, name string, start time.Time, status stepwisetype.ExecutionStatus) *store.Execution {
	t.Helper()
	x, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: executionFixture(smArn, name, start, status)})
	require.NoError(t, err)
	return x
}

// newExecution inserts a state machine and one RUNNING execution of it.
func (b *testBundle) newExecution(ctx context.Context, t *testing.T, name string) *store.Execution {
	t.Helper()
	sm := b.insertStateMachine(ctx, t, "sm-"+name)
	return b.insertExecution(ctx, t, sm.Arn, name, baseTime, stepwisetype.StatusRunning)
}

func ptr[T any](v T) *T { return &v }

func stateMachineNames(sms []*store.StateMachine) []string {
	names := make([]string, len(sms))
	for i, sm := range sms {
		names[i] = sm.Name
	}
	return names
}

func executionNames(xs []*store.Execution) []string {
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = x.Name
	}
	return names
}

func eventIDs(evs []*store.Event) []int64 {
	ids := make([]int64, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	return ids
}

func timerKeys(ts []*store.Timer) []string {
	keys := make([]string, len(ts))
	for i, tm := range ts {
		keys[i] = tm.ExecutionArn[strings.LastIndexByte(tm.ExecutionArn, ':')+1:] + "/" + tm.ID
	}
	return keys
}

func exerciseStateMachines(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("StateMachineInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndGets", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			in := stateMachineFixture("orders")
			in.Description = "takes orders"
			in.LoggingConfiguration = `{"level":"ALL"}`
			in.TracingConfiguration = `{"enabled":true}`
			in.EncryptionConfiguration = `{"type":"AWS_OWNED_KEY"}`
			in.UpdatedAt = baseTime.Add(time.Second)
			sm, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.NoError(t, err)
			require.Equal(t, in, sm)

			got, err := b.exec.StateMachineGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, in, got)

			rev, err := b.exec.RevisionGet(ctx, in.Arn, "rev-1")
			require.NoError(t, err)
			require.Equal(t, &store.Revision{
				StateMachineArn: in.Arn,
				RevisionID:      "rev-1",
				Definition:      in.Definition,
				RoleArn:         roleArn,
				CreatedAt:       baseTime,
			}, rev)
		})

		t.Run("TruncatesTimesToMillisecondsUTC", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			in := stateMachineFixture("orders")
			in.CreatedAt = time.Date(2026, 3, 4, 7, 6, 7, 8_765_432, time.FixedZone("X", 2*3600))
			in.UpdatedAt = in.CreatedAt
			want := time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)

			sm, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.NoError(t, err)
			require.Equal(t, want, sm.CreatedAt)

			got, err := b.exec.StateMachineGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, want, got.CreatedAt)
			require.Equal(t, want, got.UpdatedAt)
		})

		t.Run("NameTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			b.insertStateMachine(ctx, t, "orders")
			in := stateMachineFixture("orders")
			in.Arn = stateMachineArn("other")
			_, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			_, err = b.exec.StateMachineGet(ctx, in.Arn)
			require.ErrorIs(t, err, store.ErrNotFound)
		})

		t.Run("ArnTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			b.insertStateMachine(ctx, t, "orders")
			in := stateMachineFixture("orders")
			in.Name = "other"
			_, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
		})
	})

	t.Run("StateMachineGet", func(t *testing.T) {
		t.Parallel()

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, err := b.exec.StateMachineGet(ctx, stateMachineArn("nope"))
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})

	t.Run("StateMachineUpdate", func(t *testing.T) {
		t.Parallel()

		t.Run("WithoutRevision", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			upd := *sm
			upd.Description = "now described"
			upd.RoleArn = roleArn + "2"
			upd.LoggingConfiguration = `{"level":"ERROR"}`
			upd.TracingConfiguration = `{"enabled":false}`
			upd.EncryptionConfiguration = `{"type":"CUSTOMER_MANAGED_KMS_KEY"}`
			upd.Status = "DELETING"
			upd.UpdatedAt = baseTime.Add(time.Minute)
			got, err := b.exec.StateMachineUpdate(ctx, &store.StateMachineUpdateParams{StateMachine: &upd})
			require.NoError(t, err)
			require.Equal(t, &upd, got)

			got, err = b.exec.StateMachineGet(ctx, sm.Arn)
			require.NoError(t, err)
			require.Equal(t, &upd, got)

			_, err = b.exec.RevisionGet(ctx, sm.Arn, "rev-2")
			require.ErrorIs(t, err, store.ErrNotFound)
		})

		t.Run("NewRevision", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			upd := *sm
			upd.RevisionID = "rev-2"
			upd.Definition = definition("second")
			upd.RoleArn = roleArn + "2"
			upd.UpdatedAt = baseTime.Add(time.Minute)
			got, err := b.exec.StateMachineUpdate(ctx, &store.StateMachineUpdateParams{StateMachine: &upd, NewRevision: true})
			require.NoError(t, err)
			require.Equal(t, &upd, got)

			got, err = b.exec.StateMachineGet(ctx, sm.Arn)
			require.NoError(t, err)
			require.Equal(t, &upd, got)

			rev1, err := b.exec.RevisionGet(ctx, sm.Arn, "rev-1")
			require.NoError(t, err)
			require.Equal(t, sm.Definition, rev1.Definition)
			require.Equal(t, roleArn, rev1.RoleArn)

			rev2, err := b.exec.RevisionGet(ctx, sm.Arn, "rev-2")
			require.NoError(t, err)
			require.Equal(t, &store.Revision{
				StateMachineArn: sm.Arn,
				RevisionID:      "rev-2",
				Definition:      definition("second"),
				RoleArn:         roleArn + "2",
				CreatedAt:       baseTime.Add(time.Minute),
			}, rev2)
		})

		t.Run("RevisionTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			upd := *sm
			upd.Definition = definition("second")
			upd.Description = "changed"
			_, err := b.exec.StateMachineUpdate(ctx, &store.StateMachineUpdateParams{StateMachine: &upd, NewRevision: true})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			// Nothing of the update stuck.
			got, err := b.exec.StateMachineGet(ctx, sm.Arn)
			require.NoError(t, err)
			require.Equal(t, sm, got)
		})

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, err := b.exec.StateMachineUpdate(ctx, &store.StateMachineUpdateParams{StateMachine: stateMachineFixture("nope")})
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})

	t.Run("StateMachineDelete", func(t *testing.T) {
		t.Parallel()

		t.Run("KeepsRevisionsDropsTags", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			other := b.insertStateMachine(ctx, t, "other")
			require.NoError(t, b.exec.TagPut(ctx, sm.Arn, []store.Tag{{Key: "team", Value: "a"}}))
			require.NoError(t, b.exec.TagPut(ctx, other.Arn, []store.Tag{{Key: "team", Value: "b"}}))

			require.NoError(t, b.exec.StateMachineDelete(ctx, sm.Arn))

			_, err := b.exec.StateMachineGet(ctx, sm.Arn)
			require.ErrorIs(t, err, store.ErrNotFound)
			rev, err := b.exec.RevisionGet(ctx, sm.Arn, "rev-1")
			require.NoError(t, err)
			require.Equal(t, sm.Definition, rev.Definition)
			tags, err := b.exec.TagList(ctx, sm.Arn)
			require.NoError(t, err)
			require.Empty(t, tags)

			sms, err := b.exec.StateMachineList(ctx, &store.StateMachineListParams{})
			require.NoError(t, err)
			require.Equal(t, []string{"other"}, stateMachineNames(sms))
			tags, err = b.exec.TagList(ctx, other.Arn)
			require.NoError(t, err)
			require.Equal(t, []store.Tag{{Key: "team", Value: "b"}}, tags)
		})

		t.Run("NameReusable", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			require.NoError(t, b.exec.StateMachineDelete(ctx, sm.Arn))

			in := stateMachineFixture("orders")
			in.RevisionID = "rev-new"
			in.Definition = definition("again")
			_, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.NoError(t, err)
			got, err := b.exec.StateMachineGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, definition("again"), got.Definition)
			rev, err := b.exec.RevisionGet(ctx, in.Arn, "rev-1")
			require.NoError(t, err)
			require.Equal(t, definition("orders"), rev.Definition)
		})

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			require.ErrorIs(t, b.exec.StateMachineDelete(ctx, stateMachineArn("nope")), store.ErrNotFound)
		})
	})

	t.Run("StateMachineList", func(t *testing.T) {
		t.Parallel()

		t.Run("ByName", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sms, err := b.exec.StateMachineList(ctx, &store.StateMachineListParams{Limit: 10})
			require.NoError(t, err)
			require.Empty(t, sms)

			for _, name := range []string{"c", "a", "d", "b", "e"} {
				b.insertStateMachine(ctx, t, name)
			}

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{})
			require.NoError(t, err)
			require.Equal(t, []string{"a", "b", "c", "d", "e"}, stateMachineNames(sms))
			require.Equal(t, definition("a"), sms[0].Definition)

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{Limit: 2})
			require.NoError(t, err)
			require.Equal(t, []string{"a", "b"}, stateMachineNames(sms))

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{AfterName: "b", Limit: 2})
			require.NoError(t, err)
			require.Equal(t, []string{"c", "d"}, stateMachineNames(sms))

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{AfterName: "d", Limit: 2})
			require.NoError(t, err)
			require.Equal(t, []string{"e"}, stateMachineNames(sms))

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{AfterName: "e"})
			require.NoError(t, err)
			require.Empty(t, sms)
		})
	})

	t.Run("RevisionGet", func(t *testing.T) {
		t.Parallel()

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			_, err := b.exec.RevisionGet(ctx, sm.Arn, "rev-9")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = b.exec.RevisionGet(ctx, stateMachineArn("nope"), "rev-1")
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})
}

func exerciseExecutions(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("ExecutionInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndGets", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			in := executionFixture(sm.Arn, "x1", baseTime, stepwisetype.StatusRunning)
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
			in := executionFixture(sm.Arn, "x1", baseTime, stepwisetype.StatusFailed)
			in.Output = ptr("")
			in.Error = ptr("States.TaskFailed")
			in.Cause = ptr(`{"why":"because"}`)
			in.StopDate = ptr(baseTime.Add(time.Hour))
			in.TraceHeader = "Root=1-abc"
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
			in := executionFixture(sm.Arn, "x1", time.Date(2026, 3, 4, 5, 6, 7, 8_999_999, time.FixedZone("Y", -5*3600)), stepwisetype.StatusSucceeded)
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
			_, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: executionFixture(x.StateMachineArn, "x1", baseTime.Add(time.Hour), stepwisetype.StatusRunning)})
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
				Status:          stepwisetype.StatusRunning,
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
				Status:          stepwisetype.StatusSucceeded,
				Output:          ptr(`{"done":true}`),
				StopDate:        &stop,
				LastEventID:     9,
				RedriveCount:    1,
				RedriveDate:     ptr(baseTime.Add(time.Minute)),
			})
			require.NoError(t, err)
			want.Version = 3
			want.Status = stepwisetype.StatusSucceeded
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
				Status:          stepwisetype.StatusFailed,
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
			_, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: stepwisetype.StatusRunning, LastEventID: 3})
			require.NoError(t, err)

			_, err = b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: stepwisetype.StatusSucceeded, LastEventID: 4})
			require.ErrorIs(t, err, store.ErrConflict)
			if !b.afterError() {
				return
			}
			got, err := b.exec.ExecutionGet(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, int64(2), got.Version)
			require.Equal(t, stepwisetype.StatusRunning, got.Status)
			require.Equal(t, int64(3), got.LastEventID)

			_, err = b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 3, Status: stepwisetype.StatusSucceeded})
			require.ErrorIs(t, err, store.ErrConflict)
		})

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: executionArn(stateMachineArn("sm"), "nope"), ExpectedVersion: 1, Status: stepwisetype.StatusSucceeded})
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
			statuses := []stepwisetype.ExecutionStatus{
				stepwisetype.StatusSucceeded, stepwisetype.StatusRunning, stepwisetype.StatusFailed,
				stepwisetype.StatusRunning, stepwisetype.StatusSucceeded, stepwisetype.StatusRunning,
			}
			for i, d := range starts {
				b.insertExecution(ctx, t, a.Arn, fmt.Sprintf("x%d", i), baseTime.Add(d*time.Second), statuses[i])
			}
			b.insertExecution(ctx, t, other.Arn, "y0", baseTime.Add(10*time.Second), stepwisetype.StatusRunning)
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
			xs, err := b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: smArn, Status: stepwisetype.StatusRunning})
			require.NoError(t, err)
			require.Equal(t, []string{"x5", "x3", "x1"}, executionNames(xs))

			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: smArn, Status: stepwisetype.StatusRunning, Limit: 1})
			require.NoError(t, err)
			require.Equal(t, []string{"x5"}, executionNames(xs))

			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{
				StateMachineArn: smArn, Status: stepwisetype.StatusRunning, AfterStartDate: xs[0].StartDate, AfterArn: xs[0].Arn, Limit: 5,
			})
			require.NoError(t, err)
			require.Equal(t, []string{"x3", "x1"}, executionNames(xs))

			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: smArn, Status: stepwisetype.StatusSucceeded})
			require.NoError(t, err)
			require.Equal(t, []string{"x4", "x0"}, executionNames(xs))

			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: smArn, Status: stepwisetype.StatusAborted})
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
			b.insertExecution(ctx, t, c.Arn, "r1", baseTime, stepwisetype.StatusRunning)
			b.insertExecution(ctx, t, a.Arn, "r2", baseTime.Add(time.Second), stepwisetype.StatusRunning)
			b.insertExecution(ctx, t, a.Arn, "done", baseTime, stepwisetype.StatusSucceeded)
			r3 := b.insertExecution(ctx, t, a.Arn, "r3", baseTime, stepwisetype.StatusRunning)

			xs, err := b.exec.ExecutionListRunning(ctx, "", 0)
			require.NoError(t, err)
			require.Equal(t, []string{"r2", "r3", "r1"}, executionNames(xs)) // a's ARNs sort before c's

			xs, err = b.exec.ExecutionListRunning(ctx, "", 2)
			require.NoError(t, err)
			require.Equal(t, []string{"r2", "r3"}, executionNames(xs))
			xs, err = b.exec.ExecutionListRunning(ctx, xs[1].Arn, 2)
			require.NoError(t, err)
			require.Equal(t, []string{"r1"}, executionNames(xs))
			require.Equal(t, stepwisetype.StatusRunning, xs[0].Status)

			_, err = b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: r3.Arn, ExpectedVersion: 1, Status: stepwisetype.StatusAborted, StopDate: &baseTime})
			require.NoError(t, err)
			xs, err = b.exec.ExecutionListRunning(ctx, "", 10)
			require.NoError(t, err)
			require.Equal(t, []string{"r2", "r1"}, executionNames(xs))
		})
	})
}

func eventFixture(arn string, id int64) *store.Event {
	return &store.Event{
		ExecutionArn: arn,
		ID:           id,
		Type:         stepwisetype.EventType(fmt.Sprintf("Type%d", id)),
		Timestamp:    baseTime.Add(time.Duration(id) * time.Millisecond),
		Body:         []byte(fmt.Sprintf(`{"id":%d,"type":"Type%d"}`, id, id)),
	}
}

func eventFixtures(arn string, from, to int64) []*store.Event {
	var evs []*store.Event
	for id := from; id <= to; id++ {
		evs = append(evs, eventFixture(arn, id))
	}
	return evs
}

func exerciseHistory(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("EventInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndLists", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			evs := eventFixtures(x.Arn, 1, 3)
			require.NoError(t, b.exec.EventInsert(ctx, evs))
			require.NoError(t, b.exec.EventInsert(ctx, nil))

			got, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
			require.NoError(t, err)
			require.Equal(t, evs, got)
		})

		t.Run("IDTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 1, 3)))
			err := b.exec.EventInsert(ctx, eventFixtures(x.Arn, 3, 5))
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			// All or none.
			got, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
			require.NoError(t, err)
			require.Equal(t, []int64{1, 2, 3}, eventIDs(got))
		})

		t.Run("LargeBatch", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			evs := eventFixtures(x.Arn, 1, 1500)
			require.NoError(t, b.exec.EventInsert(ctx, evs))
			got, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
			require.NoError(t, err)
			require.Equal(t, evs, got)

			// A clash at the very end of a large batch stores none of it.
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 1501, 2999)))
			err = b.exec.EventInsert(ctx, append(eventFixtures(x.Arn, 3001, 4000), eventFixture(x.Arn, 1)))
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err = b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn, Reverse: true, Limit: 1})
			require.NoError(t, err)
			require.Equal(t, []int64{2999}, eventIDs(got))
		})
	})

	t.Run("EventList", func(t *testing.T) {
		t.Parallel()

		t.Run("ForwardAndReverse", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, stepwisetype.StatusRunning)
			// Out of order, and interleaved with another execution's.
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 4, 5)))
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(y.Arn, 1, 9)))
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 1, 3)))

			list := func(p store.EventListParams) []int64 {
				t.Helper()
				p.ExecutionArn = x.Arn
				evs, err := b.exec.EventList(ctx, &p)
				require.NoError(t, err)
				for _, ev := range evs {
					require.Equal(t, x.Arn, ev.ExecutionArn)
				}
				return eventIDs(evs)
			}
			require.Equal(t, []int64{1, 2, 3, 4, 5}, list(store.EventListParams{}))
			require.Equal(t, []int64{1, 2}, list(store.EventListParams{Limit: 2}))
			require.Equal(t, []int64{3, 4}, list(store.EventListParams{AfterID: 2, Limit: 2}))
			require.Equal(t, []int64{5}, list(store.EventListParams{AfterID: 4, Limit: 2}))
			require.Empty(t, list(store.EventListParams{AfterID: 5}))
			require.Equal(t, []int64{5, 4, 3, 2, 1}, list(store.EventListParams{Reverse: true}))
			require.Equal(t, []int64{5, 4}, list(store.EventListParams{Reverse: true, Limit: 2}))
			require.Equal(t, []int64{3, 2}, list(store.EventListParams{Reverse: true, AfterID: 4, Limit: 2}))
			require.Equal(t, []int64{1}, list(store.EventListParams{Reverse: true, AfterID: 2, Limit: 2}))
			require.Empty(t, list(store.EventListParams{Reverse: true, AfterID: 1}))

			evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: executionArn(x.StateMachineArn, "nope")})
			require.NoError(t, err)
			require.Empty(t, evs)
		})
	})
}

func exerciseInputs(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	input := func(arn string, seq int64) *store.Input {
		return &store.Input{ExecutionArn: arn, Seq: seq, At: baseTime.Add(time.Duration(seq) * time.Second), Body: []byte(fmt.Sprintf(`{"seq":%d}`, seq))}
	}

	t.Run("InputInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndListsBySeq", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, stepwisetype.StatusRunning)
			require.NoError(t, b.exec.InputInsert(ctx, []*store.Input{input(x.Arn, 3), input(y.Arn, 1)}))
			require.NoError(t, b.exec.InputInsert(ctx, []*store.Input{input(x.Arn, 1), input(x.Arn, 2)}))
			require.NoError(t, b.exec.InputInsert(ctx, nil))

			got, err := b.exec.InputList(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Input{input(x.Arn, 1), input(x.Arn, 2), input(x.Arn, 3)}, got)

			got, err = b.exec.InputList(ctx, executionArn(x.StateMachineArn, "nope"))
			require.NoError(t, err)
			require.Empty(t, got)
		})

		t.Run("SeqTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.InputInsert(ctx, []*store.Input{input(x.Arn, 1)}))
			err := b.exec.InputInsert(ctx, []*store.Input{input(x.Arn, 2), input(x.Arn, 1)})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err := b.exec.InputList(ctx, x.Arn)
			require.NoError(t, err)
			require.Len(t, got, 1)
		})
	})
}

func exerciseTimers(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	timer := func(arn, id string, after time.Duration) *store.Timer {
		return &store.Timer{ExecutionArn: arn, ID: id, FireAt: baseTime.Add(after)}
	}

	t.Run("TimerInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndLists", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "t2", time.Minute), timer(x.Arn, "t1", time.Second)}))
			require.NoError(t, b.exec.TimerInsert(ctx, nil))
			got, err := b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(x.Arn, "t1", time.Second), timer(x.Arn, "t2", time.Minute)}, got)
		})

		t.Run("IDTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "t1", time.Second)}))
			err := b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "t2", time.Second), timer(x.Arn, "t1", time.Hour)})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err := b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(x.Arn, "t1", time.Second)}, got)
		})
	})

	t.Run("TimerDelete", func(t *testing.T) {
		t.Parallel()

		t.Run("DeletesOnlyTheExecutions", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, stepwisetype.StatusRunning)
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{
				timer(x.Arn, "t1", time.Second), timer(x.Arn, "t2", 2*time.Second), timer(x.Arn, "t3", 3*time.Second),
				timer(y.Arn, "t1", time.Second),
			}))
			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, []string{"t1", "t3", "never"}))
			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, nil))

			got, err := b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(x.Arn, "t2", 2*time.Second)}, got)
			got, err = b.exec.TimerListForExecution(ctx, y.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(y.Arn, "t1", time.Second)}, got)

			// Many ids at once, and re-arming a deleted id.
			ids := make([]string, 500)
			for i := range ids {
				ids[i] = fmt.Sprintf("many-%d", i)
				require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, ids[i], time.Hour)}))
			}
			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, append(ids, "t2")))
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "t2", 5*time.Second)}))
			got, err = b.exec.TimerListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Timer{timer(x.Arn, "t2", 5*time.Second)}, got)
		})
	})

	t.Run("TimerListDue", func(t *testing.T) {
		t.Parallel()

		t.Run("EarliestFirst", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, stepwisetype.StatusRunning)
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{
				timer(x.Arn, "late", time.Hour), timer(y.Arn, "b", 2*time.Second), timer(x.Arn, "a", time.Second),
				timer(y.Arn, "a", 2*time.Second), timer(x.Arn, "c", 3*time.Second),
			}))

			due, err := b.exec.TimerListDue(ctx, baseTime.Add(3*time.Second), 0)
			require.NoError(t, err)
			// Ties on FireAt come by execution, then id; FireAt == before is due.
			require.Equal(t, []string{"x1/a", "x2/a", "x2/b", "x1/c"}, timerKeys(due))
			require.Equal(t, baseTime.Add(time.Second), due[0].FireAt)

			due, err = b.exec.TimerListDue(ctx, baseTime.Add(3*time.Second), 2)
			require.NoError(t, err)
			require.Equal(t, []string{"x1/a", "x2/a"}, timerKeys(due))

			due, err = b.exec.TimerListDue(ctx, baseTime.Add(999*time.Millisecond), 10)
			require.NoError(t, err)
			require.Empty(t, due)
		})
	})

	t.Run("TimerNext", func(t *testing.T) {
		t.Parallel()

		t.Run("Earliest", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, err := b.exec.TimerNext(ctx)
			require.ErrorIs(t, err, store.ErrNotFound)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.TimerInsert(ctx, []*store.Timer{timer(x.Arn, "b", time.Minute), timer(x.Arn, "a", time.Hour)}))
			next, err := b.exec.TimerNext(ctx)
			require.NoError(t, err)
			require.Equal(t, timer(x.Arn, "b", time.Minute), next)

			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, []string{"b"}))
			next, err = b.exec.TimerNext(ctx)
			require.NoError(t, err)
			require.Equal(t, timer(x.Arn, "a", time.Hour), next)

			require.NoError(t, b.exec.TimerDelete(ctx, x.Arn, []string{"a"}))
			_, err = b.exec.TimerNext(ctx)
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})
}

func exerciseTasks(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	task := func(arn, id string, after time.Duration) *store.Task {
		return &store.Task{
			ExecutionArn: arn,
			ID:           id,
			Resource:     "arn:aws:states:::lambda:invoke",
			Body:         []byte(`{"FunctionName":"` + id + `"}`),
			CreatedAt:    baseTime.Add(after),
		}
	}

	t.Run("TaskInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsListsDeletes", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, stepwisetype.StatusRunning)
			require.NoError(t, b.exec.TaskInsert(ctx, []*store.Task{task(x.Arn, "b", time.Second), task(x.Arn, "a", 2*time.Second), task(y.Arn, "a", 0)}))
			require.NoError(t, b.exec.TaskInsert(ctx, []*store.Task{task(x.Arn, "c", 0)}))
			require.NoError(t, b.exec.TaskInsert(ctx, nil))

			got, err := b.exec.TaskListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(x.Arn, "c", 0), task(x.Arn, "b", time.Second), task(x.Arn, "a", 2*time.Second)}, got)

			require.NoError(t, b.exec.TaskDelete(ctx, x.Arn, []string{"a", "c", "never"}))
			require.NoError(t, b.exec.TaskDelete(ctx, x.Arn, nil))
			got, err = b.exec.TaskListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(x.Arn, "b", time.Second)}, got)
			got, err = b.exec.TaskListForExecution(ctx, y.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(y.Arn, "a", 0)}, got)

			got, err = b.exec.TaskListForExecution(ctx, executionArn(x.StateMachineArn, "nope"))
			require.NoError(t, err)
			require.Empty(t, got)
		})

		t.Run("IDTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.TaskInsert(ctx, []*store.Task{task(x.Arn, "a", 0)}))
			err := b.exec.TaskInsert(ctx, []*store.Task{task(x.Arn, "b", 0), task(x.Arn, "a", time.Second)})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err := b.exec.TaskListForExecution(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Task{task(x.Arn, "a", 0)}, got)
		})
	})
}

func exerciseTags(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("TagPut", func(t *testing.T) {
		t.Parallel()

		t.Run("AddsReplacesDeletesSorted", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			arn, other := stateMachineArn("a"), stateMachineArn("b")
			tags, err := b.exec.TagList(ctx, arn)
			require.NoError(t, err)
			require.Empty(t, tags)

			require.NoError(t, b.exec.TagPut(ctx, arn, []store.Tag{{Key: "team", Value: "x"}, {Key: "env", Value: "dev"}}))
			require.NoError(t, b.exec.TagPut(ctx, other, []store.Tag{{Key: "env", Value: "prod"}}))
			require.NoError(t, b.exec.TagPut(ctx, arn, []store.Tag{{Key: "team", Value: "y"}, {Key: "cost", Value: ""}}))
			require.NoError(t, b.exec.TagPut(ctx, arn, nil))

			tags, err = b.exec.TagList(ctx, arn)
			require.NoError(t, err)
			require.Equal(t, []store.Tag{{Key: "cost", Value: ""}, {Key: "env", Value: "dev"}, {Key: "team", Value: "y"}}, tags)

			require.NoError(t, b.exec.TagDelete(ctx, arn, []string{"env", "never"}))
			require.NoError(t, b.exec.TagDelete(ctx, arn, nil))
			tags, err = b.exec.TagList(ctx, arn)
			require.NoError(t, err)
			require.Equal(t, []store.Tag{{Key: "cost", Value: ""}, {Key: "team", Value: "y"}}, tags)

			tags, err = b.exec.TagList(ctx, other)
			require.NoError(t, err)
			require.Equal(t, []store.Tag{{Key: "env", Value: "prod"}}, tags)
		})
	})
}

func exerciseTransactions(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	// writeAll writes one of everything through ex.
	writeAll := func(t *testing.T, ex store.Executor) *store.Execution {
		t.Helper()
		b := &testBundle{exec: ex}
		x := b.newExecution(ctx, t, "x1")
		_, err := ex.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: stepwisetype.StatusRunning, LastEventID: 3})
		require.NoError(t, err)
		require.NoError(t, ex.EventInsert(ctx, eventFixtures(x.Arn, 1, 3)))
		require.NoError(t, ex.InputInsert(ctx, []*store.Input{{ExecutionArn: x.Arn, Seq: 1, At: baseTime, Body: []byte(`{}`)}}))
		require.NoError(t, ex.TimerInsert(ctx, []*store.Timer{{ExecutionArn: x.Arn, ID: "t", FireAt: baseTime}}))
		require.NoError(t, ex.TaskInsert(ctx, []*store.Task{{ExecutionArn: x.Arn, ID: "k", Resource: "r", Body: []byte(`{}`), CreatedAt: baseTime}}))
		require.NoError(t, ex.TagPut(ctx, x.StateMachineArn, []store.Tag{{Key: "k", Value: "v"}}))
		return x
	}

	// requireAll checks that everything writeAll wrote is there (or not).
	requireAll := func(t *testing.T, ex store.Executor, x *store.Execution, there bool) {
		t.Helper()
		_, err := ex.StateMachineGet(ctx, x.StateMachineArn)
		_, revErr := ex.RevisionGet(ctx, x.StateMachineArn, "rev-1")
		got, xErr := ex.ExecutionGet(ctx, x.Arn)
		evs, evErr := ex.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
		require.NoError(t, evErr)
		ins, inErr := ex.InputList(ctx, x.Arn)
		require.NoError(t, inErr)
		timers, tErr := ex.TimerListForExecution(ctx, x.Arn)
		require.NoError(t, tErr)
		due, dueErr := ex.TimerListDue(ctx, baseTime, 10)
		require.NoError(t, dueErr)
		tasks, kErr := ex.TaskListForExecution(ctx, x.Arn)
		require.NoError(t, kErr)
		tags, tagErr := ex.TagList(ctx, x.StateMachineArn)
		require.NoError(t, tagErr)
		running, rErr := ex.ExecutionListRunning(ctx, "", 10)
		require.NoError(t, rErr)
		if there {
			require.NoError(t, err)
			require.NoError(t, revErr)
			require.NoError(t, xErr)
			require.Equal(t, int64(2), got.Version)
			require.Len(t, evs, 3)
			require.Len(t, ins, 1)
			require.Len(t, timers, 1)
			require.Len(t, due, 1)
			require.Len(t, tasks, 1)
			require.Len(t, tags, 1)
			require.Len(t, running, 1)
			return
		}
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, revErr, store.ErrNotFound)
		require.ErrorIs(t, xErr, store.ErrNotFound)
		require.Empty(t, evs)
		require.Empty(t, ins)
		require.Empty(t, timers)
		require.Empty(t, due)
		require.Empty(t, tasks)
		require.Empty(t, tags)
		require.Empty(t, running)
	}

	t.Run("CommitKeepsWrites", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		tx, err := b.driver.Begin(ctx)
		require.NoError(t, err)
		x := writeAll(t, tx)
		requireAll(t, tx, x, true)
		require.NoError(t, tx.Commit(ctx))
		requireAll(t, b.driver.Executor(), x, true)
	})

	t.Run("RollbackDiscardsWrites", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		tx, err := b.driver.Begin(ctx)
		require.NoError(t, err)
		x := writeAll(t, tx)
		requireAll(t, tx, x, true)
		require.NoError(t, tx.Rollback(ctx))
		requireAll(t, b.driver.Executor(), x, false)

		// The driver is still usable, and the same rows can be written again.
		tx, err = b.driver.Begin(ctx)
		require.NoError(t, err)
		writeAll(t, tx)
		require.NoError(t, tx.Commit(ctx))
		requireAll(t, b.driver.Executor(), x, true)
	})

	t.Run("UncommittedInvisibleOutside", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		tx, err := b.driver.Begin(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { _ = tx.Rollback(ctx) })
		x := writeAll(t, tx)
		requireAll(t, b.driver.Executor(), x, false)
		require.NoError(t, tx.Commit(ctx))
		requireAll(t, b.driver.Executor(), x, true)
	})

	t.Run("ConflictAcrossTransactions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		x := b.newExecution(ctx, t, "x1")
		update := func(expected int64) error {
			tx, err := b.driver.Begin(ctx)
			require.NoError(t, err)
			if _, err := tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: expected, Status: stepwisetype.StatusRunning}); err != nil {
				require.NoError(t, tx.Rollback(ctx))
				return err
			}
			return tx.Commit(ctx)
		}
		require.NoError(t, update(1))
		require.ErrorIs(t, update(1), store.ErrConflict)
		require.NoError(t, update(2))

		got, err := b.exec.ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, int64(3), got.Version)
	})

	t.Run("ConcurrentSteps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		// Workers race to step one execution, each reading the version in
		// its transaction and retrying on conflict: no step is lost.
		x := b.newExecution(ctx, t, "x1")
		const workers, steps = 4, 10
		errs := make(chan error, workers)
		for range workers {
			go func() {
				errs <- func() error {
					for done := 0; done < steps; {
						tx, err := b.driver.Begin(ctx)
						if err != nil {
							return err
						}
						cur, err := tx.ExecutionGet(ctx, x.Arn)
						if err == nil {
							_, err = tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: cur.Version, Status: stepwisetype.StatusRunning, LastEventID: cur.LastEventID + 1})
						}
						if err == nil {
							err = tx.EventInsert(ctx, []*store.Event{eventFixture(x.Arn, cur.LastEventID+1)})
						}
						if err == nil {
							err = tx.Commit(ctx)
						} else {
							_ = tx.Rollback(ctx)
						}
						switch {
						case err == nil:
							done++
						case errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrAlreadyExists):
						default:
							return err
						}
					}
					return nil
				}()
			}()
		}
		for range workers {
			require.NoError(t, <-errs)
		}
		got, err := b.exec.ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, int64(1+workers*steps), got.Version)
		evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
		require.NoError(t, err)
		require.Len(t, evs, workers*steps)
	})

	t.Run("ErrorsInsideTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		x := b.newExecution(ctx, t, "x1")
		for _, tc := range []struct {
			name string
			call func(tx store.ExecutorTx) error
			want error
		}{
			{"NotFound", func(tx store.ExecutorTx) error {
				_, err := tx.ExecutionGet(ctx, x.Arn+"-nope")
				return err
			}, store.ErrNotFound},
			{"AlreadyExists", func(tx store.ExecutorTx) error {
				_, err := tx.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: x})
				return err
			}, store.ErrAlreadyExists},
			{"Conflict", func(tx store.ExecutorTx) error {
				_, err := tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 5, Status: stepwisetype.StatusRunning})
				return err
			}, store.ErrConflict},
		} {
			tx, err := b.driver.Begin(ctx)
			require.NoError(t, err)
			require.ErrorIs(t, tc.call(tx), tc.want, tc.name)
			require.NoError(t, tx.Rollback(ctx))
		}
	})
}

func exerciseMeta(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("MetaGetOrPut", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		v, err := b.exec.MetaGetOrPut(ctx, "k", []byte("first"))
		require.NoError(t, err)
		require.Equal(t, []byte("first"), v)
		v, err = b.exec.MetaGetOrPut(ctx, "k", []byte("second"))
		require.NoError(t, err)
		require.Equal(t, []byte("first"), v, "the first value stays")
		v, err = b.exec.MetaGetOrPut(ctx, "other", []byte("x"))
		require.NoError(t, err)
		require.Equal(t, []byte("x"), v)
	})
}

func exerciseActivities(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("Activities", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		arn := func(name string) string { return "arn:aws:states:us-east-1:123456789012:activity:" + name }
		created := time.UnixMilli(1700000000123).UTC()
		for _, name := range []string{"b", "a", "c"} {
			a, err := b.exec.ActivityInsert(ctx, &store.Activity{Arn: arn(name), Name: name, CreatedAt: created})
			require.NoError(t, err)
			require.Equal(t, name, a.Name)
		}
		_, err := b.exec.ActivityInsert(ctx, &store.Activity{Arn: arn("a2"), Name: "a", CreatedAt: created})
		require.ErrorIs(t, err, store.ErrAlreadyExists)
		if b.inTx {
			return // a failed write ends a PostgreSQL transaction
		}
		got, err := b.exec.ActivityGet(ctx, arn("b"))
		require.NoError(t, err)
		require.Equal(t, &store.Activity{Arn: arn("b"), Name: "b", CreatedAt: created}, got)
		page, err := b.exec.ActivityList(ctx, &store.ActivityListParams{AfterName: "a", Limit: 1})
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.Equal(t, "b", page[0].Name)

		require.NoError(t, b.exec.TagPut(ctx, arn("b"), []store.Tag{{Key: "k", Value: "v"}}))
		require.NoError(t, b.exec.ActivityDelete(ctx, arn("b")))
		_, err = b.exec.ActivityGet(ctx, arn("b"))
		require.ErrorIs(t, err, store.ErrNotFound)
		tags, err := b.exec.TagList(ctx, arn("b"))
		require.NoError(t, err)
		require.Empty(t, tags, "the activity's tags went with it")
		require.ErrorIs(t, b.exec.ActivityDelete(ctx, arn("b")), store.ErrNotFound)
	})
}
