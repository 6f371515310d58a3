package retention

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const smArn = "arn:aws:states:us-east-1:123456789012:stateMachine:orders"

// now is the tests' execution time; the period is 90 days.
var (
	now    = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	period = 90 * 24 * time.Hour
)

// syncBuffer is a log sink the cleaner's goroutine writes to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type testBundle struct {
	driver *sqlitestore.Driver
	exec   store.Executor
	log    *syncBuffer
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	d, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "stepwise.db"), sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.Executor().StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: &store.StateMachine{
		Arn: smArn, Name: "orders", Type: "STANDARD", Status: "ACTIVE", RevisionID: "r1",
		Definition: `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`, RoleArn: "role", CreatedAt: now, UpdatedAt: now,
	}})
	require.NoError(t, err)
	return &testBundle{driver: d, exec: d.Executor(), log: &syncBuffer{}}
}

func (b *testBundle) config() Config {
	return Config{
		Store:  b.exec,
		Period: period,
		Now:    func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(b.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// execution writes an execution with three history events; stop nil is a
// running one.
func (b *testBundle) execution(t *testing.T, name string, status history.ExecutionStatus, stop *time.Time) string {
	t.Helper()
	ctx := context.Background()
	arn := "arn:aws:states:us-east-1:123456789012:execution:orders:" + name
	_, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: &store.Execution{
		Arn: arn, StateMachineArn: smArn, RevisionID: "r1", Name: name, Status: status, Input: `{}`,
		StartDate: now.Add(-200 * 24 * time.Hour), StopDate: stop, RoleArn: "role", Version: 1, LastEventID: 3,
	}})
	require.NoError(t, err)
	var evs []*store.Event
	for id := int64(1); id <= 3; id++ {
		evs = append(evs, &store.Event{ExecutionArn: arn, ID: id, Type: "PassStateEntered", Timestamp: now, Body: []byte(`{}`)})
	}
	require.NoError(t, b.exec.EventInsert(ctx, evs))
	return arn
}

func (b *testBundle) exists(t *testing.T, arn string) bool {
	t.Helper()
	_, err := b.exec.ExecutionGet(context.Background(), arn)
	if errors.Is(err, store.ErrNotFound) {
		evs, err := b.exec.EventList(context.Background(), &store.EventListParams{ExecutionArn: arn})
		require.NoError(t, err)
		require.Empty(t, evs, "the history of a deleted execution")
		return false
	}
	require.NoError(t, err)
	return true
}

// gone reports whether the execution is deleted, for polling from another
// goroutine (it does not fail the test).
func (b *testBundle) gone(arn string) bool {
	_, err := b.exec.ExecutionGet(context.Background(), arn)
	return errors.Is(err, store.ErrNotFound)
}

func at(t time.Time) *time.Time { return &t }

func TestPass(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("DeletesOnlyOldEndedExecutions", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		cutoff := now.Add(-period)
		var old, kept []string
		for i, st := range []history.ExecutionStatus{history.StatusSucceeded, history.StatusFailed, history.StatusTimedOut, history.StatusAborted} {
			old = append(old, b.execution(t, fmt.Sprintf("old-%d", i), st, at(cutoff.Add(-time.Duration(i+1)*time.Hour))))
		}
		kept = append(kept,
			b.execution(t, "running", history.StatusRunning, nil),
			b.execution(t, "recent", history.StatusFailed, at(cutoff.Add(time.Second))),
		)
		// Failed long ago, then redriven: running again.
		redriven := b.execution(t, "redriven", history.StatusFailed, at(cutoff.Add(-24*time.Hour)))
		_, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: redriven, ExpectedVersion: 1,
			Status: history.StatusRunning, LastEventID: 4, RedriveCount: 1, RedriveDate: at(now)})
		require.NoError(t, err)
		kept = append(kept, redriven)

		c, err := New(b.config())
		require.NoError(t, err)
		st, err := c.Pass(ctx)
		require.NoError(t, err)
		require.Equal(t, cutoff, st.StoppedBefore)
		require.Equal(t, len(old), st.Deleted)
		require.Equal(t, 1, st.Batches)
		for _, arn := range old {
			require.False(t, b.exists(t, arn), arn)
		}
		for _, arn := range kept {
			require.True(t, b.exists(t, arn), arn)
		}
		require.Contains(t, b.log.String(), "retention: deleted ended executions")
		require.Contains(t, b.log.String(), "deleted=4")

		// Nothing left to do: no line.
		before := b.log.String()
		st, err = c.Pass(ctx)
		require.NoError(t, err)
		require.Zero(t, st.Deleted)
		require.NotContains(t, b.log.String()[len(before):], "deleted ended executions")
	})

	t.Run("Batches", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		for i := range 7 {
			b.execution(t, fmt.Sprintf("x%d", i), history.StatusSucceeded, at(now.Add(-period-time.Duration(i+1)*time.Minute)))
		}
		running := b.execution(t, "running", history.StatusRunning, nil)
		cfg := b.config()
		cfg.Batch = 3
		cfg.Pause = time.Millisecond
		cfg.BatchTime = time.Hour // never shrinks
		c, err := New(cfg)
		require.NoError(t, err)
		st, err := c.Pass(ctx)
		require.NoError(t, err)
		require.Equal(t, 7, st.Deleted)
		require.Equal(t, 3, st.Batches) // 3, 3, 1
		require.Positive(t, st.Longest)
		require.True(t, b.exists(t, running))
	})

	t.Run("StoreFails", func(t *testing.T) {
		t.Parallel()

		calls := 0
		c, err := New(Config{Store: storeFunc(func(ctx context.Context, p *store.ExecutionDeleteClosedParams) (int, error) {
			calls++
			if calls == 2 {
				return 0, store.ErrUnavailable
			}
			return p.Limit, nil
		}), Period: period, Pause: time.Millisecond, BatchTime: time.Hour})
		require.NoError(t, err)
		st, err := c.Pass(ctx)
		require.ErrorIs(t, err, store.ErrUnavailable)
		require.Equal(t, firstBatch, st.Deleted)
	})
}

// storeFunc is a Store of one function.
type storeFunc func(ctx context.Context, p *store.ExecutionDeleteClosedParams) (int, error)

func (f storeFunc) ExecutionDeleteClosed(ctx context.Context, p *store.ExecutionDeleteClosedParams) (int, error) {
	return f(ctx, p)
}

func TestResize(t *testing.T) {
	t.Parallel()

	c, err := New(Config{Store: storeFunc(nil), Period: period, Batch: 400, BatchTime: 40 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, firstBatch, c.batch)
	c.resize(50 * time.Millisecond) // too long
	require.Equal(t, 50, c.batch)
	c.resize(20 * time.Millisecond) // about right
	require.Equal(t, 50, c.batch)
	for range 5 {
		c.resize(time.Millisecond) // short: up to Batch
	}
	require.Equal(t, 400, c.batch)
	for range 20 {
		c.resize(time.Second)
	}
	require.Equal(t, 1, c.batch)
}

func TestRun(t *testing.T) {
	t.Parallel()

	t.Run("FirstPassAfterReadyThenEveryInterval", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		ready := make(chan struct{})
		cfg := b.config()
		cfg.Ready = ready
		cfg.Interval = 50 * time.Millisecond
		var passes atomic.Int64
		inner := cfg.Store
		cfg.Store = storeFunc(func(ctx context.Context, p *store.ExecutionDeleteClosedParams) (int, error) {
			passes.Add(1)
			return inner.ExecutionDeleteClosed(ctx, p)
		})
		old := b.execution(t, "old", history.StatusSucceeded, at(now.Add(-period-time.Hour)))
		c, err := New(cfg)
		require.NoError(t, err)
		require.Equal(t, cfg.Interval, c.cfg.FirstPass)

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		time.Sleep(3 * cfg.Interval)
		require.Zero(t, passes.Load(), "a pass before the engine resumed")
		require.True(t, b.exists(t, old))

		close(ready)
		testwait.Until(t, func() bool { return b.gone(old) }, 30*time.Second, 10*time.Millisecond)
		require.False(t, b.exists(t, old))
		// Then one pass an interval.
		n := passes.Load()
		testwait.Until(t, func() bool { return passes.Load() >= n+2 }, 30*time.Second, 10*time.Millisecond)
		cancel()
		<-done
		require.Contains(t, b.log.String(), "deleted=1")
	})

	t.Run("GoesOnAfterAFailure", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		var calls atomic.Int64
		c, err := New(Config{
			Store: storeFunc(func(ctx context.Context, p *store.ExecutionDeleteClosedParams) (int, error) {
				if calls.Add(1) == 1 {
					return 0, store.ErrUnavailable
				}
				return 0, nil
			}),
			Period: period, Interval: 10 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(b.log, nil)),
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		testwait.Until(t, func() bool { return calls.Load() >= 3 }, 30*time.Second, 5*time.Millisecond)
		cancel()
		<-done
		require.Contains(t, b.log.String(), "retention: deleting ended executions failed; trying again later")
	})

	t.Run("StopsWhileWaitingForReady", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		cfg := b.config()
		cfg.Ready = make(chan struct{})
		c, err := New(cfg)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}
	})
}

func TestNew(t *testing.T) {
	t.Parallel()

	_, err := New(Config{Period: period})
	require.EqualError(t, err, "retention: no store")
	_, err = New(Config{Store: storeFunc(nil)})
	require.EqualError(t, err, "retention: the period must be positive")
	c, err := New(Config{Store: storeFunc(nil), Period: period})
	require.NoError(t, err)
	require.Equal(t, DefaultInterval, c.cfg.Interval)
	require.Equal(t, DefaultFirstPass, c.cfg.FirstPass)
	require.Equal(t, DefaultBatch, c.cfg.Batch)
}
