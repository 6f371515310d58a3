package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/testwait"
)

// The map-run kill tests run a distributed Map of unbatched items read
// from S3 (moto), one Pass per child, MaxConcurrency 100, and kill -9
// the server (or, on PostgreSQL, a node) at random points while the
// children start, several times. Afterwards each item's child exists
// exactly once and DescribeMapRun counts every item succeeded.
//
// Their size is set by environment variables: STEPWISE_MAP_KILL_ITEMS
// (items, default 20,000, 2,000 with -short; 100,000 is the long mode),
// STEPWISE_MAP_KILL_RUNS (runs, default 1),
// STEPWISE_MAP_KILL_KILLS (kills a run, default 3) and
// STEPWISE_MAP_KILL_SEED (the kills' random points; default the time):
//
//	STEPWISE_MAP_KILL_ITEMS=100000 STEPWISE_MAP_KILL_RUNS=3 \
//	  go test ./e2e -run 'TestDistributedMapKills' -timeout 2h -v

const killDefinition = `{"StartAt": "M", "States": {"M": {"Type": "Map", "MaxConcurrency": 100,
	"ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"},
		"Parameters": {"Bucket": "kills", "Key": "rows.csv"}},
	"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P",
		"States": {"P": {"Type": "Pass", "End": true}}},
	"ResultSelector": {"n.$": "States.ArrayLength($)"}, "End": true}}}`

// killEnv is the integer in the environment variable name, or def.
func killEnv(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, name)
	return n
}

// killTarget is what a map-kill run kills and restarts: client is a
// client of a live server, crash kills one (the k-th kill) and starts it
// again.
type killTarget struct {
	client func() *sfn.Client
	crash  func(k int)
}

// putKillRows puts a CSV of items rows into moto's bucket "kills".
func putKillRows(t *testing.T, moto string, items int) {
	t.Helper()
	s3Do(t, http.MethodPut, moto+"/kills", nil)
	var csv strings.Builder
	csv.WriteString("id\n")
	for i := range items {
		fmt.Fprintf(&csv, "%d\n", i)
	}
	s3Do(t, http.MethodPut, moto+"/kills/rows.csv", strings.NewReader(csv.String()))
}

// mapKillRun runs the map of items once, crashing kills times at random
// points while its children start, and checks each item ran exactly once.
func mapKillRun(t *testing.T, tg killTarget, name string, items, kills int, rnd *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	began := time.Now()
	sm := createMachine(t, tg.client(), name, killDefinition)
	start, err := tg.client().StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm)})
	require.NoError(t, err)

	// progress reads the run's row (written every second): how many
	// children it says started, whether it runs, and whether the server
	// answered (not until the map run exists: its items read).
	var mapRun string
	progress := func() (n int64, running, ok bool) {
		c := tg.client()
		if mapRun == "" {
			runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
			if err != nil || len(runs.MapRuns) == 0 {
				return 0, false, false // not yet, or the server is starting
			}
			mapRun = aws.ToString(runs.MapRuns[0].MapRunArn)
		}
		mr, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String(mapRun)})
		if err != nil {
			return 0, false, false
		}
		e := mr.ExecutionCounts
		return e.Succeeded + e.Running + e.Failed + e.Aborted + e.TimedOut, mr.Status == types.MapRunStatusRunning, true
	}
	var at []string
	for k := range kills {
		// The k-th kill lands a random time (0.1 s and up to 25 µs an
		// item) after the server answers for the run under way: once it
		// started children (the first server), or once it is back (after
		// a restart). A run that is over is killed no more.
		var got int64
		var running bool
		testwait.Until(t, func() bool {
			var ok bool
			got, running, ok = progress()
			return ok && (!running || got > 0)
		}, 10*time.Minute, 10*time.Millisecond, "kill %d: the run under way", k)
		if running {
			time.Sleep(100*time.Millisecond + time.Duration(rnd.Int64N(int64(items)*25+1))*time.Microsecond)
			got, running, _ = progress()
		}
		if !running {
			break
		}
		at = append(at, fmt.Sprintf("%d/%d", got, items))
		tg.crash(k)
	}

	d := waitExecution(t, tg.client(), aws.ToString(start.ExecutionArn), 30*time.Minute)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	require.JSONEq(t, fmt.Sprintf(`{"n": %d}`, items), aws.ToString(d.Output))

	// Each index has exactly one child, which succeeded.
	c := tg.client()
	seen := make([]int, items)
	var token *string
	listed := 0
	for {
		out, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: aws.String(mapRun), MaxResults: 1000, NextToken: token})
		require.NoError(t, err)
		for _, x := range out.Executions {
			name := aws.ToString(x.Name)
			i, err := strconv.ParseInt(name[strings.LastIndexByte(name, '-')+1:], 16, 64)
			require.NoError(t, err, name)
			require.Less(t, i, int64(items), name)
			seen[i]++
			require.Equal(t, types.ExecutionStatusSucceeded, x.Status, name)
			listed++
		}
		if token = out.NextToken; token == nil {
			break
		}
	}
	for i, n := range seen {
		require.Equal(t, 1, n, "children of item %d", i)
	}
	require.Equal(t, items, listed)
	mr, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String(mapRun)})
	require.NoError(t, err)
	require.Equal(t, types.MapRunStatusSucceeded, mr.Status)
	n := mr.ItemCounts
	require.Equal(t, int64(items), n.Succeeded)
	require.Equal(t, int64(items), n.Total)
	require.Zero(t, n.Pending+n.Running+n.Failed+n.Aborted+n.TimedOut)
	e := mr.ExecutionCounts
	require.Equal(t, int64(items), e.Succeeded)
	require.Equal(t, int64(items), e.Total)
	require.Zero(t, e.Pending+e.Running+e.Failed+e.Aborted+e.TimedOut)
	t.Logf("%s: %d items, %d kills while the run ran, its row showing %s children started; %d children, each item exactly once; %s",
		name, items, len(at), strings.Join(at, ", "), listed, time.Since(began).Round(time.Second))
}

// killSeed is the seed of the kills' random points, logged so that a run
// can be repeated.
func killSeed(t *testing.T) uint64 {
	seed := uint64(killEnv(t, "STEPWISE_MAP_KILL_SEED", int(time.Now().UnixNano()%1e9)))
	t.Logf("STEPWISE_MAP_KILL_SEED=%d", seed)
	return seed
}

// On SQLite: the server killed and restarted on the same file.
func TestDistributedMapKills(t *testing.T) {
	t.Parallel()
	items := killEnv(t, "STEPWISE_MAP_KILL_ITEMS", 20000)
	if testing.Short() {
		items = 2000
	}
	runs, kills := killEnv(t, "STEPWISE_MAP_KILL_RUNS", 1), killEnv(t, "STEPWISE_MAP_KILL_KILLS", 3)
	rnd := rand.New(rand.NewPCG(killSeed(t), 0))
	moto := integrationtest.Moto(t)
	putKillRows(t, moto, items)
	for run := range runs {
		db := filepath.Join(t.TempDir(), fmt.Sprintf("kills-%d.db", run))
		s := startServer(t, db, "--aws-endpoint", moto)
		tg := killTarget{
			client: func() *sfn.Client { return s.client(t) },
			crash: func(int) {
				s.kill()
				s = startServer(t, db, "--aws-endpoint", moto)
			},
		}
		mapKillRun(t, tg, fmt.Sprintf("kills%d", run), items, kills, rnd)
		s.kill()
	}
}

// On PostgreSQL with two nodes: the nodes killed in turn (the first
// kill is of the node that runs the parent and its map run), each
// started again at once; the other node, or the restarted one, takes
// the run over.
func TestDistributedMapKillsFailover(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	items := killEnv(t, "STEPWISE_MAP_KILL_ITEMS", 20000)
	if testing.Short() {
		items = 2000
	}
	runs, kills := killEnv(t, "STEPWISE_MAP_KILL_RUNS", 1), killEnv(t, "STEPWISE_MAP_KILL_KILLS", 3)
	rnd := rand.New(rand.NewPCG(killSeed(t), 0))
	moto := integrationtest.Moto(t)
	putKillRows(t, moto, items)
	ns := startNodes(t, db, 2, "--aws-endpoint", moto, "--lease", "2s")
	tg := killTarget{
		client: func() *sfn.Client { return ns.client(0) },
		crash: func(k int) {
			ns.kill(k % 2)
			ns.start(k % 2)
		},
	}
	for run := range runs {
		mapKillRun(t, tg, fmt.Sprintf("kills%d", run), items, kills, rnd)
	}
}
