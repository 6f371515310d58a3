package awssdk_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/interp"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
)

// A Distributed Map's ResultWriter writes, through the registry's S3
// client, one file per status with results under <Prefix>/<map run id>/
// (a JSON array, or JSON Lines), then manifest.json listing them with
// their sizes; the task answers with the manifest's location. A missing
// bucket fails the write with States.ResultWriterFailed.
func TestResultWriterOnMoto(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	b := setup(t, moto)
	b.ok(t, "s3", "createBucket", `{"Bucket": "results"}`)
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoint: moto})
	require.NoError(t, err)
	write := func(w *maprun.Write) task.Result {
		ch := make(chan task.Result, 1)
		reg.WriteResults(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "writer",
			Request: &interp.TaskRequest{Resource: w.Resource, Write: w}}, func(r task.Result) { ch <- r })
		select {
		case r := <-ch:
			return r
		case <-time.After(30 * time.Second):
			t.Fatal("no answer")
			return task.Result{}
		}
	}
	parse := func(s string) any {
		v, err := jsonvalue.ParseString(s)
		require.NoError(t, err)
		return v
	}
	// get reads an object back: its text and its size in bytes.
	get := func(bucket, key string) (string, int64) {
		t.Helper()
		out := b.ok(t, "s3", "getObject", fmt.Sprintf(`{"Bucket": %q, "Key": %q}`, bucket, key))
		n, ok := path(t, out, "ContentLength").(jsonvalue.Number).Int64()
		require.True(t, ok)
		return path(t, out, "Body").(string), n
	}
	fileEntry := func(key, body string) string {
		return fmt.Sprintf(`{"Key":%q,"Size":%d}`, key, len(body))
	}

	t.Run("JSON", func(t *testing.T) {
		const arn = "arn:aws:states:us-east-1:123456789012:mapRun:machine/Map:4977ded7-b097-3bee-81e1-7863c5660f29"
		const dir = "runs/4977ded7-b097-3bee-81e1-7863c5660f29/"
		res := write(&maprun.Write{Resource: "arn:aws:states:::s3:putObject", Bucket: "results", Prefix: "runs",
			OutputType: "JSON", MapRunArn: arn, Files: map[string][]any{
				"SUCCEEDED": {parse(`{"a":1,"s":"x \"q\" é"}`), jsonvalue.Number("2.50"), "str", nil, true, []any{}},
				"FAILED":    {parse(`{"Error":"E","Cause":"c"}`)},
				"PENDING":   {},
			}})
		require.Nil(t, res.Failure)
		require.Equal(t, `{"MapRunArn":"`+arn+`","ResultWriterDetails":{"Bucket":"results","Key":"`+dir+`manifest.json"}}`,
			jsonvalue.String(res.Output))
		require.IsType(t, &jsonvalue.Object{}, res.Output)

		succeeded := `[{"a":1,"s":"x \"q\" é"},2.50,"str",null,true,[]]`
		body, size := get("results", dir+"SUCCEEDED_0.json")
		require.Equal(t, succeeded, body)
		require.Equal(t, int64(len(succeeded)), size, "the object is the text as it is, not quoted")
		failed := `[{"Error":"E","Cause":"c"}]`
		body, _ = get("results", dir+"FAILED_0.json")
		require.Equal(t, failed, body)
		_, f := b.call(t, "s3", "getObject", `{"Bucket": "results", "Key": "`+dir+`PENDING_0.json"}`)
		require.NotNil(t, f, "a status without results has no file")
		require.Contains(t, f.Name, "NoSuchKey")

		manifest, _ := get("results", dir+"manifest.json")
		require.Equal(t, `{"DestinationBucket":"results","MapRunArn":"`+arn+`","ResultFiles":{`+
			`"FAILED":[`+fileEntry(dir+"FAILED_0.json", failed)+`],"PENDING":[],`+
			`"SUCCEEDED":[`+fileEntry(dir+"SUCCEEDED_0.json", succeeded)+`]}}`, manifest)
	})

	t.Run("JSONL", func(t *testing.T) {
		// No prefix: the keys start with the map run's id.
		const arn = "arn:aws:states:us-east-1:123456789012:mapRun:machine/Map:6dbfba93-bcff-410b-9b5c-abf41ae9eddb"
		const dir = "6dbfba93-bcff-410b-9b5c-abf41ae9eddb/"
		res := write(&maprun.Write{Resource: "arn:aws-cn:states:::s3:putObject", Bucket: "results",
			OutputType: "JSONL", MapRunArn: arn, Files: map[string][]any{
				"SUCCEEDED": {parse(`{"a":[1,{"b":null}]}`), "two", jsonvalue.Number("3")},
				"FAILED":    {parse(`{"Error":"States.TaskFailed"}`), parse(`{"Error":"X","Cause":"line\nbreak"}`)},
			}})
		require.Nil(t, res.Failure)
		require.Equal(t, `{"MapRunArn":"`+arn+`","ResultWriterDetails":{"Bucket":"results","Key":"`+dir+`manifest.json"}}`,
			jsonvalue.String(res.Output))

		succeeded := "{\"a\":[1,{\"b\":null}]}\n\"two\"\n3\n"
		body, size := get("results", dir+"SUCCEEDED_0.json")
		require.Equal(t, succeeded, body, "one JSON value a line")
		require.Equal(t, int64(len(succeeded)), size)
		failed := "{\"Error\":\"States.TaskFailed\"}\n{\"Error\":\"X\",\"Cause\":\"line\\nbreak\"}\n"
		body, _ = get("results", dir+"FAILED_0.json")
		require.Equal(t, failed, body)

		manifest, _ := get("results", dir+"manifest.json")
		require.Equal(t, `{"DestinationBucket":"results","MapRunArn":"`+arn+`","ResultFiles":{`+
			`"FAILED":[`+fileEntry(dir+"FAILED_0.json", failed)+`],"PENDING":[],`+
			`"SUCCEEDED":[`+fileEntry(dir+"SUCCEEDED_0.json", succeeded)+`]}}`, manifest)
	})

	t.Run("no results", func(t *testing.T) {
		// A prefix ending in a slash gets no second one; a run without
		// results still has its manifest.
		const arn = "arn:aws:states:us-east-1:123456789012:mapRun:machine/Map:empty-run"
		res := write(&maprun.Write{Resource: "arn:aws:states:::s3:putObject", Bucket: "results", Prefix: "out/",
			MapRunArn: arn})
		require.Nil(t, res.Failure)
		manifest, _ := get("results", "out/empty-run/manifest.json")
		require.Equal(t, `{"DestinationBucket":"results","MapRunArn":"`+arn+`","ResultFiles":{"FAILED":[],"PENDING":[],"SUCCEEDED":[]}}`, manifest)
	})

	t.Run("missing bucket", func(t *testing.T) {
		res := write(&maprun.Write{Resource: "arn:aws:states:::s3:putObject", Bucket: "missing", Prefix: "p",
			OutputType: "JSON", MapRunArn: "arn:aws:states:us-east-1:123456789012:mapRun:machine/Map:r1",
			Files: map[string][]any{"SUCCEEDED": {"x"}}})
		require.NotNil(t, res.Failure)
		require.Nil(t, res.Output)
		require.Equal(t, failure.ResultWriterFailed, res.Failure.Name)
		require.Contains(t, res.Failure.Cause, "s3://missing/p/r1/SUCCEEDED_0.json")
		require.Contains(t, res.Failure.Cause, "NoSuchBucket")
	})

	t.Run("other resource", func(t *testing.T) {
		res := write(&maprun.Write{Resource: "arn:aws:states:::s3:getObject", Bucket: "results",
			MapRunArn: "arn:aws:states:us-east-1:123456789012:mapRun:machine/Map:r2"})
		require.NotNil(t, res.Failure)
		require.Equal(t, failure.ResultWriterFailed, res.Failure.Name)
		_, f := b.call(t, "s3", "getObject", `{"Bucket": "results", "Key": "r2/manifest.json"}`)
		require.NotNil(t, f, "nothing is written")
	})
}
