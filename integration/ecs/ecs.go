// Package ecs is the optimized Amazon ECS integration:
// arn:aws:states:::ecs:runTask, request-response, .sync and
// .waitForTaskToken, at the endpoint configured for "ecs".
//
// The Parameters are RunTask's request members in PascalCase: Cluster,
// TaskDefinition, LaunchType, NetworkConfiguration, Overrides, ...
//
// # Patterns
//
//	request-response   RunTask's response ({"Failures", "Tasks"}) with the
//	                   SDK's HTTP metadata
//	.waitForTaskToken  the same, recorded as submitted; the task then waits
//	                   for its token
//	.sync              RunTask (StartedBy "AWS Step Functions" unless given),
//	                   then DescribeTasks with back-off until the task is
//	                   STOPPED; the result is the task's description
//
// RunTask's ClientToken, unless the Parameters give one, names the task
// (sdkjob.StartToken): a task dispatched again after a restart whose
// answer was not recorded sends the same token, and ECS answers with the
// tasks the first request ran instead of running others.
//
// With .sync and .waitForTaskToken, a RunTask response that lists Failures
// fails the task with AmazonECS.Unknown, as AWS does. A stopped task one of
// whose containers exited with a non-zero code, or never ran, fails the
// task with States.TaskFailed and the task's description, as JSON text,
// as the cause. When the task is cancelled (it timed out, or its execution
// ended) the ECS task is stopped with StopTask.
//
// Results are rendered as AWS renders the AWS SDK for Java's models:
// members in PascalCase and alphabetical order, timestamps as epoch
// milliseconds, unset lists as []. Service errors are named ECS.<Exception>
// (ECS.ClusterNotFoundException).
package ecs

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/sdkjob"
	"stepwise/jsonvalue"
)

// Resource is the resource ARN of RunTask.
const Resource = integration.ResourcePrefix + "ecs:runTask"

// ErrorUnknown fails a .sync or .waitForTaskToken task whose RunTask
// response lists Failures.
const ErrorUnknown = "AmazonECS.Unknown"

const (
	// startedBy is the StartedBy of the tasks .sync runs, as on AWS.
	startedBy = "AWS Step Functions"
	// stopReason is the reason given to StopTask for a cancelled task.
	stopReason = "Stopped by Step Functions: the state machine's task was cancelled"
	// stopped is the last status of a task that ended.
	stopped = "STOPPED"
)

// render renders results: the Java SDK's ECS models make unset lists [].
var render = sdkjob.Encoder{EmptyLists: true}

func init() {
	integration.Register(integration.Module{
		Resource: Resource,
		Patterns: []integration.Pattern{integration.Sync, integration.WaitForTaskToken},
		New:      newRunTask,
	})
}

type runTask struct {
	client *ecs.Client
	log    *slog.Logger
}

func newRunTask(cfg *integration.Config) (integration.Integration, error) {
	awsCfg, endpoint, err := cfg.AWSConfig(context.Background(), "ecs")
	if err != nil {
		return nil, err
	}
	client := ecs.NewFromConfig(awsCfg, func(o *ecs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return &runTask{client: client, log: cfg.Logger}, nil
}

// Call runs the task and, for .sync, waits for it to stop.
func (c *runTask) Call(ctx context.Context, r *integration.Request) (any, error) {
	in, err := request(r)
	if err != nil {
		return nil, err
	}
	var started struct {
		Tasks []struct{ ClusterArn, TaskArn *string }
	}
	if sdkjob.Started(r, &started) && len(started.Tasks) > 0 {
		// Run before a restart: its tasks are followed.
		tasks := make([]types.Task, len(started.Tasks))
		for i, t := range started.Tasks {
			tasks[i] = types.Task{ClusterArn: t.ClusterArn, TaskArn: t.TaskArn}
		}
		return c.wait(ctx, tasks)
	}
	startCtx, cancel := sdkjob.StartContext(ctx)
	res, err := c.client.RunTask(startCtx, in)
	cancel()
	if err != nil {
		return nil, serviceFailure(err)
	}
	switch {
	case r.Pattern == integration.RequestResponse:
	case len(res.Failures) > 0:
		return nil, failure.New(ErrorUnknown, jsonvalue.String(render.Object(res)))
	case r.Pattern == integration.Sync:
		r.Submit(sdkjob.WithMetadata(render.Object(res), res.ResultMetadata))
		return c.wait(ctx, res.Tasks)
	}
	return sdkjob.WithMetadata(render.Object(res), res.ResultMetadata), nil
}

// request is the RunTask request of the Parameters.
func request(r *integration.Request) (*ecs.RunTaskInput, error) {
	in := &ecs.RunTaskInput{}
	if err := sdkjob.DecodeParams(r.Parameters, in); err != nil {
		return nil, err
	}
	if in.TaskDefinition == nil {
		return nil, sdkjob.ParamsFailure("The field 'TaskDefinition' is required but was missing")
	}
	if r.Pattern == integration.Sync && in.StartedBy == nil {
		in.StartedBy = aws.String(startedBy)
	}
	if in.ClientToken == nil {
		// The same each time the task is dispatched: ECS answers a
		// second RunTask with the token (within 24 hours) with the tasks
		// of the first instead of running others.
		if token := sdkjob.StartToken(r); token != "" {
			in.ClientToken = aws.String(token)
		}
	}
	return in, nil
}

// wait waits for the started tasks to stop and answers as AWS does: the
// task's description (a list of them for several), or the failure of the
// first that failed. A cancelled wait stops the tasks.
func (c *runTask) wait(ctx context.Context, started []types.Task) (any, error) {
	if len(started) == 0 {
		return nil, failure.New(ErrorUnknown, "RunTask started no task")
	}
	cluster, arns := started[0].ClusterArn, make([]string, len(started))
	for i, t := range started {
		arns[i] = aws.ToString(t.TaskArn)
	}
	var tasks []types.Task
	err := sdkjob.Poll(ctx, func(ctx context.Context) (bool, error) {
		res, err := c.client.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: cluster, Tasks: arns})
		if err != nil {
			return false, serviceFailure(err)
		}
		if len(res.Failures) > 0 {
			return false, failure.New(failure.TaskFailed, jsonvalue.String(render.Object(res)))
		}
		tasks = res.Tasks
		return allStopped(tasks, len(arns)), nil
	})
	if ctx.Err() != nil {
		c.stop(ctx, cluster, arns)
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return result(tasks)
}

// result is the result of stopped tasks, or the failure of the first
// that failed.
func result(tasks []types.Task) (any, error) {
	list := make([]any, len(tasks))
	for i, t := range tasks {
		list[i] = render.Object(t)
		if failed(t) {
			return nil, failure.New(failure.TaskFailed, jsonvalue.String(list[i]))
		}
	}
	if len(list) == 1 {
		return list[0], nil
	}
	return list, nil
}

func allStopped(tasks []types.Task, n int) bool {
	if len(tasks) < n {
		return false
	}
	for _, t := range tasks {
		if aws.ToString(t.LastStatus) != stopped {
			return false
		}
	}
	return true
}

// failed reports whether a stopped task failed: a container exited with
// a non-zero code, or never ran.
func failed(t types.Task) bool {
	if len(t.Containers) == 0 {
		return true
	}
	for _, c := range t.Containers {
		if c.ExitCode == nil || *c.ExitCode != 0 {
			return true
		}
	}
	return false
}

// stop stops the tasks of a cancelled task. Its result is no longer
// wanted, so a failure to stop is only logged.
func (c *runTask) stop(ctx context.Context, cluster *string, arns []string) {
	ctx, cancel := sdkjob.StopContext(ctx)
	defer cancel()
	for _, arn := range arns {
		_, err := c.client.StopTask(ctx, &ecs.StopTaskInput{Cluster: cluster, Task: aws.String(arn), Reason: aws.String(stopReason)})
		if err != nil {
			c.log.WarnContext(ctx, "ecs: stop the task of a cancelled task", "task_arn", arn, "error", err)
		}
	}
}

func serviceFailure(err error) error {
	return integration.ServiceFailure("ECS", "AmazonECS", err)
}
