// Package batch is the optimized AWS Batch integration:
// arn:aws:states:::batch:submitJob, request-response, .sync and
// .waitForTaskToken, at the endpoint configured for "batch".
//
// The Parameters are SubmitJob's request members in PascalCase: JobName,
// JobQueue, JobDefinition, Parameters, ContainerOverrides,
// ArrayProperties, DependsOn, RetryStrategy, Timeout, Tags, ...
//
// # Patterns
//
//	request-response   SubmitJob's response ({"JobArn", "JobId", "JobName"})
//	                   with the SDK's HTTP metadata
//	.waitForTaskToken  the same, recorded as submitted; the task then waits
//	                   for its token
//	.sync              SubmitJob, with MANAGED_BY_AWS=STARTED_BY_STEP_FUNCTIONS
//	                   added to the container's environment as AWS does, then
//	                   DescribeJobs with back-off until the job SUCCEEDED or
//	                   FAILED; the result is the job's description
//
// The job gets the parameter StepwiseTask (TaskParameter) naming the
// task, unless the Parameters give it: a task dispatched again after a
// restart, its submission not recorded, looks in the job queue among the
// jobs of its name (ListJobs, DescribeJobs) for the one with its
// parameter and follows it instead of submitting another.
//
// A FAILED job fails the task with States.TaskFailed and the job's
// description, as JSON text, as the cause. When the task is cancelled (it
// timed out, or its execution ended) the job is ended with TerminateJob.
//
// Results are rendered as AWS renders the AWS SDK for Java's models:
// members in PascalCase and alphabetical order. Service errors are named
// Batch.<Exception> (Batch.ClientException) with the cause AWS gives:
// "Error executing request, Exception : <message>, RequestId: <id>
// (Service: AWSBatch; ...)".
package batch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	"stepwise/integration/sdkjob"
	"stepwise/jsonvalue"
)

// Resource is the resource ARN of SubmitJob.
const Resource = integration.ResourcePrefix + "batch:submitJob"

// TaskParameter is the job parameter that names, in the jobs a task
// submits, the task (sdkjob.StartToken): SubmitJob takes no idempotency
// token, so a task dispatched again after a restart looks for its job by
// it. A parameter no command refers to changes nothing in the job.
const TaskParameter = "StepwiseTask"

const (
	// managedBy is the environment variable AWS adds to the jobs .sync
	// submits.
	managedBy, managedByValue = "MANAGED_BY_AWS", "STARTED_BY_STEP_FUNCTIONS"
	// terminateReason is the reason given to TerminateJob for a cancelled
	// task.
	terminateReason = "Terminated by Step Functions: the state machine's task was cancelled"
)

func init() {
	integration.Register(integration.Module{
		Resource: Resource,
		Patterns: []integration.Pattern{integration.Sync, integration.WaitForTaskToken},
		New:      newSubmitJob,
	})
}

type submitJob struct {
	batch *sdkjob.Service
	log   *slog.Logger
}

func newSubmitJob(cfg *integration.Config) (integration.Integration, error) {
	return &submitJob{batch: sdkjob.NewService(cfg, "batch", "Batch", "AWSBatch"), log: cfg.Logger}, nil
}

// call makes one call, its service errors worded as AWS's Batch
// integration words them.
func (c *submitJob) call(ctx context.Context, operation string, in *jsonvalue.Object) (*awssdk.Reply, error) {
	reply, err := c.batch.Client.Invoke(ctx, c.batch.Name, operation, in, c.batch.Options)
	if err != nil {
		return nil, serviceFailure(c.batch, err)
	}
	return reply, nil
}

// Call submits the job and, for .sync, waits for it to end.
func (c *submitJob) Call(ctx context.Context, r *integration.Request) (any, error) {
	in, err := c.request(r)
	if err != nil {
		return nil, err
	}
	var started struct{ JobId string }
	if sdkjob.Started(r, &started) && started.JobId != "" {
		return c.wait(ctx, started.JobId) // submitted before a restart
	}
	var out *jsonvalue.Object
	if sdkjob.LookFirst(r) {
		if out, err = c.find(ctx, in); err != nil {
			return nil, err
		}
	}
	if out == nil {
		startCtx, cancel := sdkjob.StartContext(ctx)
		reply, err := c.call(startCtx, "SubmitJob", in)
		cancel()
		if err != nil {
			return nil, err
		}
		out = sdkjob.WithReplyMetadata(reply.Result, reply)
	}
	if r.Pattern == integration.Sync {
		r.Submit(out)
		return c.wait(ctx, sdkjob.Text(out, "JobId"))
	}
	return out, nil
}

// find looks in the job queue, among the jobs of the job's name, for the
// one whose TaskParameter is the request's: a job the task submitted
// before a restart, its submission not recorded. The answer is
// SubmitJob's for that job, nil when there is none.
func (c *submitJob) find(ctx context.Context, in *jsonvalue.Object) (*jsonvalue.Object, error) {
	token := sdkjob.Text(sdkjob.Member(in, "Parameters"), TaskParameter)
	if token == "" {
		return nil, nil
	}
	page := func(ctx context.Context, next string) (*awssdk.Reply, string, error) {
		filter := jsonvalue.NewObject(2)
		filter.Set("Name", "JOB_NAME")
		filter.Set("Values", []any{sdkjob.Text(in, "JobName")})
		list := jsonvalue.NewObject(3)
		list.Set("JobQueue", sdkjob.Text(in, "JobQueue"))
		list.Set("Filters", []any{filter})
		if next != "" {
			list.Set("NextToken", next)
		}
		reply, err := c.call(ctx, "ListJobs", list)
		if err != nil {
			return nil, "", err
		}
		return reply, sdkjob.Text(reply.Result, "NextToken"), nil
	}
	return sdkjob.LookupPages(ctx, page, func(reply *awssdk.Reply) (*jsonvalue.Object, error) {
		summaries, _ := sdkjob.Member(reply.Result, "JobSummaryList").([]any)
		ids := make([]any, 0, len(summaries))
		for _, j := range summaries {
			ids = append(ids, sdkjob.Text(j, "JobId"))
		}
		for chunk := range slices.Chunk(ids, 100) {
			describe := jsonvalue.NewObject(1)
			describe.Set("Jobs", chunk)
			res, err := c.call(ctx, "DescribeJobs", describe)
			if err != nil {
				return nil, err
			}
			jobs, _ := sdkjob.Member(res.Result, "Jobs").([]any)
			for _, j := range jobs {
				if sdkjob.Text(sdkjob.Member(j, "Parameters"), TaskParameter) == token {
					out := jsonvalue.NewObject(3)
					for _, name := range []string{"JobArn", "JobId", "JobName"} {
						if v := sdkjob.Member(j, name); v != nil {
							out.Set(name, v)
						}
					}
					return sdkjob.WithReplyMetadata(out, res), nil
				}
			}
		}
		return nil, nil
	})
}

// request is the SubmitJob request of the Parameters.
func (c *submitJob) request(r *integration.Request) (*jsonvalue.Object, error) {
	var in *jsonvalue.Object
	switch p := r.Parameters.(type) {
	case nil:
		in = jsonvalue.NewObject(0)
	case *jsonvalue.Object:
		in = jsonvalue.DeepCopy(p).(*jsonvalue.Object)
	default:
		return nil, sdkjob.ParamsFailure("The Parameters must be an object, not %s", jsonvalue.TypeName(p))
	}
	if err := c.batch.Check("SubmitJob", in); err != nil {
		return nil, err
	}
	for _, name := range []string{"JobDefinition", "JobName", "JobQueue"} {
		if v, ok := in.Get(name); !ok || v == nil {
			return nil, sdkjob.ParamsFailure("The field '%s' is required but was missing", name)
		}
	}
	params, _ := sdkjob.Member(in, "Parameters").(*jsonvalue.Object)
	if sdkjob.Member(params, TaskParameter) == nil {
		if token := sdkjob.StartToken(r); token != "" {
			if params == nil {
				params = jsonvalue.NewObject(1)
				in.Set("Parameters", params)
			}
			params.Set(TaskParameter, token)
		}
	}
	if r.Pattern == integration.Sync {
		overrides, _ := sdkjob.Member(in, "ContainerOverrides").(*jsonvalue.Object)
		if overrides == nil {
			overrides = jsonvalue.NewObject(1)
			in.Set("ContainerOverrides", overrides)
		}
		env, _ := sdkjob.Member(overrides, "Environment").([]any)
		pair := jsonvalue.NewObject(2)
		pair.Set("Name", managedBy)
		pair.Set("Value", managedByValue)
		overrides.Set("Environment", append(slices.Clone(env), pair))
	}
	return in, nil
}

// wait waits for the job to end and answers as AWS does: the job's
// description, or a failure naming it. A cancelled wait terminates the
// job.
func (c *submitJob) wait(ctx context.Context, id string) (any, error) {
	var job *jsonvalue.Object
	err := sdkjob.Poll(ctx, func(ctx context.Context) (bool, error) {
		in := jsonvalue.NewObject(1)
		in.Set("Jobs", []any{id})
		res, err := c.call(ctx, "DescribeJobs", in)
		if err != nil {
			return false, err
		}
		jobs, _ := sdkjob.Member(res.Result, "Jobs").([]any)
		if len(jobs) == 0 {
			return false, failure.Newf(failure.TaskFailed, "The job %s was not found", id)
		}
		job, _ = jobs[0].(*jsonvalue.Object)
		status := sdkjob.Text(job, "Status")
		return status == "SUCCEEDED" || status == "FAILED", nil
	})
	if ctx.Err() != nil {
		c.terminate(ctx, id)
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	if sdkjob.Text(job, "Status") == "FAILED" {
		return nil, failure.New(failure.TaskFailed, jsonvalue.String(job))
	}
	return job, nil
}

// terminate ends the job of a cancelled task. Its result is no longer
// wanted, so a failure to terminate is only logged.
func (c *submitJob) terminate(ctx context.Context, id string) {
	ctx, cancel := sdkjob.StopContext(ctx)
	defer cancel()
	in := jsonvalue.NewObject(2)
	in.Set("JobId", id)
	in.Set("Reason", terminateReason)
	if _, err := c.call(ctx, "TerminateJob", in); err != nil {
		c.log.WarnContext(ctx, "batch: terminate the job of a cancelled task", "job_id", id, "error", err)
	}
}

// serviceFailure names a service error as AWS does, with the cause its
// Batch integration gives.
func serviceFailure(svc *sdkjob.Service, err error) error {
	var apiErr *awssdk.ServiceError
	if !errors.As(err, &apiErr) {
		return svc.Failure(err)
	}
	f := integration.ServiceFailure(svc.Prefix, svc.Java, err)
	msg := apiErr.ErrorMessage()
	return failure.New(f.Name, fmt.Sprintf("Error executing request, Exception : %s, RequestId: %s %s",
		msg, apiErr.ServiceRequestID(), strings.TrimPrefix(f.Cause, msg+" ")))
}
