package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

// reading is a row of the Parquet objects the test puts in S3.
type reading struct {
	ID     int64     `parquet:"id"`
	Sensor string    `parquet:"sensor"`
	Value  float64   `parquet:"value"`
	At     time.Time `parquet:"at,timestamp(millisecond)"`
}

// readings are n rows from id first on, and the JSON items they read as.
func readings(first, n int) ([]reading, []string) {
	rows := make([]reading, n)
	items := make([]string, n)
	for i := range rows {
		id := first + i
		at := time.Date(2025, 9, 1, 0, 0, id%60, 0, time.UTC)
		rows[i] = reading{ID: int64(id), Sensor: fmt.Sprintf("s-%d", id%7), Value: float64(id) / 4, At: at}
		v, _ := json.Marshal(float64(id) / 4)
		items[i] = fmt.Sprintf(`{"id":%d,"sensor":"s-%d","value":%s,"at":"%s"}`, id, id%7, v, at.Format(time.RFC3339))
	}
	return rows, items
}

// parquetObject writes rows as a Parquet file, rowsPerGroup to a row
// group.
func parquetObject(t *testing.T, rows []reading, rowsPerGroup int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[reading](&buf, parquet.MaxRowsPerRowGroup(rowsPerGroup))
	_, err := w.Write(rows)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// distributedOver is a machine whose distributed Map reads its items with
// readerConfig from the object the input's bucket and key name, each
// child passing its item on.
func distributedOver(readerConfig string) string {
	return `{"StartAt": "M", "States": {"M": {"Type": "Map", "Label": "Rows", "MaxConcurrency": 20,
		"ItemReader": {"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": ` + readerConfig + `,
			"Parameters": {"Bucket.$": "$.bucket", "Key.$": "$.key"}},
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Pass",
			"States": {"Pass": {"Type": "Pass", "End": true}}},
		"End": true}}}`
}

// The distributed Map's 2025 data plane against a server and S3 (moto):
// a Parquet object's rows are the items of a map run that succeeds; an
// Athena data manifest names Parquet data files read in turn (MaxItems
// across them); a listing's objects are read in turn (LOAD_AND_FLATTEN);
// ItemsPointer takes the array (or the object's members)
// inside a JSON object; what cannot be read (not Parquet, not what the
// pointer names, not a manifest) fails the read as
// States.ItemReaderFailed;
// a ReaderConfig that reads nothing is refused at creation; and /metrics
// shows the open map runs, their limit and the backlog.
func TestDistributedMapParquetAthenaItemsPointer(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	s := startServer(t, filepath.Join(t.TempDir(), "parquet.db"), "--aws-endpoint", moto)
	c := s.client(t)
	ctx := context.Background()
	s3Do(t, http.MethodPut, moto+"/data", nil)

	run := func(sm, input string) *sfn.DescribeExecutionOutput {
		t.Helper()
		start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Input: aws.String(input)})
		require.NoError(t, err)
		return waitExecution(t, c, *start.ExecutionArn, 2*time.Minute)
	}
	succeeded := func(d *sfn.DescribeExecutionOutput, want []string) {
		t.Helper()
		require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
		require.JSONEq(t, "["+strings.Join(want, ",")+"]", *d.Output)
	}

	// A Parquet object of 120 rows in five row groups.
	rows, items := readings(1, 120)
	s3Do(t, http.MethodPut, moto+"/data/sensors/part-0.parquet", bytes.NewReader(parquetObject(t, rows, 25)))
	parquetSM := createMachine(t, c, "parquet", distributedOver(`{"InputType": "PARQUET"}`))
	d := run(parquetSM, `{"bucket": "data", "key": "sensors/part-0.parquet"}`)
	succeeded(d, items)
	runs, err := c.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: d.ExecutionArn})
	require.NoError(t, err)
	require.Len(t, runs.MapRuns, 1)
	mr, err := c.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: runs.MapRuns[0].MapRunArn})
	require.NoError(t, err)
	require.Equal(t, types.MapRunStatusSucceeded, mr.Status)
	require.Equal(t, int64(120), mr.ItemCounts.Total)
	require.Equal(t, int64(120), mr.ExecutionCounts.Succeeded, "a child per row")

	// An Athena UNLOAD's manifest names its data files; MaxItems counts
	// across them.
	first, firstItems := readings(1000, 3)
	second, secondItems := readings(2000, 4)
	s3Do(t, http.MethodPut, moto+"/data/athena/q1/part-a", bytes.NewReader(parquetObject(t, first, 2)))
	s3Do(t, http.MethodPut, moto+"/data/athena/q1/part-b", bytes.NewReader(parquetObject(t, second, 2)))
	s3Do(t, http.MethodPut, moto+"/data/athena/q1-manifest.csv",
		strings.NewReader("s3://data/athena/q1/part-a\ns3://data/athena/q1/part-b\n"))
	athenaSM := createMachine(t, c, "athena", distributedOver(`{"InputType": "PARQUET", "ManifestType": "ATHENA_DATA", "MaxItems": 5}`))
	succeeded(run(athenaSM, `{"bucket": "data", "key": "athena/q1-manifest.csv"}`), append(firstItems, secondItems[:2]...))

	// The array inside a JSON object.
	s3Do(t, http.MethodPut, moto+"/data/export.json", strings.NewReader(`{"export": {"count": 2, "rows": [{"n": 1}, {"n": 2}]}}`))
	pointerSM := createMachine(t, c, "pointer", distributedOver(`{"InputType": "JSON", "ItemsPointer": "/export/rows"}`))
	succeeded(run(pointerSM, `{"bucket": "data", "key": "export.json"}`), []string{`{"n":1}`, `{"n":2}`})

	// A listing's objects, each read as its InputType says, a folder's
	// marker skipped (Transformation LOAD_AND_FLATTEN).
	s3Do(t, http.MethodPut, moto+"/data/daily/", nil)
	s3Do(t, http.MethodPut, moto+"/data/daily/1.jsonl", strings.NewReader("{\"d\":1}\n{\"d\":2}\n"))
	s3Do(t, http.MethodPut, moto+"/data/daily/2.jsonl", strings.NewReader("{\"d\":3}\n"))
	flattenSM := createMachine(t, c, "flatten", strings.Replace(strings.Replace(
		distributedOver(`{"InputType": "JSONL", "Transformation": "LOAD_AND_FLATTEN"}`),
		"s3:getObject", "s3:listObjectsV2", 1), `"Key.$": "$.key"`, `"Prefix.$": "$.prefix"`, 1))
	succeeded(run(flattenSM, `{"bucket": "data", "prefix": "daily/"}`), []string{`{"d":1}`, `{"d":2}`, `{"d":3}`})

	// An object's members are items too, as AWS iterates an object.
	s3Do(t, http.MethodPut, moto+"/data/by-name.json", strings.NewReader(`{"export": {"rows": {"north": 1, "south": 2}}}`))
	succeeded(run(pointerSM, `{"bucket": "data", "key": "by-name.json"}`), []string{`{"Key":"north","Value":1}`, `{"Key":"south","Value":2}`})

	// What cannot be read fails the Map state as AWS's reader fails it.
	s3Do(t, http.MethodPut, moto+"/data/athena/q2-manifest.csv", strings.NewReader("s3://data/athena/q1/part-a\ns3://data/athena/q2/gone\n"))
	s3Do(t, http.MethodPut, moto+"/data/count.json", strings.NewReader(`{"export": {"rows": 2}}`))
	for _, c := range []struct{ sm, key, cause string }{
		{parquetSM, "export.json", "The object is not a valid Parquet file"},
		{pointerSM, "sensors/part-0.parquet", "Attempting to map over non-iterable node."},
		{pointerSM, "count.json", "Attempting to map over non-iterable node."},
		{pointerSM, "athena/q1-manifest.csv", "Attempting to map over non-iterable node."},
		{athenaSM, "export.json", "The Athena data manifest is not valid: line 1 is not an S3 URI (s3://bucket/key)."},
		{athenaSM, "athena/q2-manifest.csv", "The Athena data manifest names s3://data/athena/q2/gone, which could not be read: S3."},
	} {
		d := run(c.sm, `{"bucket": "data", "key": "`+c.key+`"}`)
		require.Equal(t, types.ExecutionStatusFailed, d.Status, c.key)
		require.Equal(t, "States.ItemReaderFailed", aws.ToString(d.Error), c.key)
		require.Contains(t, aws.ToString(d.Cause), c.cause, c.key)
	}
	s3Do(t, http.MethodPut, moto+"/data/elsewhere.json", strings.NewReader(`{"other": []}`))
	d = run(pointerSM, `{"bucket": "data", "key": "elsewhere.json"}`)
	require.Equal(t, types.ExecutionStatusFailed, d.Status)
	require.Equal(t, "States.ItemReaderFailed", aws.ToString(d.Error))
	require.Equal(t, "The provided ReaderConfig.ItemsPointer does not match any valid path in the JSON structure.", aws.ToString(d.Cause))

	// A ReaderConfig that reads nothing is refused when it is created.
	_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("bad"), RoleArn: aws.String(roleArn),
		Definition: aws.String(distributedOver(`{"InputType": "MANIFEST", "ManifestType": "ATHENA_DATA"}`))})
	require.ErrorContains(t, err, "InvalidDefinition")
	require.ErrorContains(t, err, "ManifestType ATHENA_DATA requires InputType to be one of the following: [CSV, JSONL, PARQUET]")

	// Every map run ended: none is open, none waits.
	families := scrape(t, s)
	gauge := func(name string) float64 {
		f := families[name]
		require.NotNil(t, f, name)
		return f.Metric[0].GetGauge().GetValue()
	}
	require.Equal(t, float64(1000), gauge("stepwise_open_map_run_limit"))
	require.Zero(t, gauge("stepwise_open_map_runs"))
	require.Zero(t, gauge("stepwise_map_run_backlog_size"))
}
