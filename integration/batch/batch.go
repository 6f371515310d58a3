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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/smithy-go"

	"stepwise/failure"
	"stepwise/integration"
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

var render = sdkjob.Encoder{}

func init() {
	integration.Register(integration.Module{
		Resource: Resource,
		Patterns: []integration.Pattern{integration.Sync, integration.WaitForTaskToken},
		New:      newSubmitJob,
	})
}

type submitJob struct {
	client *batch.Client
	log    *slog.Logger
}

func newSubmitJob(cfg *integration.Config) (integration.Integration, error) {
	awsCfg, endpoint, err := cfg.AWSConfig(context.Background(), "batch")
	if err != nil {
		return nil, err
	}
	client := batch.NewFromConfig(awsCfg, func(o *batch.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return &submitJob{client: client, log: cfg.Logger}, nil
}

// Call submits the job and, for .sync, waits for it to end.
func (c *submitJob) Call(ctx context.Context, r *integration.Request) (any, error) {
	in, err := request(r)
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
		res, err := c.client.SubmitJob(startCtx, in)
		cancel()
		if err != nil {
			return nil, serviceFailure(err)
		}
		out = sdkjob.WithMetadata(render.Object(res), res.ResultMetadata)
	}
	if r.Pattern == integration.Sync {
		r.Submit(out)
		id, _ := out.Get("JobId")
		jobID, _ := id.(string)
		return c.wait(ctx, jobID)
	}
	return out, nil
}

// find looks in the job queue, among the jobs of the job's name, for the
// one whose TaskParameter is the request's: a job the task submitted
// before a restart, its submission not recorded. The answer is
// SubmitJob's for that job, nil when there is none.
func (c *submitJob) find(ctx context.Context, in *batch.SubmitJobInput) (*jsonvalue.Object, error) {
	token := in.Parameters[TaskParameter]
	if token == "" {
		return nil, nil
	}
	pages := batch.NewListJobsPaginator(c.client, &batch.ListJobsInput{JobQueue: in.JobQueue,
		Filters: []types.KeyValuesPair{{Name: aws.String("JOB_NAME"), Values: []string{aws.ToString(in.JobName)}}}})
	return sdkjob.Lookup(ctx, pages, serviceFailure, func(page *batch.ListJobsOutput) (*jsonvalue.Object, error) {
		ids := make([]string, 0, len(page.JobSummaryList))
		for _, j := range page.JobSummaryList {
			ids = append(ids, aws.ToString(j.JobId))
		}
		for chunk := range slices.Chunk(ids, 100) {
			res, err := c.client.DescribeJobs(ctx, &batch.DescribeJobsInput{Jobs: chunk})
			if err != nil {
				return nil, serviceFailure(err)
			}
			for _, j := range res.Jobs {
				if j.Parameters[TaskParameter] == token {
					return sdkjob.WithMetadata(render.Object(&batch.SubmitJobOutput{JobArn: j.JobArn, JobId: j.JobId, JobName: j.JobName}), res.ResultMetadata), nil
				}
			}
		}
		return nil, nil
	})
}

// request is the SubmitJob request of the Parameters.
func request(r *integration.Request) (*batch.SubmitJobInput, error) {
	in := &batch.SubmitJobInput{}
	if err := sdkjob.DecodeParams(r.Parameters, in); err != nil {
		return nil, err
	}
	required := []struct {
		name  string
		value *string
	}{{"JobDefinition", in.JobDefinition}, {"JobName", in.JobName}, {"JobQueue", in.JobQueue}}
	for _, f := range required {
		if f.value == nil {
			return nil, sdkjob.ParamsFailure("The field '%s' is required but was missing", f.name)
		}
	}
	if _, ok := in.Parameters[TaskParameter]; !ok {
		if token := sdkjob.StartToken(r); token != "" {
			if in.Parameters == nil {
				in.Parameters = map[string]string{}
			}
			in.Parameters[TaskParameter] = token
		}
	}
	if r.Pattern == integration.Sync {
		if in.ContainerOverrides == nil {
			in.ContainerOverrides = &types.ContainerOverrides{}
		}
		in.ContainerOverrides.Environment = append(in.ContainerOverrides.Environment,
			types.KeyValuePair{Name: aws.String(managedBy), Value: aws.String(managedByValue)})
	}
	return in, nil
}

// wait waits for the job to end and answers as AWS does: the job's
// description, or a failure naming it. A cancelled wait terminates the
// job.
func (c *submitJob) wait(ctx context.Context, id string) (any, error) {
	var job types.JobDetail
	err := sdkjob.Poll(ctx, func(ctx context.Context) (bool, error) {
		res, err := c.client.DescribeJobs(ctx, &batch.DescribeJobsInput{Jobs: []string{id}})
		if err != nil {
			return false, serviceFailure(err)
		}
		if len(res.Jobs) == 0 {
			return false, failure.Newf(failure.TaskFailed, "The job %s was not found", id)
		}
		job = res.Jobs[0]
		return job.Status == types.JobStatusSucceeded || job.Status == types.JobStatusFailed, nil
	})
	if ctx.Err() != nil {
		c.terminate(ctx, id)
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	out := render.Object(job)
	if job.Status == types.JobStatusFailed {
		return nil, failure.New(failure.TaskFailed, jsonvalue.String(out))
	}
	return out, nil
}

// terminate ends the job of a cancelled task. Its result is no longer
// wanted, so a failure to terminate is only logged.
func (c *submitJob) terminate(ctx context.Context, id string) {
	ctx, cancel := sdkjob.StopContext(ctx)
	defer cancel()
	_, err := c.client.TerminateJob(ctx, &batch.TerminateJobInput{JobId: aws.String(id), Reason: aws.String(terminateReason)})
	if err != nil {
		c.log.WarnContext(ctx, "batch: terminate the job of a cancelled task", "job_id", id, "error", err)
	}
}

// serviceFailure names a service error as AWS does, with the cause its
// Batch integration gives.
func serviceFailure(err error) error {
	f := integration.ServiceFailure("Batch", "AWSBatch", err)
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return f
	}
	requestID := ""
	var reqErr interface{ ServiceRequestID() string }
	if errors.As(err, &reqErr) {
		requestID = reqErr.ServiceRequestID()
	}
	msg := apiErr.ErrorMessage()
	return failure.New(f.Name, fmt.Sprintf("Error executing request, Exception : %s, RequestId: %s %s",
		msg, requestID, strings.TrimPrefix(f.Cause, msg+" ")))
}
