package lambda

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
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
	xray := xrayHeader(traceparent)
	if xray == "" {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, traceContext{parent: traceparent, xray: xray})
}

func traceOf(ctx context.Context) traceContext {
	tc, _ := ctx.Value(traceKey{}).(traceContext)
	return tc
}

// xrayHeader writes a W3C traceparent (00-TRACEID-SPANID-FLAGS) as X-Ray's
// trace header; "" for anything else.
func xrayHeader(traceparent string) string {
	p := strings.Split(traceparent, "-")
	if len(p) != 4 || len(p[1]) != 32 || len(p[2]) != 16 {
		return ""
	}
	sampled := "0"
	if p[3] == "01" {
		sampled = "1"
	}
	return "Root=1-" + p[1][:8] + "-" + p[1][8:] + ";Parent=" + p[2] + ";Sampled=" + sampled
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
