package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"stepwise/config"
	"stepwise/deploy"
	"stepwise/integration"
	"stepwise/integration/lambda"
	"stepwise/internal/boundedfile"
	"stepwise/store"
)

// newDeployer is the server's deployer: templates onto its service and
// scheduler, their functions into its local functions, their AWS
// resources at its --aws-endpoint.
func newDeployer(cfg *config.Serve, api *apiServer, records store.StackStore, local *lambda.Local, log *slog.Logger) *deploy.Deployer {
	d := &deploy.Deployer{
		Service:   api.svc,
		Scheduler: api.schedules,
		Records:   stackRecords{records},
		Log:       log,
	}
	if local != nil {
		d.Functions = localFunctions{local: local}
	}
	if ep := cfg.Integrations.AWSEndpoint; ep != "" {
		d.AWS = &deploy.AWSEndpoint{URL: ep, Region: cfg.Region,
			AccessKeyID: os.Getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: os.Getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: os.Getenv("AWS_SESSION_TOKEN")}
		if d.AWS.AccessKeyID == "" {
			d.AWS.AccessKeyID, d.AWS.SecretAccessKey = integration.LocalAccessKeyID, integration.LocalSecretAccessKey
		}
	}
	return d
}

// restoreFunctions puts back the local functions of the stacks deployed
// before (they live in memory). It needs only the records, not the
// service: a server calls it before the engine resumes its executions,
// whose tasks may invoke them.
func restoreFunctions(ctx context.Context, records store.StackStore, local *lambda.Local) error {
	if local == nil {
		return nil
	}
	d := &deploy.Deployer{Records: stackRecords{records}, Functions: localFunctions{local: local}}
	return d.Restore(ctx)
}

// deployTemplates deploys serve's --template files (or cdk.outs) as the
// server starts; adopt is --adopt.
func deployTemplates(ctx context.Context, dep *deploy.Deployer, paths, params []string, adopt bool, out func(*deploy.Report)) error {
	overrides, err := parseParameterOverrides(params)
	if err != nil {
		return err
	}
	for _, path := range paths {
		units, err := deployUnits(path, "", overrides, nil)
		if err != nil {
			return fmt.Errorf("--template %s: %w", path, err)
		}
		for _, u := range units {
			text, err := boundedfile.Read(ctx, u.templatePath, maxTemplateFile)
			if err != nil {
				return fmt.Errorf("--template: %w", err)
			}
			report, err := runDeploy(ctx, dep, &deployRequest{StackName: u.stackName, Template: string(text),
				TemplatePath: u.templatePath, BaseDir: u.baseDir, Parameters: u.params, Adopt: adopt})
			if report != nil {
				out(report)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// stackRecords keeps the deployer's records in the store.
type stackRecords struct{ st store.StackStore }

func (s stackRecords) GetStack(ctx context.Context, name string) ([]byte, error) {
	st, err := s.st.StackGet(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []byte(st.Body), nil
}

func (s stackRecords) PutStack(ctx context.Context, name string, body []byte) error {
	return s.st.StackPut(ctx, &store.Stack{Name: name, Body: string(body)})
}

func (s stackRecords) DeleteStack(ctx context.Context, name string) error {
	if err := s.st.StackDelete(ctx, name); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

func (s stackRecords) ListStacks(ctx context.Context) ([]string, error) {
	stacks, err := s.st.StackList(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(stacks))
	for i, st := range stacks {
		names[i] = st.Name
	}
	return names, nil
}

// localFunctions puts a template's functions into the server's local
// functions; those given by --function stay as they are.
type localFunctions struct {
	local *lambda.Local
}

func (l localFunctions) PutFunction(_ context.Context, f *deploy.Function) error {
	if l.local.Given(f.Name) {
		return fmt.Errorf("function %s is given by serve --function: the template's is not put over it (rename one of them)", f.Name)
	}
	if _, ok := lambda.RuntimeFor(f.Runtime); !ok {
		return fmt.Errorf("runtime %s does not run here: python3.x, nodejs18.x and later, and provided (provided.al2, provided.al2023) do", f.Runtime)
	}
	return l.local.Put(f.Name, &lambda.Handler{Runtime: f.Runtime, Dir: f.Code, Name: f.Handler,
		Timeout: f.Timeout, MemoryMB: f.MemoryMB, Env: f.Env})
}

func (l localFunctions) HasFunction(_ context.Context, name string) (bool, error) {
	return !l.local.Given(name) && l.local.Lookup(name) != nil, nil
}

func (l localFunctions) DeleteFunction(_ context.Context, name string) error {
	if !l.local.Given(name) {
		l.local.Remove(name)
	}
	return nil
}
