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
// (Glue.EntityNotFoundException).
package glue

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/sdkjob"
	"stepwise/jsonvalue"
)

// Resource is the resource ARN of StartJobRun.
const Resource = integration.ResourcePrefix + "glue:startJobRun"

// TaskArgument is the argument that names, in the runs a task starts, the
// task (sdkjob.StartToken): StartJobRun takes no idempotency token, so a
// task dispatched again after a restart looks for its run by it.
const TaskArgument = "--stepwise-task"

var render = sdkjob.Encoder{}

// ended are the states of a run that ended, and whether it succeeded.
var ended = map[types.JobRunState]bool{
	types.JobRunStateSucceeded: true,
	types.JobRunStateFailed:    false,
	types.JobRunStateTimeout:   false,
	types.JobRunStateStopped:   false,
	types.JobRunStateError:     false,
	types.JobRunStateExpired:   false,
}

func init() {
	integration.Register(integration.Module{
		Resource: Resource,
		Patterns: []integration.Pattern{integration.Sync},
		New:      newStartJobRun,
	})
}

type startJobRun struct {
	client *glue.Client
	log    *slog.Logger
}

func newStartJobRun(cfg *integration.Config) (integration.Integration, error) {
	awsCfg, endpoint, err := cfg.AWSConfig(context.Background(), "glue")
	if err != nil {
		return nil, err
	}
	client := glue.NewFromConfig(awsCfg, func(o *glue.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return &startJobRun{client: client, log: cfg.Logger}, nil
}

// Call starts the run and, for .sync, waits for it to end.
func (c *startJobRun) Call(ctx context.Context, r *integration.Request) (any, error) {
	in := &glue.StartJobRunInput{}
	if err := sdkjob.DecodeParams(r.Parameters, in); err != nil {
		return nil, err
	}
	if in.JobName == nil {
		return nil, sdkjob.ParamsFailure("The field 'JobName' is required but was missing")
	}
	var started struct{ JobRunId string }
	if sdkjob.Started(r, &started) && started.JobRunId != "" {
		return c.wait(ctx, *in.JobName, started.JobRunId) // started before a restart
	}
	token := taskArgument(r, in)
	var out *jsonvalue.Object
	if sdkjob.LookFirst(r) {
		found, err := c.find(ctx, *in.JobName, token)
		if err != nil {
			return nil, err
		}
		out = found
	}
	if out == nil {
		startCtx, cancel := sdkjob.StartContext(ctx)
		res, err := c.client.StartJobRun(startCtx, in)
		cancel()
		if err != nil {
			return nil, serviceFailure(err)
		}
		out = render.Object(res)
		out.Set("JobName", *in.JobName)
		out = sdkjob.WithMetadata(out, res.ResultMetadata)
	}
	if r.Pattern == integration.Sync {
		r.Submit(out)
		id, _ := out.Get("JobRunId")
		runID, _ := id.(string)
		return c.wait(ctx, *in.JobName, runID)
	}
	return out, nil
}

// taskArgument adds the task's start token to the run's arguments as
// TaskArgument, unless the Parameters give that argument, and returns the
// value the run carries ("" outside an execution).
func taskArgument(r *integration.Request, in *glue.StartJobRunInput) string {
	if v, ok := in.Arguments[TaskArgument]; ok {
		return v
	}
	token := sdkjob.StartToken(r)
	if token == "" {
		return ""
	}
	if in.Arguments == nil {
		in.Arguments = map[string]string{}
	}
	in.Arguments[TaskArgument] = token
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
	pages := glue.NewGetJobRunsPaginator(c.client, &glue.GetJobRunsInput{JobName: aws.String(job), MaxResults: aws.Int32(200)})
	return sdkjob.Lookup(ctx, pages, serviceFailure, func(page *glue.GetJobRunsOutput) (*jsonvalue.Object, error) {
		for _, run := range page.JobRuns {
			if run.Arguments[TaskArgument] == token {
				out := render.Object(&glue.StartJobRunOutput{JobRunId: run.Id})
				out.Set("JobName", job)
				return sdkjob.WithMetadata(out, page.ResultMetadata), nil
			}
		}
		return nil, nil
	})
}

// wait waits for the run to end and answers as AWS does: the run, or a
// failure naming it. A cancelled wait stops the run.
func (c *startJobRun) wait(ctx context.Context, job, id string) (any, error) {
	var run *types.JobRun
	err := sdkjob.Poll(ctx, func(ctx context.Context) (bool, error) {
		res, err := c.client.GetJobRun(ctx, &glue.GetJobRunInput{JobName: aws.String(job), RunId: aws.String(id)})
		if err != nil {
			return false, serviceFailure(err)
		}
		if res.JobRun == nil {
			return false, failure.Newf(failure.TaskFailed, "The job run %s of %s was not found", id, job)
		}
		run = res.JobRun
		_, done := ended[run.JobRunState]
		return done, nil
	})
	if ctx.Err() != nil {
		c.stop(ctx, job, id)
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	out := render.Object(run)
	if !ended[run.JobRunState] {
		return nil, failure.New(failure.TaskFailed, jsonvalue.String(out))
	}
	return out, nil
}

// stop stops the run of a cancelled task. Its result is no longer wanted,
// so a failure to stop is only logged.
func (c *startJobRun) stop(ctx context.Context, job, id string) {
	ctx, cancel := sdkjob.StopContext(ctx)
	defer cancel()
	_, err := c.client.BatchStopJobRun(ctx, &glue.BatchStopJobRunInput{JobName: aws.String(job), JobRunIds: []string{id}})
	if err != nil {
		c.log.WarnContext(ctx, "glue: stop the run of a cancelled task", "job_name", job, "job_run_id", id, "error", err)
	}
}

func serviceFailure(err error) error {
	return integration.ServiceFailure("Glue", "AWSGlue", err)
}
