package integration

import (
	"context"
	"errors"
	"strings"

	"stepwise/engine"
	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// writerPutObject is the resource of a ResultWriter that writes to S3.
const writerPutObject = "arn:aws:states:::s3:putObject"

// writeResults carries out a Map state's ResultWriter (a task whose
// Request.Write is set) through the S3 client of the aws-sdk integration
// (any S3-compatible endpoint): the objects maprun.Write lays out, one
// per status with results then the manifest. The answer is the Map
// state's result (maprun.Write.Answer), or a States.ResultWriterFailed
// failure.
func (r *Registry) writeResults(ctx context.Context, t *engine.Task, done func(engine.TaskResult)) {
	go func() {
		out, err := r.write(context.WithoutCancel(ctx), t)
		if err != nil {
			var fl *stepwisetype.Failure
			if !errors.As(err, &fl) {
				fl = stepwisetype.Failuref(stepwisetype.ErrorResultWriterFailed, "%v", err)
			}
			done(engine.TaskResult{Failure: fl})
			return
		}
		done(engine.TaskResult{Output: out})
	}()
}

func (r *Registry) write(ctx context.Context, t *engine.Task) (*jsonvalue.Object, error) {
	w := t.Request.Write
	// Any partition's ARN (arn:aws-cn:...) names the same writer.
	resource := w.Resource
	if i := strings.Index(resource, ":states:::"); i >= 0 {
		resource = "arn:aws" + resource[i:]
	}
	if resource != writerPutObject {
		return nil, stepwisetype.Failuref(stepwisetype.ErrorResultWriterFailed, "The resource '%s' cannot write results.", w.Resource)
	}
	if w.Bucket == "" {
		return nil, stepwisetype.Failuref(stepwisetype.ErrorResultWriterFailed, "No bucket is given to write the results of the map run '%s' to.", w.MapRunArn)
	}
	const action = "putObject"
	e := r.lookup("arn:aws:states:::aws-sdk:s3:" + action)
	for _, o := range w.Objects() {
		if e == nil {
			return nil, stepwisetype.Failuref(stepwisetype.ErrorResultWriterFailed,
				"No S3 client is configured to write the results to s3://%s/%s.", w.Bucket, o.Key)
		}
		params := jsonvalue.NewObject(3)
		params.Set("Bucket", w.Bucket)
		params.Set("Key", o.Key)
		// The aws-sdk client sends a Body as the JSON text of its value; a
		// Number's text is written as it is, so the body is these bytes
		// exactly (a JSON Lines file is not one JSON value).
		params.Set("Body", jsonvalue.Number(o.Body))
		_, err := e.impl.Call(ctx, &Request{Resource: "arn:aws:states:::aws-sdk:s3:" + action, Service: "s3", Action: action,
			Pattern: RequestResponse, Parameters: params, ExecutionArn: t.ExecutionArn, TaskID: t.ID})
		if err != nil {
			f := AsFailure(err)
			return nil, stepwisetype.Failuref(stepwisetype.ErrorResultWriterFailed,
				"Could not write the results to s3://%s/%s: %s: %s", w.Bucket, o.Key, f.Name, f.Cause)
		}
	}
	return w.Answer(), nil
}
