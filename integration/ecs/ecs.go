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
// (ECS.ClusterNotFoundException). The calls are made from ECS's API model
// by the aws-sdk integration's client (sdkjob.Service).
package ecs

import (
	"context"
	"log/slog"

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

func init() {
	integration.Register(integration.Module{
		Resource: Resource,
		Patterns: []integration.Pattern{integration.Sync, integration.WaitForTaskToken},
		New:      newRunTask,
	})
}

type runTask struct {
	ecs *sdkjob.Service
	log *slog.Logger
}

func newRunTask(cfg *integration.Config) (integration.Integration, error) {
	svc := sdkjob.NewService(cfg, "ecs", "ECS", "AmazonECS")
	// The Java SDK's ECS models make unset lists [].
	svc.Options.EmptyLists = true
	return &runTask{ecs: svc, log: cfg.Logger}, nil
}

// task is a task RunTask started.
type task struct{ ClusterArn, TaskArn string }

// Call runs the task and, for .sync, waits for it to stop.
func (c *runTask) Call(ctx context.Context, r *integration.Request) (any, error) {
	in, err := c.request(r)
	if err != nil {
		return nil, err
	}
	var started struct {
		Tasks []struct{ ClusterArn, TaskArn *string }
	}
	if sdkjob.Started(r, &started) && len(started.Tasks) > 0 {
		// Run before a restart: its tasks are followed.
		tasks := make([]task, len(started.Tasks))
		for i, t := range started.Tasks {
			tasks[i] = task{ClusterArn: deref(t.ClusterArn), TaskArn: deref(t.TaskArn)}
		}
		return c.wait(ctx, tasks)
	}
	startCtx, cancel := sdkjob.StartContext(ctx)
	reply, err := c.ecs.Call(startCtx, "RunTask", in)
	cancel()
	if err != nil {
		return nil, err
	}
	res := reply.Result
	failures, _ := sdkjob.Member(res, "Failures").([]any)
	switch {
	case r.Pattern == integration.RequestResponse:
	case len(failures) > 0:
		return nil, failure.New(ErrorUnknown, jsonvalue.String(res))
	case r.Pattern == integration.Sync:
		r.Submit(sdkjob.WithReplyMetadata(res.Clone(), reply))
		list, _ := sdkjob.Member(res, "Tasks").([]any)
		tasks := make([]task, len(list))
		for i, t := range list {
			tasks[i] = task{ClusterArn: sdkjob.Text(t, "ClusterArn"), TaskArn: sdkjob.Text(t, "TaskArn")}
		}
		return c.wait(ctx, tasks)
	}
	return sdkjob.WithReplyMetadata(res, reply), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// request is the RunTask request of the Parameters.
func (c *runTask) request(r *integration.Request) (*jsonvalue.Object, error) {
	var in *jsonvalue.Object
	switch p := r.Parameters.(type) {
	case nil:
		in = jsonvalue.NewObject(0)
	case *jsonvalue.Object:
		in = p.Clone()
	default:
		return nil, sdkjob.ParamsFailure("The Parameters must be an object, not %s", jsonvalue.TypeName(p))
	}
	if err := c.ecs.Check("RunTask", in); err != nil {
		return nil, err
	}
	if v, ok := in.Get("TaskDefinition"); !ok || v == nil {
		return nil, sdkjob.ParamsFailure("The field 'TaskDefinition' is required but was missing")
	}
	if v, ok := in.Get("StartedBy"); r.Pattern == integration.Sync && (!ok || v == nil) {
		in.Set("StartedBy", startedBy)
	}
	if v, ok := in.Get("ClientToken"); !ok || v == nil {
		// The same each time the task is dispatched: ECS answers a
		// second RunTask with the token (within 24 hours) with the tasks
		// of the first instead of running others.
		if token := sdkjob.StartToken(r); token != "" {
			in.Set("ClientToken", token)
		}
	}
	return in, nil
}

// wait waits for the started tasks to stop and answers as AWS does: the
// task's description (a list of them for several), or the failure of the
// first that failed. A cancelled wait stops the tasks.
func (c *runTask) wait(ctx context.Context, started []task) (any, error) {
	if len(started) == 0 {
		return nil, failure.New(ErrorUnknown, "RunTask started no task")
	}
	cluster, arns := started[0].ClusterArn, make([]any, len(started))
	for i, t := range started {
		arns[i] = t.TaskArn
	}
	var tasks []any
	err := sdkjob.Poll(ctx, func(ctx context.Context) (bool, error) {
		in := jsonvalue.NewObject(2)
		if cluster != "" {
			in.Set("Cluster", cluster)
		}
		in.Set("Tasks", arns)
		reply, err := c.ecs.Call(ctx, "DescribeTasks", in)
		if err != nil {
			return false, err
		}
		if failures, _ := sdkjob.Member(reply.Result, "Failures").([]any); len(failures) > 0 {
			return false, failure.New(failure.TaskFailed, jsonvalue.String(reply.Result))
		}
		tasks, _ = sdkjob.Member(reply.Result, "Tasks").([]any)
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
func result(tasks []any) (any, error) {
	for _, t := range tasks {
		if failed(t) {
			return nil, failure.New(failure.TaskFailed, jsonvalue.String(t))
		}
	}
	if len(tasks) == 1 {
		return tasks[0], nil
	}
	return tasks, nil
}

func allStopped(tasks []any, n int) bool {
	if len(tasks) < n {
		return false
	}
	for _, t := range tasks {
		if sdkjob.Text(t, "LastStatus") != stopped {
			return false
		}
	}
	return true
}

// failed reports whether a stopped task failed: a container exited with
// a non-zero code, or never ran.
func failed(t any) bool {
	containers, _ := sdkjob.Member(t, "Containers").([]any)
	if len(containers) == 0 {
		return true
	}
	for _, c := range containers {
		code, ok := sdkjob.Member(c, "ExitCode").(jsonvalue.Number)
		if !ok || string(code) != "0" {
			return true
		}
	}
	return false
}

// stop stops the tasks of a cancelled task. Its result is no longer
// wanted, so a failure to stop is only logged.
func (c *runTask) stop(ctx context.Context, cluster string, arns []any) {
	ctx, cancel := sdkjob.StopContext(ctx)
	defer cancel()
	for _, arn := range arns {
		in := jsonvalue.NewObject(3)
		if cluster != "" {
			in.Set("Cluster", cluster)
		}
		in.Set("Task", arn)
		in.Set("Reason", stopReason)
		if _, err := c.ecs.Call(ctx, "StopTask", in); err != nil {
			c.log.WarnContext(ctx, "ecs: stop the task of a cancelled task", "task_arn", arn, "error", err)
		}
	}
}
