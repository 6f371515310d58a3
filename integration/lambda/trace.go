package lambda

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"stepwise/sfnapi"
)

// traceContext is the trace a function is invoked in: the W3C
// traceparent of the caller's span, and the same as X-Ray's header.
type traceContext struct{ parent, xray string }

type traceKey struct{}

// WithTraceParent makes the invokes under ctx carry the W3C traceparent
// of the caller's span (a Task's): a local function's handler finds it in
// its environment as Lambda sets it (_X_AMZN_TRACE_ID, and TRACEPARENT),
// a provided runtime's bootstrap in the Lambda-Runtime-Trace-Id header
// (and Traceparent), and an Invoke sent to Lambda carries it as
// X-Amzn-Trace-Id. An empty traceparent leaves ctx as it is.
func WithTraceParent(ctx context.Context, traceparent string) context.Context {
	xray := sfnapi.XRayTraceHeader(traceparent)
	if xray == "" {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, traceContext{parent: traceparent, xray: xray})
}

func traceOf(ctx context.Context) traceContext {
	tc, _ := ctx.Value(traceKey{}).(traceContext)
	return tc
}

// traceHeaderOption sets X-Amzn-Trace-Id on an Invoke request, as AWS
// services pass X-Ray's trace on, when ctx carries a trace.
func traceHeaderOption(ctx context.Context) func(*lambda.Options) {
	tc := traceOf(ctx)
	return func(o *lambda.Options) {
		if tc.xray == "" {
			return
		}
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Build.Add(middleware.BuildMiddlewareFunc("StepwiseTraceHeader", func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
				if req, ok := in.Request.(*smithyhttp.Request); ok {
					req.Header.Set("X-Amzn-Trace-Id", tc.xray)
				}
				return next.HandleBuild(ctx, in)
			}), middleware.After)
		})
	}
}
