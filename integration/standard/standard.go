// Package standard pulls in the built-in integrations and builds the
// registry the server runs tasks with.
package standard

import (
	"fmt"
	"log/slog"
	"strings"

	"stepwise/config"
	"stepwise/integration"
	// The built-in integrations register themselves.
	_ "stepwise/integration/awssdk"
	_ "stepwise/integration/batch"
	_ "stepwise/integration/dynamodb"
	_ "stepwise/integration/ecs"
	_ "stepwise/integration/events"
	_ "stepwise/integration/glue"
	_ "stepwise/integration/http"
	_ "stepwise/integration/lambda"
	_ "stepwise/integration/optimized"
	_ "stepwise/integration/sfn"
	_ "stepwise/integration/sns"
	_ "stepwise/integration/sqs"
)

// New returns a registry of the built-in integrations.
func New(cfg integration.Config) (*integration.Registry, error) { return integration.New(cfg) }

// ForServe returns the registry "stepwise serve" runs tasks with; the
// server's API is given to it with SetSelf once it exists.
func ForServe(cfg *config.Serve, log *slog.Logger) (*integration.Registry, error) {
	for service, url := range cfg.Integrations.Endpoints {
		if !integration.KnownService(service) {
			return nil, fmt.Errorf("endpoint %s=%s: no integration calls a service named %s; the services are %s",
				service, url, service, strings.Join(integration.KnownServices(), ", "))
		}
	}
	return integration.New(Config(cfg, log))
}

// Config is the integrations' configuration of "stepwise serve": where
// AWS calls go, the local functions, the connections.
func Config(cfg *config.Serve, log *slog.Logger) integration.Config {
	return integration.Config{
		Region: cfg.Region, Account: cfg.Account,
		Endpoint: cfg.Integrations.AWSEndpoint, Endpoints: cfg.Integrations.Endpoints,
		Functions: cfg.Integrations.Functions, Runtimes: cfg.Integrations.Runtimes, BuildCache: cfg.Integrations.BuildCache,
		ConnectionsFile: cfg.Integrations.ConnectionsFile,
		HTTPTaskAllow:   cfg.Integrations.HTTPTaskAllow, PayloadLimit: cfg.PayloadLimit,
		Logger: log,
	}
}
