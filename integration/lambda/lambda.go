// Package lambda is the AWS Lambda integration: the optimized
// arn:aws:states:::lambda:invoke (request-response and .waitForTaskToken)
// and the plain function ARN resource
// (arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]).
//
// An invoke goes to a local function when one is configured under the
// function's name (see Local), else through the AWS SDK for Go to the
// endpoint configured for "lambda" (a Lambda emulator, or AWS itself).
// A registry's local functions are those of its --function options, and
// those put while it runs: LocalOf(registry).Put(name, &Handler{...})
// adds or replaces one (a deployed template's), Remove removes one; the
// registry's Close stops their processes.
//
//	lambda:invoke      result {ExecutedVersion, Payload, SdkHttpMetadata, SdkResponseMetadata, StatusCode}
//	function ARN       result the payload itself
//	function error     error the payload's errorType (Lambda.Unknown without one), cause the payload
//	service error      Lambda.<Exception> (Lambda.ResourceNotFoundException, Lambda.SdkClientException, ...)
package lambda

import (
	"context"
	"encoding/base64"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/jsonvalue"
)

// InvokeResource is the resource ARN of the optimized integration.
const InvokeResource = integration.ResourcePrefix + "lambda:invoke"

func init() {
	integration.Register(integration.Module{
		Resource: InvokeResource,
		Patterns: []integration.Pattern{integration.WaitForTaskToken},
		New:      newInvoker,
	})
	integration.Register(integration.Module{
		Resource: integration.FunctionResource,
		New:      newInvoker,
	})
}

// invoker calls functions: local ones by name, the others through the
// Lambda API.
type invoker struct {
	client *lambda.Client
	local  *Local
}

func newInvoker(cfg *integration.Config) (integration.Integration, error) {
	awsCfg, endpoint, err := cfg.AWSConfig(context.Background(), "lambda")
	if err != nil {
		return nil, err
	}
	client := lambda.NewFromConfig(awsCfg, func(o *lambda.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	local, err := localOf(cfg)
	if err != nil {
		return nil, err
	}
	return &invoker{client: client, local: local}, nil
}

// localKey keeps a registry's local functions (see
// integration.Config.Shared): the optimized integration and the function
// ARN resource share them, and so the warm processes of handler
// functions; the registry's Close stops these.
type localKey struct{}

func localOf(cfg *integration.Config) (*Local, error) {
	v, err := cfg.Shared(localKey{}, func() (any, error) {
		// The settings first: the handlers' dependencies are installed
		// as they are added, by the interpreters of --runtime, into
		// the build cache.
		l := newLocal(cfg.PayloadLimit, cfg.Logger)
		if cfg.Region != "" {
			l.region = cfg.Region
		}
		if cfg.Account != "" {
			l.account = cfg.Account
		}
		l.setEndpoints(cfg.Endpoint, cfg.Endpoints)
		l.SetInterpreters(cfg.Runtimes)
		l.SetBuildCache(cfg.BuildCache)
		if err := l.addSpecs(cfg.Functions); err != nil {
			l.Close()
			return nil, err
		}
		return l, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Local), nil
}

// LocalOf returns the local functions of a registry: those of its
// Config.Functions (--function), to which functions are added, replaced
// and removed while the server runs (Local.Put, Local.Remove: a
// deployment's). The registry's Close stops their processes. Nil for a
// registry not made by integration.New.
func LocalOf(reg *integration.Registry) *Local {
	l, _ := reg.Shared(localKey{}).(*Local)
	return l
}

// Call invokes the function a task names.
func (iv *invoker) Call(ctx context.Context, r *integration.Request) (any, error) {
	in, err := invokeInput(r)
	if err != nil {
		return nil, err
	}
	res, err := iv.invoke(WithTraceParent(ctx, r.TraceParent), in)
	if err != nil {
		return nil, err
	}
	return answer(r, res)
}

// FunctionNamed returns the function a Lambda Task names: the ARN of a
// function resource, the FunctionName of lambda:invoke; "" for any other
// resource.
func FunctionNamed(resource string, params any) string {
	if integration.IsFunctionArn(resource) {
		return resource
	}
	if resource != InvokeResource && resource != InvokeResource+string(integration.WaitForTaskToken) {
		return ""
	}
	name, _ := integration.StringParam(params, "FunctionName")
	return name
}

// InvokeLocal carries out a Lambda Task on a local function, answering as
// the integration does.
func InvokeLocal(ctx context.Context, fn *Function, resource string, params any) (any, error) {
	r := &integration.Request{Resource: resource, Parameters: params}
	if integration.IsFunctionArn(resource) {
		r.Service = integration.FunctionService
	}
	in, err := invokeInput(r)
	if err != nil {
		return nil, err
	}
	res, err := fn.Invoke(ctx, in)
	if err != nil {
		return nil, err
	}
	return answer(r, res)
}

// answer is a task's result from an Invoke response: the payload for a
// function ARN, AWS's envelope for lambda:invoke, a function error as the
// task's failure.
func answer(r *integration.Request, res *lambda.InvokeOutput) (any, error) {
	payload := payloadValue(res.Payload)
	if res.FunctionError != nil {
		return nil, functionError(res.Payload, payload)
	}
	if r.Service == integration.FunctionService {
		return payload, nil
	}
	out := jsonvalue.NewObject(5)
	if res.ExecutedVersion != nil {
		out.Set("ExecutedVersion", *res.ExecutedVersion)
	}
	if res.LogResult != nil {
		out.Set("LogResult", *res.LogResult)
	}
	out.Set("Payload", payload)
	integration.SdkMetadata(out, res.ResultMetadata)
	out.Set("StatusCode", jsonvalue.NumberFromInt(int64(res.StatusCode)))
	return out, nil
}

// invoke runs the function locally when one is configured for it.
func (iv *invoker) invoke(ctx context.Context, in *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
	if err := iv.local.wait(ctx); err != nil {
		return nil, err
	}
	if fn := iv.local.Lookup(aws.ToString(in.FunctionName)); fn != nil {
		return fn.Invoke(ctx, in)
	}
	res, err := iv.client.Invoke(ctx, in, traceHeaderOption(ctx))
	if err != nil {
		return nil, integration.ServiceFailure("Lambda", "AWSLambda", err)
	}
	return res, nil
}

// invokeInput builds the Invoke request: from the parameters of
// lambda:invoke (FunctionName, Payload, Qualifier, InvocationType,
// LogType, ClientContext), or for a function ARN from the ARN, with the
// state's effective parameters as the payload.
func invokeInput(r *integration.Request) (*lambda.InvokeInput, error) {
	if r.Service == integration.FunctionService {
		return &lambda.InvokeInput{FunctionName: aws.String(r.Resource), Payload: jsonvalue.Marshal(r.Parameters)}, nil
	}
	params, ok := r.Parameters.(*jsonvalue.Object)
	if !ok {
		return nil, failure.Newf(failure.TaskFailed,
			"The parameters of lambda:invoke must be an object, not %s", jsonvalue.TypeName(r.Parameters))
	}
	name, err := integration.RequireString(params, "FunctionName")
	if err != nil {
		return nil, err
	}
	in := &lambda.InvokeInput{FunctionName: aws.String(name)}
	for key, v := range params.All() {
		switch key {
		case "FunctionName":
		case "Payload":
			// A string payload is sent as it is; any other value as JSON; a
			// null one not at all (the function gets {}).
			if v == nil {
				break
			}
			if s, isString := v.(string); isString {
				in.Payload = []byte(s)
			} else {
				in.Payload = jsonvalue.Marshal(v)
			}
		case "Qualifier":
			in.Qualifier, err = stringMember(key, v)
		case "InvocationType":
			var s *string
			s, err = stringMember(key, v)
			in.InvocationType = types.InvocationType(aws.ToString(s))
		case "LogType":
			var s *string
			s, err = stringMember(key, v)
			in.LogType = types.LogType(aws.ToString(s))
		case "ClientContext":
			// AWS's integration takes the client context as JSON (or its
			// base64) and sends it base64-encoded.
			var s *string
			if s, err = stringMember(key, v); err == nil {
				if _, decodeErr := base64.StdEncoding.DecodeString(*s); decodeErr != nil {
					s = aws.String(base64.StdEncoding.EncodeToString([]byte(*s)))
				}
				in.ClientContext = s
			}
		default:
			return nil, failure.Newf(failure.TaskFailed,
				"The field '%s' is not supported by lambda:invoke; it takes FunctionName, Payload, Qualifier, InvocationType, LogType and ClientContext", key)
		}
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// stringMember returns a parameter that must be a string.
func stringMember(key string, v any) (*string, error) {
	s, ok := v.(string)
	if !ok {
		return nil, failure.Newf(failure.TaskFailed,
			"The field '%s' must be a string, not %s", key, jsonvalue.TypeName(v))
	}
	return aws.String(s), nil
}

// payloadValue is a function's payload as a value: its JSON, or the text
// itself when it is not JSON (a function may return raw bytes).
func payloadValue(b []byte) any {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if v, err := jsonvalue.Parse(b); err == nil {
		return v
	}
	return string(b)
}

// functionError is the failure of a function that raised an error: named
// after the payload's errorType, with the payload as the cause.
func functionError(raw []byte, payload any) *failure.Failure {
	name := "Lambda.Unknown"
	if obj, ok := payload.(*jsonvalue.Object); ok {
		if t, ok := obj.Get("errorType"); ok {
			if s, ok := t.(string); ok && s != "" {
				name = s
			}
		}
	}
	return failure.New(name, string(raw))
}
