package sqlitestore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/internal/retention"
	"stepwise/store"
)

// seedRetention writes a database of n executions of one state machine,
// each with events history events and 4 replay-log entries, as a busy
// server leaves them: the rows of 100 executions at a time interleaved.
// Every tenth execution is RUNNING; the others ended at baseTime plus
// their index in milliseconds.
func seedRetention(tb testing.TB, path string, n, events int) {
	tb.Helper()
	ctx := context.Background()
	d, err := Open(ctx, path, Options{})
	require.NoError(tb, err)
	defer d.Close()
	const smArn = "arn:aws:states:us-east-1:123456789012:stateMachine:bench"
	_, err = d.Executor().StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: &store.StateMachine{
		Arn: smArn, Name: "bench", Type: "STANDARD", Status: "ACTIVE", RevisionID: "r1", Definition: `{}`,
		RoleArn: "role", CreatedAt: baseTime, UpdatedAt: baseTime,
	}})
	require.NoError(tb, err)
	body := []byte(`{"timestamp":1772600767.123,"type":"TaskStateEntered","id":0,"previousEventId":0,"stateEnteredEventDetails":{"name":"Step","input":"` +
		strings.Repeat("x", 160) + `","inputDetails":{"truncated":false}}}`)
	const chunk = 100
	for start := 0; start < n; start += chunk {
		tx, err := d.Begin(ctx)
		require.NoError(tb, err)
		var arns []string
		for i := start; i < min(start+chunk, n); i++ {
			x := &store.Execution{
				Arn: fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:bench:x%06d", i), StateMachineArn: smArn,
				RevisionID: "r1", Name: fmt.Sprintf("x%06d", i), Status: history.StatusSucceeded, Input: `{"n":1}`,
				StartDate: baseTime, RoleArn: "role", Version: 2, LastEventID: int64(events),
			}
			if i%10 == 9 {
				x.Status = history.StatusRunning
			} else {
				x.StopDate = ptrTo(baseTime.Add(time.Duration(i) * time.Millisecond))
				x.Output = ptrTo(`{"done":true}`)
			}
			_, err := tx.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: x})
			require.NoError(tb, err)
			arns = append(arns, x.Arn)
		}
		for id := 1; id <= events; id++ {
			evs := make([]*store.Event, len(arns))
			for i, arn := range arns {
				evs[i] = &store.Event{ExecutionArn: arn, ID: int64(id), Type: "TaskStateEntered", Timestamp: baseTime, Body: body}
			}
			require.NoError(tb, tx.EventInsert(ctx, evs))
			if id%(max(events/4, 1)) == 0 && id/(max(events/4, 1)) <= 4 {
				ins := make([]*store.Input, len(arns))
				for i, arn := range arns {
					ins[i] = &store.Input{ExecutionArn: arn, Seq: int64(id / max(events/4, 1)), At: baseTime, Body: body[:100]}
				}
				require.NoError(tb, tx.InputInsert(ctx, ins))
			}
		}
		require.NoError(tb, tx.Commit(ctx))
	}
}

func ptrTo[T any](v T) *T { return &v }

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	src, err := os.Open(from)
	require.NoError(tb, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	require.NoError(tb, err)
	_, err = io.Copy(dst, src)
	require.NoError(tb, err)
	// Flushed now, so that the writeback does not slow the measured
	// commits.
	require.NoError(tb, dst.Sync())
	require.NoError(tb, dst.Close())
}

// BenchmarkExecutionDeleteClosed measures one call of
// ExecutionDeleteClosed, a batch of the retention loop, on a database of
// 10,000 executions (9,000 ended): with no other writer, its time is the
// time it holds the write lock. max-ms is the longest batch.
//
//	go test ./store/sqlitestore -run '^$' -bench ExecutionDeleteClosed -benchtime 40x
func BenchmarkExecutionDeleteClosed(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	seeds := map[int]string{}
	seed := func(b *testing.B, events int) string {
		if p, ok := seeds[events]; ok {
			return p
		}
		p := filepath.Join(dir, fmt.Sprintf("seed-%d.db", events))
		seedRetention(b, p, 10_000, events)
		seeds[events] = p
		return p
	}
	for _, events := range []int{12, 100} {
		for _, batch := range []int{100, 250, 500} {
			b.Run(fmt.Sprintf("events=%d/batch=%d", events, batch), func(b *testing.B) {
				seedPath := seed(b, events)
				var d *Driver
				fresh := func() {
					if d != nil {
						require.NoError(b, d.Close())
					}
					p := filepath.Join(b.TempDir(), "db")
					copyFile(b, seedPath, p)
					var err error
					d, err = Open(ctx, p, Options{})
					require.NoError(b, err)
				}
				fresh()
				defer func() { d.Close() }()
				cutoff := baseTime.Add(time.Hour)
				var times []time.Duration
				deleted := 0
				b.ResetTimer()
				for range b.N {
					began := time.Now()
					n, err := d.Executor().ExecutionDeleteClosed(ctx, &store.ExecutionDeleteClosedParams{StoppedBefore: cutoff, Limit: batch})
					times = append(times, time.Since(began))
					require.NoError(b, err)
					deleted += n
					if n < batch {
						b.StopTimer()
						fresh()
						b.StartTimer()
					}
				}
				b.StopTimer()
				slices.Sort(times)
				b.ReportMetric(float64(deleted)/float64(b.N), "execs/op")
				b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "max-ms")
			})
		}
	}
}

// BenchmarkRetentionPass runs a pass of the retention loop (batches sized
// to hold the write lock about 50 ms, a pause after each) over 9,000 ended
// executions while another goroutine commits a new execution with three
// history events every millisecond, as the engine would. It reports the
// pass's longest batch and the commits' latency before (base-) and during
// the pass.
//
//	go test ./store/sqlitestore -run '^$' -bench RetentionPass -benchtime 1x
func BenchmarkRetentionPass(b *testing.B) {
	ctx := context.Background()
	for _, events := range []int{12, 100} {
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			seedPath := filepath.Join(b.TempDir(), "seed.db")
			seedRetention(b, seedPath, 10_000, events)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				p := filepath.Join(b.TempDir(), "db")
				copyFile(b, seedPath, p)
				d, err := Open(ctx, p, Options{})
				require.NoError(b, err)
				var logger *slog.Logger
				if os.Getenv("STEPWISE_BENCH_LOG") != "" {
					logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
				}
				cleaner, err := retention.New(retention.Config{Store: d.Executor(), Period: time.Hour, Now: func() time.Time { return baseTime.Add(2 * time.Hour) }, Logger: logger})
				require.NoError(b, err)

				var mu sync.Mutex
				var lat []time.Duration
				stop, done := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(done)
					for j := 0; ; j++ {
						select {
						case <-stop:
							return
						case <-time.After(time.Millisecond):
						}
						arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:bench:c%d-%06d", i, j)
						step := &store.Step{Insert: &store.Execution{Arn: arn, StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:bench",
							RevisionID: "r1", Name: fmt.Sprintf("c%d-%06d", i, j), Status: history.StatusRunning, Input: `{}`,
							StartDate: baseTime, RoleArn: "role", Version: 1, LastEventID: 3}}
						for id := int64(1); id <= 3; id++ {
							step.Events = append(step.Events, &store.Event{ExecutionArn: arn, ID: id, Type: "PassStateEntered", Timestamp: baseTime, Body: []byte(`{}`)})
						}
						began := time.Now()
						if err := d.Executor().StepWrite(ctx, []*store.Step{step}); err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						lat = append(lat, time.Since(began))
						mu.Unlock()
					}
				}()
				time.Sleep(time.Second)
				mu.Lock()
				base := slices.Clone(lat)
				lat = lat[:0]
				mu.Unlock()

				b.StartTimer()
				st, err := cleaner.Pass(ctx)
				b.StopTimer()
				require.NoError(b, err)
				require.Equal(b, 9_000, st.Deleted)
				close(stop)
				<-done
				require.NoError(b, d.Close())

				slices.Sort(base)
				slices.Sort(lat)
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				b.ReportMetric(float64(st.Batches), "batches")
				b.ReportMetric(ms(st.Took), "pass-ms")
				b.ReportMetric(ms(st.Longest), "longest-batch-ms")
				b.ReportMetric(ms(base[len(base)*99/100]), "base-commit-p99-ms")
				b.ReportMetric(ms(base[len(base)-1]), "base-commit-max-ms")
				b.ReportMetric(ms(lat[len(lat)/2]), "commit-p50-ms")
				b.ReportMetric(ms(lat[len(lat)*99/100]), "commit-p99-ms")
				b.ReportMetric(ms(lat[len(lat)-1]), "commit-max-ms")
				b.ReportMetric(float64(len(lat)), "commits")
				b.StartTimer()
			}
		})
	}
}
