package awssdk_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/interp"
	"stepwise/jsonvalue"
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
	read := func(resource, params string, cfg interp.ReaderConfig) task.Result {
		p, err := jsonvalue.ParseString(params)
		require.NoError(t, err)
		ch := make(chan task.Result, 1)
		reg.ReadItems(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "reader", Request: &interp.TaskRequest{
			Resource: resource, Parameters: p, Reader: &cfg}}, func(r task.Result) { ch <- r })
		select {
		case r := <-ch:
			return r
		case <-time.After(30 * time.Second):
			t.Fatal("no answer")
			return task.Result{}
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
	require.Equal(t, failure.ItemReaderFailed, res.Failure.Name)

	// An S3 inventory: the manifest names gzip-compressed CSV data files
	// in the destination bucket; each line is an item of the schema.
	b.ok(t, "s3", "createBucket", `{"Bucket": "inventory"}`)
	gz := func(text string) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, err := zw.Write([]byte(text))
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		return buf.Bytes()
	}
	putRaw := func(key string, body []byte) {
		req, err := http.NewRequest(http.MethodPut, moto+"/inventory/"+key, bytes.NewReader(body))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	putRaw("data/a.csv.gz", gz("\"items\",\"dir/0.json\",\"2\"\n\"items\",\"dir/1.json\",\"2\"\n"))
	putRaw("data/b.csv.gz", gz("\"items\",\"rows.csv\",\"21\"\n"))
	putRaw("manifest.json", []byte(`{"sourceBucket": "items", "destinationBucket": "arn:aws:s3:::inventory", "version": "2016-11-30",
		"fileFormat": "CSV", "fileSchema": "Bucket, Key, Size",
		"files": [{"key": "data/a.csv.gz", "size": 40, "MD5checksum": "x"}, {"key": "data/b.csv.gz", "size": 30, "MD5checksum": "y"}]}`))
	res = read("arn:aws:states:::s3:getObject", `{"Bucket": "inventory", "Key": "manifest.json"}`, interp.ReaderConfig{InputType: "MANIFEST"})
	require.Nil(t, res.Failure)
	require.Equal(t, `[{"Bucket":"items","Key":"dir/0.json","Size":"2"},{"Bucket":"items","Key":"dir/1.json","Size":"2"},`+
		`{"Bucket":"items","Key":"rows.csv","Size":"21"}]`, jsonvalue.String(res.Output))
	res = read("arn:aws:states:::s3:getObject", `{"Bucket": "inventory", "Key": "manifest.json"}`, interp.ReaderConfig{InputType: "MANIFEST", MaxItems: 2})
	require.Nil(t, res.Failure)
	require.Len(t, res.Output, 2)
	putRaw("orc.json", []byte(`{"destinationBucket": "arn:aws:s3:::inventory", "fileFormat": "ORC", "fileSchema": "x", "files": []}`))
	res = read("arn:aws:states:::s3:getObject", `{"Bucket": "inventory", "Key": "orc.json"}`, interp.ReaderConfig{InputType: "MANIFEST"})
	require.Equal(t, failure.ItemReaderFailed, res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "only CSV inventories")
}
