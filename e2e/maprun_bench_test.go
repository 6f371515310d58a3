package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

// A distributed Map of 100,000 items read from S3 (moto), each a Pass, in
// batches of 100 and without batching: items and child executions a
// second (and the seconds before the map run started, reading the
// items, and after it ended), the server's CPU time per child (user and system, which the
// load of other processes changes less than the rate), its peak RSS, the
// database's growth and its bytes per child.
//
//	go test -run '^$' -bench DistributedMap -benchtime 1x ./e2e/
//
// STEPWISE_BENCH_SERVE_ARGS adds arguments to the server's (split on
// spaces; "{}" is replaced by the sub-benchmark's name, e.g.
// "--cpuprofile /tmp/map-{}.pprof"): the server is then stopped with
// SIGTERM, so that it writes its profile. STEPWISE_BENCH_KEEP_DB names a
// folder the database is copied to after the run (<name>.db), to look at
// where its bytes go (SQLite's dbstat).
func BenchmarkDistributedMap(b *testing.B) {
	moto := integrationtest.Moto(b)
	s3Do(b, http.MethodPut, moto+"/bench", nil)
	const items = 100_000
	var csv strings.Builder
	csv.WriteString("id\n")
	for i := range items {
		fmt.Fprintf(&csv, "%d\n", i)
	}
	s3Do(b, http.MethodPut, moto+"/bench/rows.csv", strings.NewReader(csv.String()))
	for _, batch := range []int{100, 0} {
		b.Run(fmt.Sprintf("items=100000/batch=%d", batch), func(b *testing.B) {
			batcher := ""
			children := items
			if batch > 0 {
				batcher = fmt.Sprintf(`"ItemBatcher": {"MaxItemsPerBatch": %d},`, batch)
				children = items / batch
			}
			def := `{"StartAt": "M", "States": {"M": {"Type": "Map", ` + batcher + `
				"ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "CSV"},
					"Parameters": {"Bucket": "bench", "Key": "rows.csv"}},
				"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P",
					"States": {"P": {"Type": "Pass", "End": true}}},
				"ResultSelector": {"n.$": "States.ArrayLength($)"}, "End": true}}}`
			for i := 0; i < b.N; i++ {
				db := filepath.Join(b.TempDir(), "bench.db")
				name := fmt.Sprintf("batch%d", batch)
				s := startServer(b, db, append([]string{"--aws-endpoint", moto}, benchServeArgs(name)...)...)
				c := s.client(b)
				sm := createMachine(b, c, "bench", def)
				cpu0, wait0 := cpuSeconds(b, s.cmd.Process.Pid), runnableSeconds(s.cmd.Process.Pid)
				tx0, steps0, took0 := commitBatches(b, s)
				before := dbSize(db)
				start := time.Now()
				out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(sm)})
				require.NoError(b, err)
				d := waitExecution(b, c, *out.ExecutionArn, 30*time.Minute)
				elapsed := time.Since(start)
				require.Equal(b, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
				require.JSONEq(b, fmt.Sprintf(`{"n": %d}`, children), *d.Output)
				b.ReportMetric(float64(items)/elapsed.Seconds(), "items/s")
				b.ReportMetric(float64(children)/elapsed.Seconds(), "children/s")
				// Of which the read before the run started and the end
				// after it ended (the server's dates).
				runs, err := c.ListMapRuns(context.Background(), &sfn.ListMapRunsInput{ExecutionArn: out.ExecutionArn})
				require.NoError(b, err)
				require.Len(b, runs.MapRuns, 1)
				mr, err := c.DescribeMapRun(context.Background(), &sfn.DescribeMapRunInput{MapRunArn: runs.MapRuns[0].MapRunArn})
				require.NoError(b, err)
				b.ReportMetric(mr.StartDate.Sub(*d.StartDate).Seconds(), "read-s")
				b.ReportMetric(d.StopDate.Sub(*mr.StopDate).Seconds(), "end-s")
				b.ReportMetric((cpuSeconds(b, s.cmd.Process.Pid)-cpu0)*1e6/float64(children), "CPU-µs/child")
				// The time the server's threads were ready to run but waited
				// for a CPU (taken by other processes, or by one another).
				b.ReportMetric(runnableSeconds(s.cmd.Process.Pid)-wait0, "CPU-wait-s")
				b.ReportMetric(float64(peakRSS(b, s.cmd.Process.Pid))/1024, "peak-RSS-MB")
				tx, steps, took := commitBatches(b, s)
				b.ReportMetric((steps-steps0)/(tx-tx0), "steps/tx")
				// The committer's time in its transactions (one goroutine,
				// so its rate bound is a million over this).
				b.ReportMetric((took-took0)*1e6/float64(children), "commit-µs/child")
				grown := dbSize(db) - before
				b.ReportMetric(float64(grown)/(1<<20), "db-growth-MB")
				b.ReportMetric(float64(grown)/float64(children), "db-B/child")
				endBenchServer(b, s, db, name)
			}
		})
	}
}

// A distributed Map over a large CSV (1,000,000 and 4,000,000 lines, 50
// and 200 MB) in batches of 1,000: the items are streamed to the store
// and read back a page at a time, so the server's peak RSS does not grow
// with the object.
//
//	go test -run '^$' -bench DistributedMapLarge -benchtime 1x ./e2e/
func BenchmarkDistributedMapLarge(b *testing.B) {
	moto := integrationtest.Moto(b)
	s3Do(b, http.MethodPut, moto+"/large", nil)
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "ItemBatcher": {"MaxItemsPerBatch": 1000},
		"ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "CSV"},
			"Parameters": {"Bucket": "large", "Key.$": "$.key"}},
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P",
			"States": {"P": {"Type": "Pass", "Parameters": {"n.$": "States.ArrayLength($.Items)"}, "End": true}}},
		"ResultSelector": {"n.$": "States.ArrayLength($)"}, "End": true}}}`
	for _, items := range []int{1_000_000, 4_000_000} {
		b.Run(fmt.Sprintf("items=%d", items), func(b *testing.B) {
			var csv strings.Builder
			csv.WriteString("id,name,note\n")
			for i := range items {
				fmt.Fprintf(&csv, "%d,item-%d,some text to make the line longer\n", i, i)
			}
			size := csv.Len()
			key := fmt.Sprintf("rows-%d.csv", items)
			s3Do(b, http.MethodPut, moto+"/large/"+key, strings.NewReader(csv.String()))
			csv.Reset()
			for i := 0; i < b.N; i++ {
				db := filepath.Join(b.TempDir(), "large.db")
				s := startServer(b, db, "--aws-endpoint", moto)
				c := s.client(b)
				sm := createMachine(b, c, "large", def)
				start := time.Now()
				out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(sm),
					Input: aws.String(fmt.Sprintf(`{"key": %q}`, key))})
				require.NoError(b, err)
				d := waitExecution(b, c, *out.ExecutionArn, 30*time.Minute)
				elapsed := time.Since(start)
				require.Equal(b, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
				require.JSONEq(b, fmt.Sprintf(`{"n": %d}`, items/1000), *d.Output)
				b.ReportMetric(float64(items)/elapsed.Seconds(), "items/s")
				b.ReportMetric(float64(size)/(1<<20), "object-MB")
				b.ReportMetric(float64(peakRSS(b, s.cmd.Process.Pid))/1024, "peak-RSS-MB")
				s.kill()
			}
		})
	}
}

// benchServeArgs are the server's extra arguments from
// STEPWISE_BENCH_SERVE_ARGS, "{}" replaced by name.
func benchServeArgs(name string) []string {
	var args []string
	for _, a := range strings.Fields(os.Getenv("STEPWISE_BENCH_SERVE_ARGS")) {
		args = append(args, strings.ReplaceAll(a, "{}", name))
	}
	return args
}

// endBenchServer ends a benchmark's server: killed, or stopped (to write
// its profile) when it was given extra arguments; its database is copied
// to STEPWISE_BENCH_KEEP_DB/<name>.db when that is set.
func endBenchServer(b *testing.B, s *server, db, name string) {
	if len(benchServeArgs(name)) == 0 {
		s.kill()
	} else {
		require.NoError(b, s.cmd.Process.Signal(syscall.SIGTERM))
		<-s.done
	}
	if dir := os.Getenv("STEPWISE_BENCH_KEEP_DB"); dir != "" {
		for _, suffix := range []string{"", "-wal"} {
			data, err := os.ReadFile(db + suffix)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			require.NoError(b, err)
			require.NoError(b, os.WriteFile(filepath.Join(dir, name+".db"+suffix), data, 0o644))
		}
	}
}

// cpuSeconds is the CPU time a process has used, user and system, in
// seconds (/proc/<pid>/stat, in clock ticks of 1/100 s).
func cpuSeconds(b *testing.B, pid int) float64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(b, err)
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	utime, err := strconv.ParseInt(f[11], 10, 64)
	require.NoError(b, err)
	stime, err := strconv.ParseInt(f[12], 10, 64)
	require.NoError(b, err)
	return float64(utime+stime) / 100
}

// commitBatches are the server's transactions of steps, the steps they
// committed and the seconds they took so far (its metrics,
// stepwise_commit_batch_size and stepwise_commit_latency_seconds).
func commitBatches(b *testing.B, s *server) (tx, steps, took float64) {
	resp, err := http.Get(s.url() + "/metrics")
	require.NoError(b, err)
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	require.NoError(b, err)
	for _, line := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(line, "stepwise_commit_batch_size_count "); ok {
			tx, err = strconv.ParseFloat(v, 64)
			require.NoError(b, err)
		}
		if v, ok := strings.CutPrefix(line, "stepwise_commit_batch_size_sum "); ok {
			steps, err = strconv.ParseFloat(v, 64)
			require.NoError(b, err)
		}
		if v, ok := strings.CutPrefix(line, "stepwise_commit_latency_seconds_sum "); ok {
			took, err = strconv.ParseFloat(v, 64)
			require.NoError(b, err)
		}
	}
	return tx, steps, took
}

// runnableSeconds is the time a process's threads have waited for a CPU
// while ready to run (the second field of /proc/<pid>/task/*/schedstat);
// 0 where it cannot be read.
func runnableSeconds(pid int) float64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) >= 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			ns += n
		}
	}
	return float64(ns) / 1e9
}

// dbSize is the size of a SQLite database with its write-ahead log.
func dbSize(db string) int64 {
	var n int64
	for _, f := range []string{db, db + "-wal"} {
		if st, err := os.Stat(f); err == nil {
			n += st.Size()
		}
	}
	return n
}

// peakRSS is a process's peak resident set size in KiB (VmHWM).
func peakRSS(b *testing.B, pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(b, err)
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(b, err)
			return n
		}
	}
	return 0
}
