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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
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
			exerciseOutbox(ctx, t, setup)
			exerciseRetention(ctx, t, setup)
			exerciseNodes(ctx, t, setup)
			exerciseVersions(ctx, t, setup)
			exerciseMapRuns(ctx, t, setup)
			exerciseMapItems(ctx, t, setup)
			exercisePolicies(ctx, t, setup)
			exerciseSchedules(ctx, t, setup)
			exerciseClock(ctx, t, setup)
			exerciseStacks(ctx, t, setup)
			exerciseFileTriggers(ctx, t, setup)
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

func executionFixture(smArn, name string, start time.Time, status history.ExecutionStatus) *store.Execution {
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

func (b *testBundle) insertExecution(ctx context.Context, t *testing.T, smArn, name string, start time.Time, status history.ExecutionStatus) *store.Execution {
	t.Helper()
	x, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: executionFixture(smArn, name, start, status)})
	require.NoError(t, err)
	return x
}

// newExecution inserts a state machine and one RUNNING execution of it.
func (b *testBundle) newExecution(ctx context.Context, t *testing.T, name string) *store.Execution {
	t.Helper()
	sm := b.insertStateMachine(ctx, t, "sm-"+name)
	return b.insertExecution(ctx, t, sm.Arn, name, baseTime, history.StatusRunning)
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
