package integration

import (
	"context"
	"errors"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

// writerPutObject is the resource of a ResultWriter that writes to S3.
const writerPutObject = "arn:aws:states:::s3:putObject"

// writeResults carries out a Map state's ResultWriter (a task whose
// Request.Write is set) through the S3 client of the aws-sdk integration
// (any S3-compatible endpoint): the objects maprun.Write lays out, one
// per status with results then the manifest. The answer is the Map
// state's result (maprun.Write.Answer), or a States.ResultWriterFailed
// failure.
func (r *Registry) writeResults(ctx context.Context, t *task.Task, done func(task.Result)) {
	go func() {
		out, err := r.write(context.WithoutCancel(ctx), t)
		if err != nil {
			var fl *failure.Failure
			if !errors.As(err, &fl) {
				fl = failure.Newf(failure.ResultWriterFailed, "%v", err)
			}
			done(task.Result{Failure: fl})
			return
		}
		done(task.Result{Output: out})
	}()
}

func (r *Registry) write(ctx context.Context, t *task.Task) (*jsonvalue.Object, error) {
	w := t.Request.Write
	if inAWSPartition(w.Resource) != writerPutObject {
		return nil, failure.Newf(failure.ResultWriterFailed, "The resource '%s' cannot write results.", w.Resource)
	}
	if w.Bucket == "" {
		return nil, failure.Newf(failure.ResultWriterFailed, "No bucket is given to write the results of the map run '%s' to.", w.MapRunArn)
	}
	for _, o := range w.Objects() {
		params := jsonvalue.NewObject(3)
		params.Set("Bucket", w.Bucket)
		params.Set("Key", o.Key)
		// The aws-sdk client sends a Body as the JSON text of its value; a
		// Number's text is written as it is, so the body is these bytes
		// exactly (a JSON Lines file is not one JSON value).
		params.Set("Body", jsonvalue.Number(o.Body))
		impl, req, err := r.s3Client(t, "putObject", params, failure.Newf(failure.ResultWriterFailed,
			"No S3 client is configured to write the results to s3://%s/%s.", w.Bucket, o.Key))
		if err != nil {
			return nil, err
		}
		if _, err = impl.Call(ctx, req); err != nil {
			f := AsFailure(err)
			return nil, failure.Newf(failure.ResultWriterFailed,
				"Could not write the results to s3://%s/%s: %s: %s", w.Bucket, o.Key, f.Name, f.Cause)
		}
	}
	return w.Answer(), nil
}
