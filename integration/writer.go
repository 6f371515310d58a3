package integration

import (
	"context"
	"errors"
	"slices"
	"strings"

	"stepwise/engine"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

// writerPutObject is the resource of a ResultWriter that writes to S3.
const writerPutObject = "arn:aws:states:::s3:putObject"

// The statuses a manifest always lists, empty or not, as AWS writes them.
var manifestStatuses = []string{"FAILED", "PENDING", "SUCCEEDED"}

// writeResults carries out a Map state's ResultWriter through the S3
// client of the aws-sdk integration (any S3-compatible endpoint): one file
// per status that has results, <Prefix>/<map run id>/<STATUS>_0.json,
// then manifest.json beside them listing them. The answer is the Map
// state's result, {"MapRunArn", "ResultWriterDetails": {"Bucket", "Key"}},
// or a States.ResultWriterFailed failure.
func (r *Registry) writeResults(ctx context.Context, t *engine.Task, done func(engine.TaskResult)) {
	go func() {
		out, err := r.write(context.WithoutCancel(ctx), t)
		if err != nil {
			var fl *failure.Failure
			if !errors.As(err, &fl) {
				fl = failure.Newf(failure.ResultWriterFailed, "%v", err)
			}
			done(engine.TaskResult{Failure: fl})
			return
		}
		done(engine.TaskResult{Output: out})
	}()
}

func (r *Registry) write(ctx context.Context, t *engine.Task) (*jsonvalue.Object, error) {
	w := t.Write
	// Any partition's ARN (arn:aws-cn:...) names the same writer.
	resource := w.Resource
	if i := strings.Index(resource, ":states:::"); i >= 0 {
		resource = "arn:aws" + resource[i:]
	}
	if resource != writerPutObject {
		return nil, failure.Newf(failure.ResultWriterFailed, "The resource '%s' cannot write results.", w.Resource)
	}
	if w.Bucket == "" {
		return nil, failure.Newf(failure.ResultWriterFailed, "No bucket is given to write the results of the map run '%s' to.", w.MapRunArn)
	}
	dir := resultDir(w.Prefix, w.MapRunArn)
	manifestKey := dir + "manifest.json"
	put := func(key string, body []byte) error {
		const action = "putObject"
		e := r.lookup("arn:aws:states:::aws-sdk:s3:" + action)
		if e == nil {
			return failure.Newf(failure.ResultWriterFailed,
				"No S3 client is configured to write the results to s3://%s/%s.", w.Bucket, key)
		}
		params := jsonvalue.NewObject(3)
		params.Set("Bucket", w.Bucket)
		params.Set("Key", key)
		// The aws-sdk client sends a Body as the JSON text of its value; a
		// Number's text is written as it is, so the body is these bytes
		// exactly (a JSON Lines file is not one JSON value).
		params.Set("Body", jsonvalue.Number(body))
		_, err := e.impl.Call(ctx, &Request{Resource: "arn:aws:states:::aws-sdk:s3:" + action, Service: "s3", Action: action,
			Pattern: RequestResponse, Parameters: params, ExecutionArn: t.ExecutionArn, TaskID: t.ID})
		if err != nil {
			f := AsFailure(err)
			return failure.Newf(failure.ResultWriterFailed,
				"Could not write the results to s3://%s/%s: %s: %s", w.Bucket, key, f.Name, f.Cause)
		}
		return nil
	}

	statuses := slices.Clone(manifestStatuses)
	for status := range w.Files {
		if !slices.Contains(statuses, status) {
			statuses = append(statuses, status)
		}
	}
	slices.Sort(statuses)
	files := jsonvalue.NewObject(len(statuses))
	for _, status := range statuses {
		listed := []any{}
		if results := w.Files[status]; len(results) > 0 {
			key := dir + resultFileName(status, w.OutputType)
			body := encodeResults(results, w.OutputType)
			if err := put(key, body); err != nil {
				return nil, err
			}
			file := jsonvalue.NewObject(2)
			file.Set("Key", key)
			file.Set("Size", jsonvalue.NumberFromInt(int64(len(body))))
			listed = append(listed, file)
		}
		files.Set(status, listed)
	}
	manifest := jsonvalue.NewObject(3)
	manifest.Set("DestinationBucket", w.Bucket)
	manifest.Set("MapRunArn", w.MapRunArn)
	manifest.Set("ResultFiles", files)
	if err := put(manifestKey, jsonvalue.Marshal(manifest)); err != nil {
		return nil, err
	}

	details := jsonvalue.NewObject(2)
	details.Set("Bucket", w.Bucket)
	details.Set("Key", manifestKey)
	out := jsonvalue.NewObject(2)
	out.Set("MapRunArn", w.MapRunArn)
	out.Set("ResultWriterDetails", details)
	return out, nil
}

// resultDir is the folder of a map run's files, ending in "/": the map
// run's id (the ARN's last segment) under the prefix, with no leading
// slash for no prefix and no doubled one for a prefix ending in "/".
func resultDir(prefix, mapRunArn string) string {
	id := mapRunArn[strings.LastIndexByte(mapRunArn, ':')+1:]
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return prefix + id + "/"
}

// resultFileName names the file of a status. AWS keeps the .json name for
// both output types: JSONL changes the content, not the name.
func resultFileName(status, _ string) string {
	return status + "_0.json"
}

// encodeResults is a status file's content: the results as one JSON array,
// or for JSONL one result a line, each line ending in a newline.
func encodeResults(results []any, outputType string) []byte {
	if outputType != "JSONL" {
		return jsonvalue.Append(nil, results)
	}
	var b []byte
	for _, v := range results {
		b = jsonvalue.Append(b, v)
		b = append(b, '\n')
	}
	return b
}
