package awssdk_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine"
	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// A Map state's ItemReader reads through the registry's S3 client: an
// object parsed by its ReaderConfig, or the objects a listing names, page
// after page; a missing object fails the read.
func TestItemReaderOnMoto(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	b := setup(t, moto)
	b.ok(t, "s3", "createBucket", `{"Bucket": "items"}`)
	// The file's bytes, put as they are with a plain HTTP PUT.
	put, err := http.NewRequest(http.MethodPut, moto+"/items/rows.csv", strings.NewReader("id,name\n1,a\n2,b\n3,c\n"))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(put)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for i := range 3 {
		b.ok(t, "s3", "putObject", fmt.Sprintf(`{"Bucket": "items", "Key": "dir/%d.json", "Body": "{}"}`, i))
	}
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoint: moto})
	require.NoError(t, err)
	read := func(resource, params string, cfg interp.ReaderConfig) engine.TaskResult {
		p, err := jsonvalue.ParseString(params)
		require.NoError(t, err)
		ch := make(chan engine.TaskResult, 1)
		reg.Run(context.Background(), &engine.Task{ExecutionArn: "arn:x", ID: "reader", Request: &interp.TaskRequest{
			Resource: resource, Parameters: p, Reader: &cfg}}, func(r engine.TaskResult) { ch <- r })
		select {
		case r := <-ch:
			return r
		case <-time.After(30 * time.Second):
			t.Fatal("no answer")
			return engine.TaskResult{}
		}
	}

	res := read("arn:aws:states:::s3:getObject", `{"Bucket": "items", "Key": "rows.csv"}`, interp.ReaderConfig{InputType: "CSV", MaxItems: 2})
	require.Nil(t, res.Failure)
	require.Equal(t, `[{"id":"1","name":"a"},{"id":"2","name":"b"}]`, jsonvalue.String(res.Output))

	// Another partition's ARN names the same reader.
	res = read("arn:aws-cn:states:::s3:listObjectsV2", `{"Bucket": "items", "Prefix": "dir/", "MaxKeys": 2}`, interp.ReaderConfig{})
	require.Nil(t, res.Failure)
	listed, _ := res.Output.([]any)
	require.Len(t, listed, 3, "every page of the listing")
	var keys []string
	for _, it := range listed {
		k, _ := it.(*jsonvalue.Object).Get("Key")
		keys = append(keys, k.(string))
	}
	require.Equal(t, "dir/0.json dir/1.json dir/2.json", strings.Join(keys, " "))

	res = read("arn:aws:states:::s3:getObject", `{"Bucket": "items", "Key": "missing.csv"}`, interp.ReaderConfig{InputType: "CSV"})
	require.NotNil(t, res.Failure)
	require.Contains(t, res.Failure.Name, "NoSuchKey")

	res = read("arn:aws:states:::s3:putObject", `{}`, interp.ReaderConfig{})
	require.Equal(t, stepwisetype.ErrorItemReaderFailed, res.Failure.Name)
}
