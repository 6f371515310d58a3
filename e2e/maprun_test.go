package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/testwait"
)

// waitChildren waits until an execution's (first) map run has started at
// least n children, and returns the map run's ARN.
func waitChildren(t *testing.T, c *sfn.Client, executionArn string, n int) *string {
	t.Helper()
	ctx := context.Background()
	var mapRun *string
	testwait.Until(t, func() bool {
		runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: aws.String(executionArn)})
		require.NoError(t, err)
		if len(runs.MapRuns) == 0 {
			return false
		}
		mapRun = runs.MapRuns[0].MapRunArn
		out, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: mapRun})
		require.NoError(t, err)
		return len(out.Executions) >= n
	}, 30*time.Second, 20*time.Millisecond)
	return mapRun
}

// s3Do sends an S3 request to moto, signed as the server's S3 client
// signs, and returns the body.
func s3Do(t testing.TB, method, url string, body io.Reader) []byte {
	t.Helper()
	var data []byte
	if body != nil {
		var err error
		data, err = io.ReadAll(body)
		require.NoError(t, err)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(data))
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, hash, "s3", "us-east-1", time.Now()))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %s", method, url, out)
	return out
}

func waitExecution(t testing.TB, c *sfn.Client, arn string, within time.Duration) *sfn.DescribeExecutionOutput {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		d, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err)
		if d.Status != types.ExecutionStatusRunning {
			return d
		}
		require.True(t, time.Now().Before(deadline), "execution %s still running", arn)
		time.Sleep(50 * time.Millisecond)
	}
}

// A distributed Map over a 100,000-line CSV in S3 (moto), in batches of
// 100: 1% of the items (the batches whose first id is a multiple of
// 10,000) fail under
// a tolerance of 5%, the results go to S3 through a ResultWriter, and an
// UpdateMapRun lowers the concurrency while the run is under way.
func TestDistributedMapCSV(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	s := startServer(t, filepath.Join(t.TempDir(), "maprun.db"), "--aws-endpoint", moto, "--wait-time-scale", "0.1")
	c := s.client(t)
	ctx := context.Background()

	s3Do(t, http.MethodPut, moto+"/rows", nil)
	s3Do(t, http.MethodPut, moto+"/results", nil)
	var csv strings.Builder
	csv.WriteString("id,name\n")
	for i := range 100_000 {
		fmt.Fprintf(&csv, "%d,item-%d\n", i, i)
	}
	s3Do(t, http.MethodPut, moto+"/rows/rows.csv", strings.NewReader(csv.String()))

	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "Label": "Rows",
		"ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"},
			"Parameters": {"Bucket": "rows", "Key": "rows.csv"}},
		"ItemBatcher": {"MaxItemsPerBatch": 100, "BatchInput": {"run.$": "$.run"}},
		"MaxConcurrency": 100, "ToleratedFailurePercentage": 5,
		"ResultWriter": {"Resource": "arn:aws:states:::s3:putObject", "Parameters": {"Bucket": "results", "Prefix": "out"}},
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Work", "States": {
			"Work": {"Type": "Wait", "Seconds": 1, "Next": "Check"},
			"Check": {"Type": "Choice", "Choices": [{"Or": [{"Variable": "$.Items[0].id", "StringMatches": "*0000"},
				{"Variable": "$.Items[0].id", "StringEquals": "0"}], "Next": "Bad"}], "Default": "Done"},
			"Bad": {"Type": "Fail", "Error": "BadBatch", "Cause": "the batch starts at a round id"},
			"Done": {"Type": "Pass", "Parameters": {"n.$": "States.ArrayLength($.Items)", "run.$": "$.BatchInput.run"}, "End": true}}},
		"End": true}}}`
	sm := createMachine(t, c, "csv", def)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`{"run": "nightly"}`)})
	require.NoError(t, err)

	// The map run appears once the items are read.
	var mapRun string
	testwait.Until(t, func() bool {
		runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
		require.NoError(t, err)
		if len(runs.MapRuns) == 1 {
			mapRun = *runs.MapRuns[0].MapRunArn
			require.Equal(t, sm+"/Rows", *runs.MapRuns[0].StateMachineArn)
		}
		return mapRun != ""
	}, 30*time.Second, 20*time.Millisecond)

	// Lower the concurrency while children run: after that, no more than
	// twenty run at once.
	testwait.Until(t, func() bool {
		d, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String(mapRun)})
		require.NoError(t, err)
		return d.ExecutionCounts.Succeeded > 0
	}, 30*time.Second, 20*time.Millisecond)
	_, err = c.UpdateMapRun(ctx, &sfn.UpdateMapRunInput{MapRunArn: aws.String(mapRun), MaxConcurrency: aws.Int32(20)})
	require.NoError(t, err)
	// The children started before the update end; then no more than
	// twenty run at once.
	testwait.Until(t, func() bool {
		running, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: aws.String(mapRun), StatusFilter: types.ExecutionStatusRunning, MaxResults: 1000})
		require.NoError(t, err)
		return len(running.Executions) <= 20
	}, time.Minute, 20*time.Millisecond)
	for range 5 {
		running, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: aws.String(mapRun), StatusFilter: types.ExecutionStatusRunning, MaxResults: 1000})
		require.NoError(t, err)
		require.LessOrEqual(t, len(running.Executions), 20)
		time.Sleep(30 * time.Millisecond)
	}

	d := waitExecution(t, c, *start.ExecutionArn, 3*time.Minute)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	var out struct {
		MapRunArn           string
		ResultWriterDetails struct{ Bucket, Key string }
	}
	require.NoError(t, json.Unmarshal([]byte(*d.Output), &out))
	require.Equal(t, mapRun, out.MapRunArn)
	require.Equal(t, "results", out.ResultWriterDetails.Bucket)
	id := mapRun[strings.LastIndexByte(mapRun, ':')+1:]
	require.Equal(t, "out/"+id+"/manifest.json", out.ResultWriterDetails.Key)

	mr, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String(mapRun)})
	require.NoError(t, err)
	require.Equal(t, types.MapRunStatusSucceeded, mr.Status)
	require.Equal(t, int32(20), mr.MaxConcurrency)
	require.Equal(t, float32(5), mr.ToleratedFailurePercentage)
	require.Equal(t, int64(100_000), mr.ItemCounts.Total)
	require.Equal(t, int64(99_000), mr.ItemCounts.Succeeded)
	require.Equal(t, int64(1_000), mr.ItemCounts.Failed)
	require.Equal(t, int64(1_000), mr.ExecutionCounts.Total)
	require.Equal(t, int64(990), mr.ExecutionCounts.Succeeded)
	require.Equal(t, int64(10), mr.ExecutionCounts.Failed)

	// The children are listed by the map run, with their own histories.
	var children int
	p := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{MapRunArn: aws.String(mapRun), MaxResults: 1000})
	var child string
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		require.NoError(t, err)
		children += len(page.Executions)
		child = *page.Executions[0].ExecutionArn
		require.Equal(t, mapRun, *page.Executions[0].MapRunArn)
	}
	require.Equal(t, 1000, children)
	require.True(t, strings.HasPrefix(child, "arn:aws:states:us-east-1:123456789012:execution:csv/Rows:"), child)
	cd, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(child)})
	require.NoError(t, err)
	require.Equal(t, mapRun, *cd.MapRunArn)
	require.Equal(t, []string{"1 ExecutionStarted", "2 WaitStateEntered"}, historyTypes(t, c, child)[:2])

	// The parent's history is AWS's: the run's events, not the children's.
	require.Equal(t, []string{"1 ExecutionStarted", "2 MapStateEntered", "3 MapStateStarted", "4 MapRunStarted",
		"5 MapRunSucceeded", "6 MapStateSucceeded", "7 MapStateExited", "8 ExecutionSucceeded"}, historyTypes(t, c, *start.ExecutionArn))

	// The result files: the manifest names them, the failed batches are
	// written with their errors, the others with their outputs.
	var manifest struct {
		DestinationBucket string
		MapRunArn         string
		ResultFiles       map[string][]struct {
			Key  string
			Size int64
		}
	}
	require.NoError(t, json.Unmarshal(s3Do(t, http.MethodGet, moto+"/results/"+out.ResultWriterDetails.Key, nil), &manifest))
	require.Equal(t, "results", manifest.DestinationBucket)
	require.Equal(t, mapRun, manifest.MapRunArn)
	require.Len(t, manifest.ResultFiles["SUCCEEDED"], 1)
	require.Len(t, manifest.ResultFiles["FAILED"], 1)
	var succeeded, failed []map[string]any
	require.NoError(t, json.Unmarshal(s3Do(t, http.MethodGet, moto+"/results/"+manifest.ResultFiles["SUCCEEDED"][0].Key, nil), &succeeded))
	require.NoError(t, json.Unmarshal(s3Do(t, http.MethodGet, moto+"/results/"+manifest.ResultFiles["FAILED"][0].Key, nil), &failed))
	require.Len(t, succeeded, 990)
	require.Len(t, failed, 10)
	require.Equal(t, "SUCCEEDED", succeeded[0]["Status"])
	require.JSONEq(t, `{"n": 100, "run": "nightly"}`, succeeded[0]["Output"].(string))
	require.Equal(t, "FAILED", failed[0]["Status"])
	require.Equal(t, "BadBatch", failed[0]["Error"])
}

// A parent whose map run failed is redriven: the map run is redriven with
// it (MapRunRedriven), and only its children that did not succeed run
// again, alongside those never started.
func TestDistributedMapRedrive(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "redrive.db"))
	c := s.client(t)
	ctx := context.Background()
	// Items 0, 5, 10 and 15 fail on a child's first run (their state
	// reads text that is not JSON), and pass once the child is redriven
	// (the same state reads the next text); three failures are tolerated,
	// the fourth fails the run with items 16 to 19 never started.
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "MaxConcurrency": 1, "ToleratedFailureCount": 3,
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P", "States": {
			"P": {"Type": "Pass", "Parameters": {"i.$": "$.i",
				"v.$": "States.StringToJson(States.ArrayGetItem($.seq, $$.Execution.RedriveCount))"}, "End": true}}},
		"End": true}}}`
	sm := createMachine(t, c, "flaky", def)
	var items []string
	for i := range 20 {
		seq := `["1", "1"]`
		if i%5 == 0 {
			seq = `["not json", "1"]`
		}
		items = append(items, fmt.Sprintf(`{"i": %d, "seq": %s}`, i, seq))
	}
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String("[" + strings.Join(items, ",") + "]")})
	require.NoError(t, err)
	d := waitExecution(t, c, *start.ExecutionArn, time.Minute)
	require.Equal(t, types.ExecutionStatusFailed, d.Status)
	require.Equal(t, "States.ExceedToleratedFailureThreshold", *d.Error)

	runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
	require.NoError(t, err)
	require.Len(t, runs.MapRuns, 1)
	mapRun := runs.MapRuns[0].MapRunArn
	mr, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: mapRun})
	require.NoError(t, err)
	require.Equal(t, types.MapRunStatusFailed, mr.Status)
	require.Equal(t, int64(4), mr.ExecutionCounts.Failed)
	require.Equal(t, int64(12), mr.ExecutionCounts.Succeeded)
	require.Equal(t, int64(4), mr.ExecutionCounts.Pending)

	before := map[string]time.Time{}
	list := func() []types.ExecutionListItem {
		out, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: mapRun, MaxResults: 100})
		require.NoError(t, err)
		return out.Executions
	}
	for _, x := range list() {
		before[*x.ExecutionArn] = *x.StartDate
		if x.Status != types.ExecutionStatusFailed {
			continue
		}
		// A failed child is redriven with its map run, not on its own.
		cd, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		require.NoError(t, err)
		require.Equal(t, types.ExecutionRedriveStatusRedrivableByMapRun, cd.RedriveStatus)
		_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: x.ExecutionArn})
		var notRedrivable *types.ExecutionNotRedrivable
		require.True(t, errors.As(err, &notRedrivable), "got %v", err)
	}
	require.Len(t, before, 16)

	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: start.ExecutionArn})
	require.NoError(t, err)
	d = waitExecution(t, c, *start.ExecutionArn, time.Minute)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	var out []map[string]int
	require.NoError(t, json.Unmarshal([]byte(*d.Output), &out))
	require.Len(t, out, 20)
	for i, o := range out {
		require.Equal(t, i, o["i"])
	}
	require.Equal(t, []string{"1 ExecutionStarted", "2 MapStateEntered", "3 MapStateStarted", "4 MapRunStarted", "5 MapRunFailed",
		"6 MapStateFailed", "7 ExecutionFailed", "8 ExecutionRedriven", "9 MapRunRedriven", "10 MapRunSucceeded",
		"11 MapStateSucceeded", "12 MapStateExited", "13 ExecutionSucceeded"}, historyTypes(t, c, *start.ExecutionArn))

	after := list()
	require.Len(t, after, 20)
	redriven := 0
	for _, x := range after {
		was, seen := before[*x.ExecutionArn]
		switch {
		case !seen: // started on the redrive
			require.Nil(t, x.RedriveCount, "listed with no redrive count before a redrive")
		case aws.ToInt32(x.RedriveCount) == 1:
			redriven++
		default:
			require.Nil(t, x.RedriveCount)
			require.True(t, was.Equal(*x.StartDate), "a child that succeeded ran again")
		}
	}
	require.Equal(t, 4, redriven)
	mr, err = c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: mapRun})
	require.NoError(t, err)
	require.Equal(t, types.MapRunStatusSucceeded, mr.Status)
	require.Equal(t, int32(1), *mr.RedriveCount)
	require.NotNil(t, mr.RedriveDate)
	require.Equal(t, int64(20), mr.ExecutionCounts.Succeeded)
}

// A map run under way when the server is killed carries on after the
// restart: the children that ran are found again (none started twice),
// those never started are started, and the parent gets every result.
func TestDistributedMapRestart(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "restart.db")
	s := startServer(t, db)
	c := s.client(t)
	ctx := context.Background()
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "MaxConcurrency": 4,
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "W", "States": {
			"W": {"Type": "Wait", "Seconds": 1, "Next": "P"},
			"P": {"Type": "Pass", "Parameters": {"twice.$": "States.MathAdd($, $)"}, "End": true}}},
		"End": true}}}`
	sm := createMachine(t, c, "restart", def)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String("[0,1,2,3,4,5,6,7,8,9,10,11]")})
	require.NoError(t, err)
	mapRun := waitChildren(t, c, *start.ExecutionArn, 4)
	s.kill()

	s = startServer(t, db)
	c = s.client(t)
	d := waitExecution(t, c, *start.ExecutionArn, time.Minute)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	require.JSONEq(t, `[{"twice":0},{"twice":2},{"twice":4},{"twice":6},{"twice":8},{"twice":10},{"twice":12},{"twice":14},{"twice":16},{"twice":18},{"twice":20},{"twice":22}]`, *d.Output)
	out, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: mapRun})
	require.NoError(t, err)
	require.Len(t, out.Executions, 12)
	for _, x := range out.Executions {
		require.Equal(t, types.ExecutionStatusSucceeded, x.Status)
	}
	mr, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: mapRun})
	require.NoError(t, err)
	require.Equal(t, types.MapRunStatusSucceeded, mr.Status)
	require.Equal(t, int64(12), mr.ItemCounts.Succeeded)
}

// Stopping the parent stops its map run: the children running (EXPRESS
// ones here, with their express ARNs) are aborted, the rest never start,
// and the run is ABORTED with those counts.
func TestDistributedMapStop(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "stop.db"))
	c := s.client(t)
	ctx := context.Background()
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "MaxConcurrency": 2,
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"}, "StartAt": "W", "States": {
			"W": {"Type": "Wait", "Seconds": 300, "End": true}}},
		"End": true}}}`
	sm := createMachine(t, c, "stopped", def)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String("[1,2,3,4,5,6]")})
	require.NoError(t, err)
	mapRun := waitChildren(t, c, *start.ExecutionArn, 2)
	_, err = c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: start.ExecutionArn})
	require.NoError(t, err)
	testwait.Until(t, func() bool {
		out, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: mapRun})
		require.NoError(t, err)
		for _, x := range out.Executions {
			require.True(t, strings.HasPrefix(*x.ExecutionArn, "arn:aws:states:us-east-1:123456789012:express:stopped/M:"), *x.ExecutionArn)
			if x.Status != types.ExecutionStatusAborted {
				return false
			}
		}
		return len(out.Executions) == 2
	}, 30*time.Second, 20*time.Millisecond)
	// The run's row is written once its children are stopped.
	var mr *sfn.DescribeMapRunOutput
	testwait.Until(t, func() bool {
		mr, err = c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: mapRun})
		require.NoError(t, err)
		return mr.Status != types.MapRunStatusRunning
	}, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, types.MapRunStatusAborted, mr.Status)
	require.NotNil(t, mr.StopDate)
	require.Equal(t, int64(2), mr.ExecutionCounts.Aborted)
	require.Equal(t, int64(4), mr.ExecutionCounts.Pending)
	require.Equal(t, int64(0), mr.ExecutionCounts.Running)
	require.Equal(t, []string{"1 ExecutionStarted", "2 MapStateEntered", "3 MapStateStarted", "4 MapRunStarted", "5 ExecutionAborted"},
		historyTypes(t, c, *start.ExecutionArn))
}

// On PostgreSQL with two nodes, a map run whose node is killed is taken
// over with its parent: the children the dead node ran are claimed like
// any orphan, their ends reach the run on the node that took it, and no
// child starts twice.
func TestDistributedMapFailover(t *testing.T) {
	t.Parallel()
	ns := startNodes(t, pgtest.NewDatabase(t), 2)
	c := ns.client(0)
	ctx := context.Background()
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "MaxConcurrency": 3,
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "W", "States": {
			"W": {"Type": "Wait", "Seconds": 2, "Next": "P"},
			"P": {"Type": "Pass", "Parameters": {"twice.$": "States.MathAdd($, $)"}, "End": true}}},
		"End": true}}}`
	sm := createMachine(t, c, "failover", def)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String("[0,1,2,3,4,5,6,7,8]")})
	require.NoError(t, err)
	mapRun := waitChildren(t, c, *start.ExecutionArn, 3)
	ns.kill(0)

	c = ns.client(1)
	d := waitExecution(t, c, *start.ExecutionArn, 2*time.Minute)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	require.JSONEq(t, `[{"twice":0},{"twice":2},{"twice":4},{"twice":6},{"twice":8},{"twice":10},{"twice":12},{"twice":14},{"twice":16}]`, *d.Output)
	out, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: mapRun})
	require.NoError(t, err)
	require.Len(t, out.Executions, 9)
	mr, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: mapRun})
	require.NoError(t, err)
	require.Equal(t, types.MapRunStatusSucceeded, mr.Status)
	require.Equal(t, int64(9), mr.ExecutionCounts.Succeeded)
}

// A distributed Map inside a child of another runs on
// <machine>/<outer>/<inner>: its children are found again after a
// restart, and describe the inner ItemProcessor. Raising the tolerance of
// a run under way lets it succeed past failures it would have failed on.
func TestDistributedMapNestedAndTolerance(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "nested.db")
	s := startServer(t, db)
	c := s.client(t)
	ctx := context.Background()
	def := `{"StartAt": "Outer", "States": {"Outer": {"Type": "Map",
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Inner", "States": {
			"Inner": {"Type": "Map", "ItemsPath": "$.xs",
				"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "W", "States": {
					"W": {"Type": "Wait", "Seconds": 1, "End": true}}}, "End": true}}},
		"End": true}}}`
	sm := createMachine(t, c, "nest", def)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(`[{"xs": [1, 2]}, {"xs": [3]}]`)})
	require.NoError(t, err)
	var inner *string
	testwait.Until(t, func() bool {
		runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
		require.NoError(t, err)
		if len(runs.MapRuns) == 0 {
			return false
		}
		kids, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: runs.MapRuns[0].MapRunArn})
		require.NoError(t, err)
		for _, k := range kids.Executions {
			in, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: k.ExecutionArn})
			require.NoError(t, err)
			if len(in.MapRuns) > 0 {
				inner = in.MapRuns[0].MapRunArn
				require.Equal(t, sm+"/Outer/Inner", *in.MapRuns[0].StateMachineArn)
				return true
			}
		}
		return false
	}, 30*time.Second, 20*time.Millisecond)
	s.kill()
	s = startServer(t, db)
	c = s.client(t)
	d := waitExecution(t, c, *start.ExecutionArn, time.Minute)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	require.JSONEq(t, `[[1, 2], [3]]`, *d.Output)
	kids, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: inner})
	require.NoError(t, err)
	require.NotEmpty(t, kids.Executions)
	dm, err := c.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: kids.Executions[0].ExecutionArn})
	require.NoError(t, err)
	require.Equal(t, "Inner", *dm.Label)
	require.Equal(t, *inner, *dm.MapRunArn)
	require.JSONEq(t, `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 1, "End": true}}}`, *dm.Definition)

	// Tolerance raised while the run is under way: four of five items
	// fail; with the count raised to four before they end, it succeeds.
	tol := createMachine(t, c, "tol", `{"StartAt": "M", "States": {"M": {"Type": "Map", "MaxConcurrency": 1,
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "W", "States": {
			"W": {"Type": "Wait", "Seconds": 1, "Next": "C"},
			"C": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericGreaterThan": 1, "Next": "F"}], "Default": "P"},
			"F": {"Type": "Fail", "Error": "Big"}, "P": {"Type": "Pass", "End": true}}},
		"End": true}}}`)
	start, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(tol), Input: aws.String(`[1, 2, 3, 4, 5]`)})
	require.NoError(t, err)
	var mapRun *string
	testwait.Until(t, func() bool {
		runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: start.ExecutionArn})
		require.NoError(t, err)
		if len(runs.MapRuns) > 0 {
			mapRun = runs.MapRuns[0].MapRunArn
		}
		return mapRun != nil
	}, 30*time.Second, 20*time.Millisecond)
	_, err = c.UpdateMapRun(ctx, &sfn.UpdateMapRunInput{MapRunArn: mapRun, ToleratedFailureCount: aws.Int64(4)})
	require.NoError(t, err)
	d = waitExecution(t, c, *start.ExecutionArn, time.Minute)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	mr, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: mapRun})
	require.NoError(t, err)
	require.Equal(t, int64(4), mr.ToleratedFailureCount)
	require.Equal(t, int64(4), mr.ItemCounts.Failed)
}

// A ResultWriter with only a WriterConfig transforms the state's output:
// FLATTEN joins the children's array outputs, COMPACT keeps them as they
// are. UpdateMapRun refuses bad settings and a run that ended.
func TestDistributedMapWriterConfigAndUpdateErrors(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "writer.db"))
	c := s.client(t)
	ctx := context.Background()
	for _, tc := range []struct{ transformation, want string }{
		{"FLATTEN", `[1, 2, 3, 4]`},
		{"COMPACT", `[[1, 2], [3, 4]]`},
	} {
		def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "ItemBatcher": {"MaxItemsPerBatch": 2},
			"ResultWriter": {"WriterConfig": {"Transformation": "` + tc.transformation + `", "OutputType": "JSON"}},
			"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P",
				"States": {"P": {"Type": "Pass", "OutputPath": "$.Items", "End": true}}}, "End": true}}}`
		sm := createMachine(t, c, "writer-"+tc.transformation, def)
		x := startExecution(t, c, sm, "run", `[1, 2, 3, 4]`)
		d := waitExecution(t, c, x, 30*time.Second)
		require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
		require.JSONEq(t, tc.want, *d.Output, tc.transformation)

		runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: aws.String(x)})
		require.NoError(t, err)
		_, err = c.UpdateMapRun(ctx, &sfn.UpdateMapRunInput{MapRunArn: runs.MapRuns[0].MapRunArn, ToleratedFailurePercentage: aws.Float32(101)})
		var invalid *types.ValidationException
		require.True(t, errors.As(err, &invalid), "got %v", err)
		require.Contains(t, *invalid.Message, "toleratedFailurePercentage")
		_, err = c.UpdateMapRun(ctx, &sfn.UpdateMapRunInput{MapRunArn: runs.MapRuns[0].MapRunArn, MaxConcurrency: aws.Int32(5)})
		require.True(t, errors.As(err, &invalid), "got %v", err)
		require.Contains(t, *invalid.Message, "not RUNNING")
	}
	_, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String("arn:aws:states:us-east-1:123456789012:mapRun:nope/M:x")})
	var missing *types.ResourceNotFound
	require.True(t, errors.As(err, &missing), "got %v", err)
}
