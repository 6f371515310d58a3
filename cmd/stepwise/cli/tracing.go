package cli

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"stepwise/engine"
	"stepwise/observe/tracing"
	"stepwise/service"
	"stepwise/store"
)

// traceFlags turn executions' traces on.
type traceFlags struct {
	all      bool
	endpoint string
}

func (t *traceFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&t.all, "trace-all", false, "trace every execution, whatever its state machine's tracingConfiguration says (OpenTelemetry, over OTLP)")
	f.StringVar(&t.endpoint, "otel-endpoint", "", "OTLP collector's base URL the traces of executions go to, e.g. http://localhost:4318 (default: the standard OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and _PROTOCOL, _HEADERS variables)")
}

// on says whether traces are made: --trace-all, or an OTLP endpoint given
// by the flag or the environment (state machines whose
// tracingConfiguration is enabled are then traced).
func (t *traceFlags) on() bool {
	return t.all || t.endpoint != "" || tracing.EndpointFromEnv()
}

// start makes the tracer, nil when traces are off; stop exports what is
// left once the engine has stopped.
func (t *traceFlags) start(ctx context.Context, st tracing.Store, log *slog.Logger) (*tracing.Tracer, func(), error) {
	if !t.on() {
		return nil, func() {}, nil
	}
	ratio, err := tracing.RatioFromEnv()
	if err != nil {
		return nil, nil, &UsageError{err.Error()}
	}
	client, err := tracing.NewClient(t.endpoint)
	if err != nil {
		return nil, nil, &UsageError{err.Error()}
	}
	tr, err := tracing.New(tracing.Config{Client: client, Store: st, All: t.all, Resource: tracing.Resource(ctx, Version), Logger: log, Ratio: ratio})
	if err != nil {
		return nil, nil, err
	}
	return tr, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tr.Close(ctx); err != nil {
			log.Warn("serve: the last traces were not exported", "error", err)
		}
	}, nil
}

// wire makes the engine tell the tracer of its steps and give tasks their
// spans' traceparent.
func wireTracer(tr *tracing.Tracer, cfg *engine.Config, observers *observers) {
	if tr == nil {
		return
	}
	*observers = append(*observers, tr)
	cfg.TaskTrace = tr.TaskTraceParent
}

// tracerHook adds the tracer's cache of tracing configurations to the
// service's hook on stored state machines (after the hooks before it).
func tracerHook(tr *tracing.Tracer) func(*service.Config) {
	return func(c *service.Config) {
		if tr == nil {
			return
		}
		prev := c.OnStateMachine
		c.OnStateMachine = func(sm *store.StateMachine) {
			if prev != nil {
				prev(sm)
			}
			tr.Prime(sm)
		}
	}
}
