package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	"stepwise/deploy"
	"stepwise/engine/task"
	"stepwise/integration/mock"
	"stepwise/observe/tracing"
	"stepwise/store"
)

// An Option completes a server's configuration with what config.Serve
// does not hold: the parts a command or a test hands the server. Each
// option checks its own value.
type Option func(*options) error

// options are the options given to New.
type options struct {
	log           *slog.Logger
	metrics       bool
	mocks         *mock.Config
	events        *Events
	tracing       *Tracing
	deployAtStart func(context.Context, *deploy.Deployer) error
	tasks         task.Runner
	store         store.Driver
}

func defaultOptions() options {
	return options{log: slog.New(slog.DiscardHandler), metrics: true}
}

// WithLogger sends the server's logs to log (by default they are
// dropped).
func WithLogger(log *slog.Logger) Option {
	return func(o *options) error {
		if log == nil {
			return errors.New("server: WithLogger: the logger is nil")
		}
		o.log = log
		return nil
	}
}

// WithMetrics turns the Prometheus metrics (GET /metrics, and their
// counting) on or off; they are on by default.
func WithMetrics(on bool) Option {
	return func(o *options) error {
		o.metrics = on
		return nil
	}
}

// WithMocks runs the test cases of a mock configuration (Step Functions
// Local's MockConfigFile): an execution started as
// "<stateMachineArn>#<TestCase>" runs its state machine's test case.
func WithMocks(m *mock.Config) Option {
	return func(o *options) error {
		if m == nil {
			return errors.New("server: WithMocks: the mock configuration is nil")
		}
		o.mocks = m
		return nil
	}
}

// Events are the destinations of executions' status-change events
// (EventBridge's shape).
type Events struct {
	// Webhooks are URLs every event is POSTed to, signed with
	// HMAC-SHA256 under Secret.
	Webhooks []string
	Secret   string
	// Bus is an EventBridge event bus (name or ARN) every event is put
	// on, at the endpoint configured for events.
	Bus string
	// File is a file every event is appended to, a JSON object a line.
	File string
}

// WithEvents delivers executions' status-change events to e's
// destinations.
func WithEvents(e Events) Option {
	return func(o *options) error {
		for _, raw := range e.Webhooks {
			u, err := url.Parse(raw)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return &ConfigError{fmt.Errorf("events-webhook %q: not an http or https URL", raw)}
			}
		}
		o.events = &e
		return nil
	}
}

// Tracing makes OpenTelemetry traces of executions.
type Tracing struct {
	// All traces every execution, whatever its state machine's
	// tracingConfiguration says.
	All bool
	// Endpoint is the OTLP collector's base URL (empty: the standard
	// OTEL_EXPORTER_OTLP_* variables say).
	Endpoint string
	// Client sends the spans instead of an OTLP client of Endpoint.
	Client tracing.Client
	// Ratio samples that share of the traces by their ID (0: all).
	Ratio float64
	// Version is the server's version in the traces' resource.
	Version string
}

// WithTracing traces executions as t says.
func WithTracing(t Tracing) Option {
	return func(o *options) error {
		if t.Ratio < 0 || t.Ratio > 1 {
			return fmt.Errorf("server: WithTracing: ratio %g is not between 0 and 1", t.Ratio)
		}
		o.tracing = &t
		return nil
	}
}

// WithDeployAtStart has deploy run as the server starts, once the engine
// resumed and before the server listens, with the server's deployer
// (serve --template). Tasks that invoke a local function wait until it
// returns; its error stops the start.
func WithDeployAtStart(deploy func(ctx context.Context, d *deploy.Deployer) error) Option {
	return func(o *options) error {
		if deploy == nil {
			return errors.New("server: WithDeployAtStart: the function is nil")
		}
		o.deployAtStart = deploy
		return nil
	}
}

// WithTasks runs the engine's tasks with r instead of the built-in
// integrations configured by config.Serve's Integrations. The server
// does not close r. An *integration.Registry keeps what the server does
// with its own (calls of aws-sdk:sfn to the server itself, TestState's
// Task states, local functions); another runner only runs tasks.
func WithTasks(r task.Runner) Option {
	return func(o *options) error {
		if r == nil {
			return errors.New("server: WithTasks: the runner is nil")
		}
		o.tasks = r
		return nil
	}
}

// WithStore serves from drv instead of opening config.Serve's DB. The
// server does not close drv.
func WithStore(drv store.Driver) Option {
	return func(o *options) error {
		if drv == nil {
			return errors.New("server: WithStore: the store is nil")
		}
		o.store = drv
		return nil
	}
}

// ConfigError is a setting the server cannot take, found as it is
// assembled or started (a webhook that is not a URL, a tracing endpoint,
// an address other than a loopback one): the command reports it as bad
// usage.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }
