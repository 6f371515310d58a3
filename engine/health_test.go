package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

// failingDriver is a store whose step writes fail with ErrUnavailable
// while full is set, as on a full disk.
type failingDriver struct {
	store.Driver
	full   atomic.Bool
	failed atomic.Int64
}

func (d *failingDriver) Begin(ctx context.Context) (store.ExecutorTx, error) {
	tx, err := d.Driver.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &failingTx{ExecutorTx: tx, d: d}, nil
}

type failingTx struct {
	store.ExecutorTx
	d *failingDriver
}

func (tx *failingTx) StepWrite(ctx context.Context, steps []*store.Step) error {
	if tx.d.full.Load() {
		tx.d.failed.Add(1)
		return fmt.Errorf("step write: %w: database or disk is full (13)", store.ErrUnavailable)
	}
	return tx.ExecutorTx.StepWrite(ctx, steps)
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// setupFailing runs an engine on a store that fails while told to, logging
// to logs.
func setupFailing(t *testing.T, logs *syncBuffer, scale float64) (*testBundle, *failingDriver) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepwise.db")
	inner, err := sqlitestore.Open(ctx, path, sqlitestore.Options{})
	require.NoError(t, err)
	drv := &failingDriver{Driver: inner}
	tasks := newFakeTasks()
	e, err := New(drv, Config{Region: region, Account: account, WaitTimeScale: scale, Tasks: tasks,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx))
	t.Cleanup(func() { e.Stop(); inner.Close() })
	createActivity(t, inner)
	return &testBundle{path: path, drv: inner, engine: e, tasks: tasks}, drv
}

// While the store cannot write, timer steps wait for it in memory, the
// failure is logged once and reported by Health, clients are answered
// ServiceUnavailable; once it writes again every execution moves on,
// without a restart and without an event written twice.
func TestStoreFullThenFreed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var logs syncBuffer
	b, drv := setupFailing(t, &logs, 0.01)
	e, inner := b.engine, b.drv

	sm, m := b.machine(t, "waits", `{"StartAt": "W1", "States": {
		"W1": {"Type": "Wait", "Seconds": 20, "Next": "W2"},
		"W2": {"Type": "Wait", "Seconds": 20, "End": true}}}`)
	var arns []string
	for i := range 20 {
		arns = append(arns, b.start(t, sm, m, fmt.Sprintf("e%d", i), `{}`).Arn)
	}
	require.True(t, e.Health().StoreOK)

	drv.full.Store(true)
	// The first Waits end (0.2 s) while nothing can be written.
	testwait.Until(t, func() bool { return e.Health().Retrying >= 20 }, 30*time.Second, 5*time.Millisecond,
		"every timer step waits for the store")
	h := e.Health()
	require.False(t, h.StoreOK)
	require.Contains(t, h.Error, "disk is full")
	_, err := e.StartExecution(ctx, startParams(sm, m, "refused"))
	require.ErrorIs(t, err, store.ErrUnavailable, "a client's start is refused, not kept")
	require.Equal(t, 1, strings.Count(logs.String(), "the store cannot write"), "logged once per episode:\n%s", logs.String())

	drv.full.Store(false)
	for _, arn := range arns {
		done := b.waitStatus(t, arn, history.StatusSucceeded)
		require.Equal(t, history.StatusSucceeded, done.Status)
		require.Equal(t, []string{"ExecutionStarted", "WaitStateEntered", "WaitStateExited", "WaitStateEntered",
			"WaitStateExited", "ExecutionSucceeded"}, b.history(t, arn))
	}
	testwait.Until(t, func() bool { return e.Health().StoreOK }, 30*time.Second, 5*time.Millisecond)
	require.Greater(t, e.Health().FailedCommits, int64(20))
	require.Equal(t, 1, strings.Count(logs.String(), "the store writes again"))
	_, err = inner.Executor().ExecutionGet(ctx, startParams(sm, m, "refused").ExecutionArn)
	require.True(t, errors.Is(err, store.ErrNotFound), "the refused start left nothing: %v", err)
}

// A client's step that cannot be written is not applied: the client is
// answered, the execution rebuilt from the store, and the client's retry
// is applied once.
func TestStoreFullClientStepNotApplied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, drv := setupFailing(t, &syncBuffer{}, 1)
	e := b.engine
	sm, m := b.machine(t, "act", `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:us-east-1:123456789012:activity:work", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	task, err := e.PollActivity(ctx, "arn:aws:states:us-east-1:123456789012:activity:work", "w", 10*time.Second)
	require.NoError(t, err)
	require.NotNil(t, task)

	drv.full.Store(true)
	err = e.SendTaskSuccess(ctx, task.Token, `{"n": 1}`)
	require.ErrorIs(t, err, store.ErrUnavailable)
	drv.full.Store(false)
	require.NoError(t, e.SendTaskSuccess(ctx, task.Token, `{"n": 2}`), "the retry is the first success")
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Equal(t, `{"n":2}`, *done.Output)
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted",
		"ActivitySucceeded", "TaskStateExited", "ExecutionSucceeded"}, b.history(t, row.Arn))
}
