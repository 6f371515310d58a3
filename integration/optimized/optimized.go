// Package optimized serves the optimized integrations of AWS Step
// Functions that the older modules (lambda, dynamodb, sqs, sns, events,
// ecs, batch, glue, sfn) do not: Athena, SageMaker, EMR, EMR on EKS, EMR
// Serverless, CodeBuild, MediaConvert, Glue DataBrew, EKS, Bedrock and
// API Gateway.
//
// All but bedrock:invokeModel and apigateway:invoke are rows of one table
// (table.go): the Step Functions resource, the service API operation it
// calls through the AWS SDK integration's models (package awssdk: the
// Parameters are that operation's request members, in PascalCase, and the
// result its answer), and for a job a .sync waits for, the operation that
// describes the job, where its status is in the answer, which statuses end
// it well or badly, and the operation that stops it when the task is
// cancelled. A .sync task polls with back-off (sdkjob.Poll); a job that
// ends badly fails the task with States.TaskFailed and the description,
// as JSON text, as the cause.
//
// Calls go to the endpoint configured for the resource's service name
// (elasticmapreduce, emr-serverless, athena, ...) or for the API's own
// (emr, bedrock-runtime), else --aws-endpoint, else AWS's.
package optimized

import (
	"context"
	"os"
	"strings"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	"stepwise/integration/awssdk/awsmodel"
	"stepwise/integration/sdkjob"
	"stepwise/jsonvalue"
)

// action is one optimized resource served through a service's API model.
type action struct {
	// service and name make the resource: arn:aws:states:::<service>:<name>.
	service, name string
	// model and op are the API called: the model's service name and the
	// operation (camelCase).
	model, op string
	// in, when set, makes the operation's request from the Parameters.
	in func(p *jsonvalue.Object) (*jsonvalue.Object, error)
	// out, when set, makes the task's result from the answer.
	out func(p, answer *jsonvalue.Object) *jsonvalue.Object
	// token says .waitForTaskToken is offered.
	token bool
	// job, when set, is what .sync waits for.
	job *job
}

// job describes how a .sync task follows what it started.
type job struct {
	// describe is the operation that reads the job, with the request
	// describeIn makes from the Parameters and the start's result.
	describe   string
	describeIn func(p, started *jsonvalue.Object) *jsonvalue.Object
	// status is the path of the job's status in describe's answer;
	// succeeded and failed are the statuses that end it.
	status            []any
	succeeded, failed []string
	// gone says a job no longer found (ResourceNotFoundException) has
	// succeeded: a deletion waited for.
	gone bool
	// stop, when set, stops the job of a cancelled task, with the
	// request stopIn makes.
	stop   string
	stopIn func(p, started *jsonvalue.Object) *jsonvalue.Object
	// result, when set, makes the task's result from the last
	// description (the description itself otherwise).
	result func(described *jsonvalue.Object) *jsonvalue.Object
	// keepStarted makes the start's result the task's result when the
	// job ends well, as AWS answers createCluster.sync: {"ClusterArn",
	// "ClusterId"}, which the next states read ($.ClusterId).
	keepStarted bool
}

// aliases are the API model names of the resources' services where they
// differ; an endpoint configured for either name is used.
var aliases = map[string]string{"elasticmapreduce": "emr"}

func init() {
	seen := map[string]bool{}
	for i := range table {
		a := &table[i]
		resource := integration.ResourcePrefix + a.service + ":" + a.name
		var patterns []integration.Pattern
		if a.job != nil {
			patterns = append(patterns, integration.Sync)
		}
		if a.token {
			patterns = append(patterns, integration.WaitForTaskToken)
		}
		integration.Register(integration.Module{Resource: resource, Patterns: patterns,
			New: func(cfg *integration.Config) (integration.Integration, error) { return newCaller(cfg, a), nil }})
		if !seen[a.model] {
			seen[a.model] = true
			integration.RegisterServices(a.model)
		}
	}
}

// caller serves one action.
type caller struct {
	a      *action
	client *awssdk.Client
}

// clientKey is the key of the registry's shared AWS SDK client.
type clientKey struct{}

func newCaller(cfg *integration.Config, a *action) *caller {
	return &caller{a: a, client: sdkClient(cfg)}
}

// sdkClient is the AWS SDK client of a configuration: an endpoint given
// for a resource's service name serves its API's model name too.
func sdkClient(cfg *integration.Config) *awssdk.Client {
	c, _ := cfg.Shared(clientKey{}, func() (any, error) { return newSDKClient(cfg), nil })
	return c.(*awssdk.Client)
}

func newSDKClient(cfg *integration.Config) *awssdk.Client {
	own := *cfg
	own.Endpoints = map[string]string{}
	for k, v := range cfg.Endpoints {
		own.Endpoints[k] = v
	}
	for from, to := range aliases {
		if u, ok := cfg.Endpoints[from]; ok {
			if _, set := own.Endpoints[to]; !set {
				own.Endpoints[to] = u
			}
		}
	}
	if u, ok := cfg.Endpoints["bedrock"]; ok {
		if _, set := own.Endpoints["bedrock-runtime"]; !set {
			own.Endpoints["bedrock-runtime"] = u
		}
	}
	return awssdk.New(&own, &awsmodel.Models{Dir: os.Getenv(awssdk.EnvModels)})
}

// call makes one API call of the model.
func (c *caller) call(ctx context.Context, op string, params *jsonvalue.Object) (*jsonvalue.Object, error) {
	out, err := c.client.Call(ctx, &integration.Request{
		Resource: integration.ResourcePrefix + "aws-sdk:" + c.a.model + ":" + op,
		Service:  "aws-sdk:" + c.a.model, Action: op, Parameters: params,
	})
	if err != nil {
		return nil, err
	}
	o, ok := out.(*jsonvalue.Object)
	if !ok {
		o = jsonvalue.NewObject(0)
	}
	return o, nil
}

// Call makes the action's call and, for .sync, follows its job.
func (c *caller) Call(ctx context.Context, r *integration.Request) (any, error) {
	p, ok := r.Parameters.(*jsonvalue.Object)
	if r.Parameters == nil {
		p, ok = jsonvalue.NewObject(0), true
	}
	if !ok {
		return nil, sdkjob.ParamsFailure("The Parameters must be an object, not %s", jsonvalue.TypeName(r.Parameters))
	}
	if r.Pattern == integration.Sync && r.Submitted != nil {
		if started, ok := r.Submitted.(*jsonvalue.Object); ok {
			return c.wait(ctx, p, started) // started before a restart
		}
	}
	req := p
	if c.a.in != nil {
		var err error
		if req, err = c.a.in(p); err != nil {
			return nil, err
		}
	}
	callCtx := ctx
	if r.Pattern == integration.Sync {
		var cancel context.CancelFunc
		callCtx, cancel = sdkjob.StartContext(ctx)
		defer cancel()
	}
	out, err := c.call(callCtx, c.a.op, req)
	if err != nil {
		return nil, err
	}
	if c.a.out != nil {
		out = c.a.out(p, out)
	}
	if r.Pattern != integration.Sync {
		return out, nil
	}
	r.Submit(out)
	return c.wait(ctx, p, out)
}

// wait polls the job until it ends, and stops it when ctx ends first.
func (c *caller) wait(ctx context.Context, p, started *jsonvalue.Object) (any, error) {
	j := c.a.job
	var last *jsonvalue.Object
	var result any
	err := sdkjob.Poll(ctx, func(ctx context.Context) (bool, error) {
		d, err := c.call(ctx, j.describe, j.describeIn(p, started))
		if err != nil {
			if f := integration.AsFailure(err); j.gone && strings.Contains(f.Name, "NotFound") {
				result = last
				if result == nil {
					result = jsonvalue.NewObject(0)
				}
				return true, nil
			}
			return false, err
		}
		last = d
		status, _ := member(d, j.status...).(string)
		switch {
		case contains(j.succeeded, status):
			result = d
			if j.result != nil {
				result = j.result(d)
			}
			if j.keepStarted {
				result = started
			}
			return true, nil
		case contains(j.failed, status):
			return true, failure.New(failure.TaskFailed, jsonvalue.String(d))
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil && j.stop != "" {
		stopCtx, cancel := sdkjob.StopContext(ctx)
		defer cancel()
		in := j.describeIn(p, started)
		if j.stopIn != nil {
			in = j.stopIn(p, started)
		}
		c.call(stopCtx, j.stop, in) //nolint:errcheck // the task is over either way
	}
	if err != nil {
		return nil, err
	}
	return result, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// member reads a value at a path of names and array indexes; nil when
// there is none.
func member(v any, path ...any) any {
	for _, step := range path {
		switch k := step.(type) {
		case string:
			o, ok := v.(*jsonvalue.Object)
			if !ok {
				return nil
			}
			v, _ = o.Get(k)
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// obj builds an object of name, value pairs, leaving out nil values.
func obj(kv ...any) *jsonvalue.Object {
	o := jsonvalue.NewObject(len(kv) / 2)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != nil {
			o.Set(kv[i].(string), kv[i+1])
		}
	}
	return o
}

// ids makes a request of members read from the Parameters ("p:Name") or
// the start's result ("s:Path.To"): pairs of the member's name and where
// it is read from; a source in brackets ("[s:StepId]") is sent as a list
// of that one value.
func ids(pairs ...string) func(p, started *jsonvalue.Object) *jsonvalue.Object {
	return func(p, started *jsonvalue.Object) *jsonvalue.Object {
		o := jsonvalue.NewObject(len(pairs) / 2)
		for i := 0; i+1 < len(pairs); i += 2 {
			src := pairs[i+1]
			list := strings.HasPrefix(src, "[")
			src = strings.Trim(src, "[]")
			from := p
			if strings.HasPrefix(src, "s:") {
				from = started
			}
			var path []any
			for _, s := range strings.Split(src[2:], ".") {
				path = append(path, s)
			}
			v := member(from, path...)
			if v == nil {
				continue
			}
			if list {
				v = []any{v}
			}
			o.Set(pairs[i], v)
		}
		return o
	}
}

// rename makes a request from the Parameters with members renamed (old,
// new pairs; a new name in brackets takes a list of the one value).
func rename(pairs ...string) func(p *jsonvalue.Object) (*jsonvalue.Object, error) {
	names := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		names[pairs[i]] = pairs[i+1]
	}
	return func(p *jsonvalue.Object) (*jsonvalue.Object, error) {
		o := jsonvalue.NewObject(len(p.Keys()))
		for _, k := range p.Keys() {
			v, _ := p.Get(k)
			n, ok := names[k]
			if !ok {
				o.Set(k, v)
				continue
			}
			if strings.HasPrefix(n, "[") {
				n, v = strings.Trim(n, "[]"), []any{v}
			}
			o.Set(n, v)
		}
		return o, nil
	}
}
