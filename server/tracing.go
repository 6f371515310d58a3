package server

import (
	"context"
	"log/slog"
	"time"

	"stepwise/engine"
	"stepwise/observe/tracing"
	"stepwise/service"
	"stepwise/store"
)

// startTracer makes the tracer t says; stop exports what is left once
// the engine has stopped.
func startTracer(ctx context.Context, t Tracing, st tracing.Store, log *slog.Logger) (_ *tracing.Tracer, stop func(), _ error) {
	client := t.Client
	if client == nil {
		var err error
		if client, err = tracing.NewClient(t.Endpoint); err != nil {
			return nil, nil, &ConfigError{err}
		}
	}
	tr, err := tracing.New(tracing.Config{Client: client, Store: st, All: t.All, Resource: tracing.Resource(ctx, t.Version), Logger: log, Ratio: t.Ratio})
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
