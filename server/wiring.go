package server

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"

	"stepwise/deploy"
	"stepwise/integration"
	"stepwise/store"
	"stepwise/wiring"
	_ "stepwise/wiring/queue" // sqs, sns, s3
)

// buildWiring makes the host of the deployed stacks' event sources: a
// function's queue, a rule's targets, an API's routes. Its kinds reach
// the server through wiring.Env: the local functions, the API in
// process, the AWS endpoints.
func (s *Server) buildWiring() {
	ic := integration.Config{Region: s.cfg.Region, Account: s.cfg.Account,
		Endpoint: s.cfg.Integrations.AWSEndpoint, Endpoints: s.cfg.Integrations.Endpoints}
	env := &wiring.Env{
		Call:   s.selfCall,
		Region: s.cfg.Region, Account: s.cfg.Account,
		Log: s.log.With("component", "wiring"),
		AWS: func(ctx context.Context, service string) (aws.Config, error) {
			cfg, endpoint, err := ic.AWSConfig(ctx, service)
			if err != nil {
				return aws.Config{}, err
			}
			if endpoint == "" {
				return aws.Config{}, fmt.Errorf("no endpoint is given for %s (serve --aws-endpoint or --endpoint %s=URL)", service, service)
			}
			cfg.BaseEndpoint = aws.String(endpoint)
			return cfg, nil
		},
	}
	if s.local != nil {
		env.Invoke = s.invokeLocal
	}
	s.wiring = wiring.NewHost(env)
	s.dep.Wiring = s.wiring
}

// invokeLocal invokes a local function as Lambda's event sources do.
func (s *Server) invokeLocal(ctx context.Context, name string, payload []byte) ([]byte, bool, error) {
	fn := s.local.Lookup(name)
	if fn == nil {
		return nil, false, fmt.Errorf("function %s is not deployed here", name)
	}
	out, err := fn.Invoke(ctx, &lambdasdk.InvokeInput{FunctionName: aws.String(name), Payload: payload})
	if err != nil {
		return nil, false, err
	}
	return out.Payload, out.FunctionError != nil, nil
}

// restoreWires starts again the event sources of the stacks deployed
// before, once the service runs (they start executions).
func restoreWires(ctx context.Context, records store.StackStore, host *wiring.Host) error {
	d := &deploy.Deployer{Records: stackRecords{records}, Wiring: host}
	return d.Restore(ctx)
}

// Wiring is the host of the deployed stacks' event sources.
func (s *Server) Wiring() *wiring.Host { return s.wiring }
