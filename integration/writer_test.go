package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/integration"
	"stepwise/interp"
	"stepwise/interp/maprun"
)

// Without the aws-sdk S3 client (not linked into this test), a
// ResultWriter fails with States.ResultWriterFailed, naming where it
// would have written.
func TestResultWriterWithoutS3Client(t *testing.T) {
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012"})
	require.NoError(t, err)
	ch := make(chan task.Result, 1)
	w := &maprun.Write{Resource: "arn:aws:states:::s3:putObject", Bucket: "b", Prefix: "p",
		OutputType: "JSON", MapRunArn: "arn:aws:states:us-east-1:123456789012:mapRun:sm/Map:run1",
		Files: map[string][]any{"SUCCEEDED": {"x"}}}
	reg.WriteResults(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "writer",
		Request: &interp.TaskRequest{Resource: w.Resource, Write: w}}, func(r task.Result) { ch <- r })
	select {
	case r := <-ch:
		require.NotNil(t, r.Failure)
		require.Equal(t, failure.ResultWriterFailed, r.Failure.Name)
		require.Equal(t, "No S3 client is configured to write the results to s3://b/p/run1/SUCCEEDED_0.json.", r.Failure.Cause)
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
}
