// Package glue is the optimized AWS Glue integration:
// arn:aws:states:::glue:startJobRun, request-response and .sync, at the
// endpoint configured for "glue".
//
// The Parameters are StartJobRun's request members: JobName, Arguments,
// JobRunId, Timeout, WorkerType, NumberOfWorkers, ...
//
// # Patterns
//
//	request-response   StartJobRun's response with the JobName of the
//	                   request added, as AWS does ({"JobName", "JobRunId"}),
//	                   and the SDK's HTTP metadata
//	.sync              StartJobRun, then GetJobRun with back-off until the run
//	                   ends; the result is the run (GetJobRun's JobRun)
//
// The run gets the argument --stepwise-task (TaskArgument) naming the
// task, unless the Parameters give it: a task dispatched again after a
// restart, its start not recorded, looks among the job's runs
// (GetJobRuns) for the one with its argument and follows it instead of
// starting another.
//
// A run that ends other than SUCCEEDED (FAILED, TIMEOUT, STOPPED, ERROR,
// EXPIRED) fails the task with States.TaskFailed and the run, as JSON
// text, as the cause. When the task is cancelled (it timed out, or its
// execution ended) the run is stopped with BatchStopJobRun.
//
// Results are rendered as AWS renders the AWS SDK for Java's models:
// members in PascalCase and alphabetical order, timestamps as epoch
// milliseconds. Service errors are named Glue.<Exception>
// (Glue.EntityNotFoundException). The calls are made from Glue's API
// model by the aws-sdk integration's client (sdkjob.Service).
package glue

import (
	"context"
	"log/slog"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	"stepwise/integration/sdkjob"
	"stepwise/jsonvalue"
)

// Resource is the resource ARN of StartJobRun.
const Resource = integration.ResourcePrefix + "glue:startJobRun"

// TaskArgument is the argument that names, in the runs a task starts, the
// task (sdkjob.StartToken): StartJobRun takes no idempotency token, so a
// task dispatched again after a restart looks for its run by it.
const TaskArgument = "--stepwise-task"

// ended are the states of a run that ended, and whether it succeeded.
var ended = map[string]bool{
	"SUCCEEDED": true,
	"FAILED":    false,
	"TIMEOUT":   false,
	"STOPPED":   false,
	"ERROR":     false,
	"EXPIRED":   false,
}

func init() {
	integration.Register(integration.Module{
		Resource: Resource,
		Patterns: []integration.Pattern{integration.Sync},
		New:      newStartJobRun,
	})
}

type startJobRun struct {
	glue *sdkjob.Service
	log  *slog.Logger
}

func newStartJobRun(cfg *integration.Config) (integration.Integration, error) {
	return &startJobRun{glue: sdkjob.NewService(cfg, "glue", "Glue", "AWSGlue"), log: cfg.Logger}, nil
}

// Call starts the run and, for .sync, waits for it to end.
func (c *startJobRun) Call(ctx context.Context, r *integration.Request) (any, error) {
	in, err := params(r.Parameters)
	if err != nil {
		return nil, err
	}
	if err := c.glue.Check("StartJobRun", in); err != nil {
		return nil, err
	}
	job, ok := in.Get("JobName")
	if !ok || job == nil {
		return nil, sdkjob.ParamsFailure("The field 'JobName' is required but was missing")
	}
	jobName, _ := job.(string)
	var started struct{ JobRunId string }
	if sdkjob.Started(r, &started) && started.JobRunId != "" {
		return c.wait(ctx, jobName, started.JobRunId) // started before a restart
	}
	token := taskArgument(r, in)
	var out *jsonvalue.Object
	if sdkjob.LookFirst(r) {
		found, err := c.find(ctx, jobName, token)
		if err != nil {
			return nil, err
		}
		out = found
	}
	if out == nil {
		startCtx, cancel := sdkjob.StartContext(ctx)
		reply, err := c.glue.Call(startCtx, "StartJobRun", in)
		cancel()
		if err != nil {
			return nil, err
		}
		out = reply.Result
		out.Set("JobName", jobName)
		out = sdkjob.WithReplyMetadata(out, reply)
	}
	if r.Pattern == integration.Sync {
		r.Submit(out)
		return c.wait(ctx, jobName, sdkjob.Text(out, "JobRunId"))
	}
	return out, nil
}

// params is a copy of the Parameters that taskArgument may change.
func params(p any) (*jsonvalue.Object, error) {
	if p == nil {
		return jsonvalue.NewObject(0), nil
	}
	obj, ok := p.(*jsonvalue.Object)
	if !ok {
		return nil, sdkjob.ParamsFailure("The Parameters must be an object, not %s", jsonvalue.TypeName(p))
	}
	return jsonvalue.DeepCopy(obj).(*jsonvalue.Object), nil
}

// taskArgument adds the task's start token to the run's arguments as
// TaskArgument, unless the Parameters give that argument, and returns the
// value the run carries ("" outside an execution).
func taskArgument(r *integration.Request, in *jsonvalue.Object) string {
	args, _ := sdkjob.Member(in, "Arguments").(*jsonvalue.Object)
	if args != nil {
		if v, ok := args.Get(TaskArgument); ok {
			s, _ := v.(string)
			return s
		}
	}
	token := sdkjob.StartToken(r)
	if token == "" {
		return ""
	}
	if args == nil {
		args = jsonvalue.NewObject(1)
		in.Set("Arguments", args)
	}
	args.Set(TaskArgument, token)
	return token
}

// find looks among the job's runs for the one whose TaskArgument is
// token: a run the task started before a restart, its start not
// recorded. The answer is StartJobRun's for that run, nil when there is
// none.
func (c *startJobRun) find(ctx context.Context, job, token string) (*jsonvalue.Object, error) {
	if token == "" {
		return nil, nil
	}
	page := func(ctx context.Context, next string) (*awssdk.Reply, string, error) {
		in := jsonvalue.NewObject(3)
		in.Set("JobName", job)
		in.Set("MaxResults", jsonvalue.NumberFromInt(200))
		if next != "" {
			in.Set("NextToken", next)
		}
		reply, err := c.glue.Call(ctx, "GetJobRuns", in)
		if err != nil {
			return nil, "", err
		}
		return reply, sdkjob.Text(reply.Result, "NextToken"), nil
	}
	return sdkjob.LookupPages(ctx, page, func(reply *awssdk.Reply) (*jsonvalue.Object, error) {
		runs, _ := sdkjob.Member(reply.Result, "JobRuns").([]any)
		for _, run := range runs {
			if sdkjob.Text(sdkjob.Member(run, "Arguments"), TaskArgument) == token {
				out := jsonvalue.NewObject(2)
				out.Set("JobName", job)
				out.Set("JobRunId", sdkjob.Text(run, "Id"))
				return sdkjob.WithReplyMetadata(out, reply), nil
			}
		}
		return nil, nil
	})
}

// wait waits for the run to end and answers as AWS does: the run, or a
// failure naming it. A cancelled wait stops the run.
func (c *startJobRun) wait(ctx context.Context, job, id string) (any, error) {
	var run *jsonvalue.Object
	err := sdkjob.Poll(ctx, func(ctx context.Context) (bool, error) {
		in := jsonvalue.NewObject(2)
		in.Set("JobName", job)
		in.Set("RunId", id)
		reply, err := c.glue.Call(ctx, "GetJobRun", in)
		if err != nil {
			return false, err
		}
		run, _ = sdkjob.Member(reply.Result, "JobRun").(*jsonvalue.Object)
		if run == nil {
			return false, failure.Newf(failure.TaskFailed, "The job run %s of %s was not found", id, job)
		}
		_, done := ended[sdkjob.Text(run, "JobRunState")]
		return done, nil
	})
	if ctx.Err() != nil {
		c.stop(ctx, job, id)
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	if !ended[sdkjob.Text(run, "JobRunState")] {
		return nil, failure.New(failure.TaskFailed, jsonvalue.String(run))
	}
	return run, nil
}

// stop stops the run of a cancelled task. Its result is no longer wanted,
// so a failure to stop is only logged.
func (c *startJobRun) stop(ctx context.Context, job, id string) {
	ctx, cancel := sdkjob.StopContext(ctx)
	defer cancel()
	in := jsonvalue.NewObject(2)
	in.Set("JobName", job)
	in.Set("JobRunIds", []any{id})
	if _, err := c.glue.Call(ctx, "BatchStopJobRun", in); err != nil {
		c.log.WarnContext(ctx, "glue: stop the run of a cancelled task", "job_name", job, "job_run_id", id, "error", err)
	}
}
