package pgstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/store"
)

func TestClusterOwnership(t *testing.T) {
	ctx := context.Background()
	d := open(ctx, t, Options{})
	ex := d.Executor()
	x := seed(ctx, t, ex)

	_, err := d.ExecutionOwner(ctx, "arn:nope")
	require.ErrorIs(t, err, store.ErrNotFound)
	o, err := d.ExecutionOwner(ctx, x.Arn)
	require.NoError(t, err)
	require.Equal(t, store.Ownership{Running: true}, o, "an unowned running execution")

	a, err := ex.NodeRegister(ctx, "a", time.Hour)
	require.NoError(t, err)
	b, err := ex.NodeRegister(ctx, "b", time.Hour)
	require.NoError(t, err)
	ok, err := d.ExecutionClaimOne(ctx, a, x.Arn)
	require.NoError(t, err)
	require.True(t, ok, "an orphan is claimed")
	o, err = d.ExecutionOwner(ctx, x.Arn)
	require.NoError(t, err)
	require.Equal(t, store.Ownership{Owner: a, Live: true, Running: true}, o)
	ok, err = d.ExecutionClaimOne(ctx, b, x.Arn)
	require.NoError(t, err)
	require.False(t, ok, "a live node's running execution is not taken")
	before, err := ex.ExecutionGet(ctx, x.Arn)
	require.NoError(t, err)
	ok, err = d.ExecutionClaimOne(ctx, a, x.Arn)
	require.NoError(t, err)
	require.True(t, ok, "the owner's own is its own")
	after, err := ex.ExecutionGet(ctx, x.Arn)
	require.NoError(t, err)
	require.Equal(t, before.Version, after.Version, "as it is: the owner's live copy stays good")

	// An ended execution is claimed by whoever asks (a redrive).
	stop := time.Now()
	cur, err := ex.ExecutionGet(ctx, x.Arn)
	require.NoError(t, err)
	require.NoError(t, ex.StepWrite(ctx, []*store.Step{{Fence: &a, Input: &store.Input{ExecutionArn: x.Arn, Seq: 1, At: stop, Body: []byte(`{}`)},
		Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: cur.Version, Status: history.StatusFailed, StopDate: &stop, LastEventID: 2}}}))
	ok, err = d.ExecutionClaimOne(ctx, b, x.Arn)
	require.NoError(t, err)
	require.True(t, ok)
	o, err = d.ExecutionOwner(ctx, x.Arn)
	require.NoError(t, err)
	require.Equal(t, store.Ownership{Owner: b, Live: true}, o)

	gone, err := ex.NodeRegister(ctx, "gone", time.Millisecond)
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	_, err = d.ExecutionClaimOne(ctx, gone, x.Arn)
	require.ErrorIs(t, err, store.ErrFenced, "a node whose lease ran out claims nothing")
}

func TestClusterSignals(t *testing.T) {
	ctx := context.Background()
	d := open(ctx, t, Options{})

	var mu sync.Mutex
	var heard []string
	listening := make(chan struct{})
	lctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- d.Listen(lctx, []string{store.ChannelSignal, store.ChannelReply, store.ChannelActivity}, func(ch, payload string) {
			if ch == "" {
				close(listening)
				return
			}
			mu.Lock()
			heard = append(heard, ch+" "+payload)
			mu.Unlock()
		})
	}()
	<-listening

	id, err := d.SignalSend(ctx, "a", "b", []byte("one"))
	require.NoError(t, err)
	id2, err := d.SignalSend(ctx, "a", "b", []byte("two"))
	require.NoError(t, err)
	_, err = d.SignalSend(ctx, "a", "c", []byte("for c"))
	require.NoError(t, err)
	sigs, err := d.SignalTake(ctx, "b", 1)
	require.NoError(t, err)
	require.Equal(t, []store.Signal{{ID: id, Sender: "a", Body: []byte("one")}}, sigs, "oldest first, up to the limit")
	_, ok, err := d.SignalResult(ctx, id)
	require.NoError(t, err)
	require.False(t, ok, "not answered yet")
	withdrawn, err := d.SignalWithdraw(ctx, id)
	require.NoError(t, err)
	require.False(t, withdrawn, "a taken request stays")
	require.NoError(t, d.SignalAnswer(ctx, id, []byte("done")))
	reply, ok, err := d.SignalResult(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []byte("done"), reply)
	_, _, err = d.SignalResult(ctx, id)
	require.ErrorIs(t, err, store.ErrNotFound, "an answer is read once")
	withdrawn, err = d.SignalWithdraw(ctx, id2)
	require.NoError(t, err)
	require.True(t, withdrawn)
	sigs, err = d.SignalTake(ctx, "b", 10)
	require.NoError(t, err)
	require.Empty(t, sigs)
	require.NoError(t, d.SignalSweep(ctx, 0))
	sigs, err = d.SignalTake(ctx, "c", 10)
	require.NoError(t, err)
	require.Empty(t, sigs, "swept")

	q := func(act, x string, front bool) store.QueuedTask {
		return store.QueuedTask{ActivityArn: act, ExecutionArn: x, TaskID: "t1", Owner: "a", Front: front}
	}
	require.NoError(t, d.ActivityEnqueue(ctx, []store.QueuedTask{q("act", "x1", false), q("act", "x2", false)}))
	require.NoError(t, d.ActivityEnqueue(ctx, []store.QueuedTask{q("act", "x1", false)}), "queued once")
	require.NoError(t, d.ActivityEnqueue(ctx, []store.QueuedTask{q("act", "x3", true), q("other", "x4", false)}))
	n, err := d.ActivityQueued(ctx, "act")
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.NoError(t, d.ActivityDequeue(ctx, "x2", "t1"))
	require.NoError(t, d.ActivityEnqueue(ctx, []store.QueuedTask{{ActivityArn: "act", ExecutionArn: "x5", TaskID: "t1", Owner: "b"}}))
	for _, want := range []string{"x5", "x3", "x1"} {
		arn, id, ok, err := d.ActivityTake(ctx, "act", "b")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, [2]string{want, "t1"}, [2]string{arn, id})
	}
	_, _, ok, err = d.ActivityTake(ctx, "act", "b")
	require.NoError(t, err)
	require.False(t, ok)

	// Each notice is heard (a channel may be notified more than once,
	// so the wait is for all of them, not for a count).
	want := []string{store.ChannelSignal + " b", store.ChannelSignal + " c", store.ChannelActivity + " act\n2",
		store.ChannelActivity + " act\n1", store.ChannelReply + " " + strconv.FormatInt(id, 10)}
	testwait.Until(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, w := range want {
			if !slices.Contains(heard, w) {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond)
	mu.Lock()
	for _, w := range want {
		require.Contains(t, heard, w)
	}
	mu.Unlock()
	stop()
	require.ErrorIs(t, <-done, context.Canceled)
}

func TestActivityTakeConcurrent(t *testing.T) {
	ctx := context.Background()
	d := open(ctx, t, Options{})
	const tasks = 200
	var qs []store.QueuedTask
	for i := range tasks {
		qs = append(qs, store.QueuedTask{ActivityArn: "act", ExecutionArn: "x", TaskID: strconv.Itoa(i), Owner: strconv.Itoa(i % 3)})
	}
	require.NoError(t, d.ActivityEnqueue(ctx, qs))
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for k := range 8 {
		wg.Go(func() {
			for {
				_, id, ok, err := d.ActivityTake(ctx, "act", fmt.Sprint(k%2))
				if err != nil || !ok {
					return
				}
				mu.Lock()
				got[id]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, got, tasks)
	for id, n := range got {
		require.Equal(t, 1, n, "task %s taken once", id)
	}
}

// A take finds the oldest task through the indexes even where the
// statistics say the queue is empty, as they mostly do of a queue that
// churns: scanning the table would cost every take the pages of all the
// rows deleted since the last vacuum.
func TestActivityTakeScansNoTable(t *testing.T) {
	ctx := context.Background()
	// One connection, whose counts are published before it reads them.
	d, err := Open(ctx, pgtest.NewDatabase(t)+"&pool_max_conns=1", Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.pool.Exec(ctx, `ANALYZE stepwise_activity_queue`)
	require.NoError(t, err)
	scans := func() (seq, idx int64) {
		_, err := d.pool.Exec(ctx, `SELECT pg_stat_force_next_flush()`)
		require.NoError(t, err)
		require.NoError(t, d.pool.QueryRow(ctx, `SELECT coalesce(seq_scan, 0), coalesce(idx_scan, 0)
FROM pg_stat_user_tables WHERE relname = 'stepwise_activity_queue'`).Scan(&seq, &idx))
		return seq, idx
	}
	seq0, idx0 := scans()
	const tasks = 20
	var qs []store.QueuedTask
	var want, got []string // the node's own first, then the others', oldest first
	for i := range tasks {
		qs = append(qs, store.QueuedTask{ActivityArn: "act", ExecutionArn: "x", TaskID: strconv.Itoa(i), Owner: strconv.Itoa(i % 2)})
		if i%2 == 0 {
			want = append(want, strconv.Itoa(i))
		}
	}
	for i := 1; i < tasks; i += 2 {
		want = append(want, strconv.Itoa(i))
	}
	require.NoError(t, d.ActivityEnqueue(ctx, qs))
	for range tasks {
		_, id, ok, err := d.ActivityTake(ctx, "act", "0")
		require.NoError(t, err)
		require.True(t, ok)
		got = append(got, id)
	}
	require.Equal(t, want, got)
	_, _, ok, err := d.ActivityTake(ctx, "act", "0")
	require.NoError(t, err)
	require.False(t, ok)
	seq, idx := scans()
	require.Equal(t, seq0, seq, "sequential scans of the queue")
	require.Greater(t, idx, idx0)
}

// A take of many tasks takes the node's own first, then the others',
// each oldest first, each task once, and no more than asked for.
func TestActivityTakeMany(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, pgtest.NewDatabase(t)+"&pool_max_conns=1", Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.pool.Exec(ctx, `ANALYZE stepwise_activity_queue`)
	require.NoError(t, err)
	var qs []store.QueuedTask
	for i := range 6 {
		qs = append(qs, store.QueuedTask{ActivityArn: "act", ExecutionArn: "x", TaskID: strconv.Itoa(i), Owner: strconv.Itoa(i % 2)})
	}
	qs = append(qs, store.QueuedTask{ActivityArn: "other", ExecutionArn: "x", TaskID: "o", Owner: "0"})
	require.NoError(t, d.ActivityEnqueue(ctx, qs))
	var seq0 int64
	require.NoError(t, seqScans(ctx, d, &seq0))
	take := func(n int) []string {
		tasks, err := d.ActivityTakeMany(ctx, "act", "0", n)
		require.NoError(t, err)
		var ids []string
		for _, tk := range tasks {
			require.Equal(t, "x", tk.ExecutionArn)
			require.Equal(t, "act", tk.ActivityArn)
			ids = append(ids, tk.TaskID)
		}
		return ids
	}
	require.Equal(t, []string{"0", "2"}, take(2))
	require.Equal(t, []string{"4", "1", "3"}, take(3))
	require.Equal(t, []string{"5"}, take(5))
	require.Empty(t, take(5))
	_, err = d.ActivityTakeMany(ctx, "act", "0", 0)
	require.ErrorContains(t, err, "count 0 must be positive")
	var seq int64
	require.NoError(t, seqScans(ctx, d, &seq))
	require.Equal(t, seq0, seq, "sequential scans of the queue")
	n, err := d.ActivityQueued(ctx, "other")
	require.NoError(t, err)
	require.Equal(t, 1, n, "another activity's task stays")
}

// seqScans reads the sequential scans of the activity queue so far.
func seqScans(ctx context.Context, d *Driver, n *int64) error {
	if _, err := d.pool.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		return err
	}
	return d.pool.QueryRow(ctx, `SELECT coalesce(seq_scan, 0) FROM pg_stat_user_tables WHERE relname = 'stepwise_activity_queue'`).Scan(n)
}

// Live nodes claiming orphans at the same time, in batches and one by
// one, each get distinct executions: none is taken from a live node.
func TestClaimConcurrent(t *testing.T) {
	ctx := context.Background()
	d := open(ctx, t, Options{})
	ex := d.Executor()
	x := seed(ctx, t, ex)
	const n = 300
	var arns []string
	for i := range n {
		row := *x
		row.Arn, row.Name = fmt.Sprintf("%s-%d", x.Arn, i), fmt.Sprintf("x%d", i)
		_, err := ex.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: &row})
		require.NoError(t, err)
		arns = append(arns, row.Arn)
	}
	var mu sync.Mutex
	claims := map[string][]string{}
	var wg sync.WaitGroup
	for k := range 6 {
		wg.Go(func() {
			f, err := ex.NodeRegister(ctx, fmt.Sprintf("n%d", k), time.Hour)
			require.NoError(t, err)
			var got []string
			if k%2 == 0 {
				for {
					batch, err := ex.ExecutionClaim(ctx, f, 7)
					require.NoError(t, err)
					if len(batch) == 0 {
						break
					}
					got = append(got, batch...)
				}
			} else {
				for _, arn := range arns {
					ok, err := d.ExecutionClaimOne(ctx, f, arn)
					require.NoError(t, err)
					if ok {
						got = append(got, arn)
					}
				}
			}
			mu.Lock()
			for _, arn := range got {
				claims[arn] = append(claims[arn], f.Node)
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Len(t, claims, n+1)
	for arn, by := range claims {
		require.Len(t, by, 1, "%s claimed by %v", arn, by)
	}
}

// BenchmarkActivityTake takes tasks one by one from a short queue that
// churns, as pollers do (the queue is refilled 32 at a time).
func BenchmarkActivityTake(b *testing.B) {
	ctx := context.Background()
	d, err := Open(ctx, pgtest.NewDatabase(b), Options{})
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, d.Close()) })
	_, err = d.pool.Exec(ctx, `ANALYZE stepwise_activity_queue`)
	require.NoError(b, err)
	cpu := func() time.Duration {
		var u syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &u)
		return time.Duration(u.Utime.Nano() + u.Stime.Nano())
	}
	const refill = 32
	b.ResetTimer()
	cpu0 := cpu()
	for i := range b.N {
		if i%refill == 0 {
			qs := make([]store.QueuedTask, refill)
			for k := range qs {
				qs[k] = store.QueuedTask{ActivityArn: "act", ExecutionArn: "x", TaskID: strconv.Itoa(i + k), Owner: "n"}
			}
			require.NoError(b, d.ActivityEnqueue(ctx, qs))
		}
		if _, _, ok, err := d.ActivityTake(ctx, "act", "n"); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
	b.ReportMetric(float64((cpu()-cpu0).Microseconds())/float64(b.N), "client-µs/op")
}
