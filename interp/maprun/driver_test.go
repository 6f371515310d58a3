package maprun_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/integration"
	_ "stepwise/integration/awssdk" // the S3 client the writer uses
	"stepwise/integration/integrationtest"
	"stepwise/interp"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
)

// writerMachine is a distributed Map whose ResultWriter writes to the
// bucket "results" under "runs", one of its three children failing
// within its tolerance.
const writerMachine = `{"StartAt": "M", "States": {"M": {"Type": "Map", "ToleratedFailureCount": 1,
	"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "C",
		"States": {"C": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "F"}], "Default": "P"},
			"P": {"Type": "Pass", "End": true}, "F": {"Type": "Fail", "Error": "Two", "Cause": "two"}}},
	"ResultWriter": {"Resource": "arn:aws:states:::s3:putObject", "Parameters": {"Bucket": "results", "Prefix": "runs"},
		"WriterConfig": {"OutputType": "JSON", "Transformation": "COMPACT"}},
	"End": true}}}`

// runDriver runs writerMachine in-process, as `stepwise run` does, with
// resolver answering its tasks.
func runDriver(t *testing.T, resolver interp.Resolver) *interp.Execution {
	t.Helper()
	m, diags := asl.Parse([]byte(writerMachine))
	require.NotNil(t, m, "%v", diags)
	in, err := jsonvalue.ParseString(`[1, 2, 3]`)
	require.NoError(t, err)
	x := interp.New(m, interp.Info{ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:w:run", Name: "run",
		StartTime: time.Unix(0, 0), StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:w", StateMachineName: "w",
		Region: "us-east-1", Account: "123456789012"}, in, interp.Options{})
	(&interp.Driver{Resolver: resolver, MaxSteps: 1000}).Run(x, time.Unix(0, 0))
	return x
}

// In-process, a ResultWriter's write is a task for the Driver's Resolver
// (TaskRequest.Write), as it is the integrations' on the server: here a
// resolver that keeps the objects in files. The Map's result is the
// manifest's location; the files hold the results, transformed.
func TestDriverResultWriterWrites(t *testing.T) {
	dir := t.TempDir()
	var requests []*interp.TaskRequest
	x := runDriver(t, interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
		requests = append(requests, req)
		require.NotNil(t, req.Write, "the only task is the write")
		for _, o := range req.Write.Objects() {
			path := filepath.Join(dir, req.Write.Bucket, o.Key)
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, o.Body, 0o644))
		}
		return req.Write.Answer(), nil
	}))
	require.Equal(t, history.StatusSucceeded, x.Status, "%+v", x.Failure)
	require.Len(t, requests, 1)
	require.Equal(t, "M", requests[0].StateName)
	require.Equal(t, "arn:aws:states:::s3:putObject", requests[0].Resource)

	out := x.Output.(*jsonvalue.Object)
	mapRunArn, _ := out.Get("MapRunArn")
	require.True(t, strings.HasPrefix(mapRunArn.(string), "arn:aws:states:us-east-1:123456789012:mapRun:w/M:"), mapRunArn)
	details, _ := out.Get("ResultWriterDetails")
	key, _ := details.(*jsonvalue.Object).Get("Key")
	id := mapRunArn.(string)[strings.LastIndexByte(mapRunArn.(string), ':')+1:]
	require.Equal(t, "runs/"+id+"/manifest.json", key)

	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, "results", "runs", id, name))
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, `[1,3]`, read("SUCCEEDED_0.json"))
	failed, err := jsonvalue.ParseString(read("FAILED_0.json"))
	require.NoError(t, err)
	entry := failed.([]any)[0].(*jsonvalue.Object)
	name, _ := entry.Get("Name")
	names := maprun.NewNames(mapRunArn.(string), "us-east-1", "123456789012", "w", "M", false)
	require.Equal(t, names.Name(1), name, "the failed child is named as the engine names it")
	errName, _ := entry.Get("Error")
	require.Equal(t, "Two", errName)
	require.Contains(t, read("manifest.json"), `"DestinationBucket":"results"`)
}

// With the integrations as its Resolver (integration.Registry.Resolve),
// the in-process run writes its results to S3 (moto) as the server does.
func TestDriverResultWriterOnMoto(t *testing.T) {
	moto := integrationtest.Moto(t)
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoint: moto})
	require.NoError(t, err)
	_, fl := reg.Resolve(&interp.TaskRequest{StateName: "setup", Resource: "arn:aws:states:::aws-sdk:s3:createBucket",
		Parameters: mustParse(t, `{"Bucket": "results"}`)})
	require.Nil(t, fl)

	x := runDriver(t, interp.ResolverFunc(reg.Resolve))
	require.Equal(t, history.StatusSucceeded, x.Status, "%+v", x.Failure)
	details, _ := x.Output.(*jsonvalue.Object).Get("ResultWriterDetails")
	key, _ := details.(*jsonvalue.Object).Get("Key")
	dir := strings.TrimSuffix(key.(string), "manifest.json")
	got, fl := reg.Resolve(&interp.TaskRequest{StateName: "check", Resource: "arn:aws:states:::aws-sdk:s3:getObject",
		Parameters: mustParse(t, `{"Bucket": "results", "Key": "`+dir+`SUCCEEDED_0.json"}`)})
	require.Nil(t, fl)
	body, _ := got.(*jsonvalue.Object).Get("Body")
	require.Equal(t, `[1,3]`, body)
}

func mustParse(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonvalue.ParseString(s)
	require.NoError(t, err)
	return v
}
