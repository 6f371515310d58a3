package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"stepwise/config"
	"stepwise/deploy"
	"stepwise/deploy/cfn"
	"stepwise/integration"
	"stepwise/integration/lambda"
	"stepwise/scheduler"
	"stepwise/service"
	"stepwise/store"
)

// newDeployer is the server's deployer: templates onto its service and
// scheduler, their functions into its local functions, their AWS
// resources at its --aws-endpoint.
func newDeployer(cfg *config.Serve, svc *service.Service, sched *scheduler.Service, records store.StackStore, local *lambda.Local, log *slog.Logger) *deploy.Deployer {
	d := &deploy.Deployer{
		Service:   svc,
		Scheduler: sched,
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
		return fmt.Errorf("runtime %s does not run here; the runtimes that do: %s", f.Runtime, deploy.Runtimes)
	}
	return l.local.Put(f.Name, &lambda.Handler{Runtime: f.Runtime, Dir: f.Code, Name: f.Handler,
		Timeout: f.Timeout, MemoryMB: f.MemoryMB, Env: f.Env, Layers: f.Layers})
}

// VersionNote says how the interpreter of a runtime differs from the
// version it declares (see deploy.VersionNoter).
func (l localFunctions) VersionNote(runtime string) string {
	return l.local.VersionNote(runtime)
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

// DeployPath is where a server takes deploys (stepwise deploy).
const DeployPath = "/stepwise/deploy"

// DeploySigningName is the service a deploy request is signed for when
// the server takes signed requests only.
const DeploySigningName = "cloudformation"

// deployBound bounds a deploy on the server.
const deployBound = 30 * time.Minute

// MaxDeployBody bounds a deploy request (CDK templates run to megabytes).
const MaxDeployBody = 16 << 20

// DeployRequest is what stepwise deploy sends the server.
type DeployRequest struct {
	StackName    string            `json:"stackName"`
	Template     string            `json:"template,omitempty"`
	TemplatePath string            `json:"templatePath,omitempty"`
	BaseDir      string            `json:"baseDir,omitempty"`
	Parameters   map[string]string `json:"parameters,omitempty"`
	Delete       bool              `json:"delete,omitempty"`
	// Adopt takes over what is there that the stack did not make.
	Adopt bool `json:"adopt,omitempty"`
}

// DeployResponse is what the server answers: the report, and the error
// that stopped the deploy, if one did.
type DeployResponse struct {
	Report *deploy.Report `json:"report,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// deployHandler takes deploys (POST /stepwise/deploy) from this
// machine: a deploy runs code from the machine's folders (its
// functions), so it is refused from any other. With authentication on,
// the request is signed (for "cloudformation") or carries a console
// session.
type deployHandler struct {
	dep  *deploy.Deployer
	auth interface {
		Authenticate(r *http.Request, body []byte) error
	}
}

func (h *deployHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !fromLoopback(r) {
		writeDeploy(w, http.StatusForbidden, &DeployResponse{Error: "deploys are taken from this machine only: a deploy runs code from the machine's folders"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxDeployBody))
	if err != nil {
		writeDeploy(w, http.StatusRequestEntityTooLarge, &DeployResponse{Error: fmt.Sprintf("a deploy request is at most %d bytes", MaxDeployBody)})
		return
	}
	if h.auth != nil {
		if err := h.auth.Authenticate(r, body); err != nil {
			writeDeploy(w, http.StatusForbidden, &DeployResponse{Error: "deploy: " + err.Error()})
			return
		}
	}
	var req DeployRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeDeploy(w, http.StatusBadRequest, &DeployResponse{Error: "a deploy request is JSON: " + err.Error()})
		return
	}
	// A deploy runs to its end even when its client leaves (as a
	// CloudFormation stack update does), within a bound.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), deployBound)
	defer cancel()
	report, err := Deploy(ctx, h.dep, &req)
	resp := &DeployResponse{Report: report}
	status := http.StatusOK
	if err != nil {
		resp.Error = err.Error()
		status = http.StatusBadRequest
	}
	writeDeploy(w, status, resp)
}

// Deploy deploys or deletes what a request says with dep.
func Deploy(ctx context.Context, dep *deploy.Deployer, req *DeployRequest) (*deploy.Report, error) {
	if req.Delete {
		return dep.Delete(ctx, req.StackName)
	}
	where := cmp.Or(req.TemplatePath, "the template")
	t, err := cfn.Parse([]byte(req.Template))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if req.BaseDir == "" || !filepath.IsAbs(req.BaseDir) {
		return nil, fmt.Errorf("%s: the folder its paths are relative to must be absolute, got %q", where, req.BaseDir)
	}
	report, err := dep.Deploy(ctx, t, deploy.Options{StackName: req.StackName, Parameters: req.Parameters, BaseDir: req.BaseDir, Adopt: req.Adopt})
	if err != nil {
		return report, fmt.Errorf("%s: %w", where, err)
	}
	return report, nil
}

func writeDeploy(w http.ResponseWriter, status int, resp *DeployResponse) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// handleDeploy serves deploys on the server's port.
func (s *Server) handleDeploy(dep *deploy.Deployer) {
	h := &deployHandler{dep: dep}
	if s.gate != nil {
		h.auth = s.gate.ForService(DeploySigningName)
	}
	rt := route{pattern: "POST " + DeployPath, handler: h, refuse: func(w http.ResponseWriter, r *http.Request, message string) {
		writeDeploy(w, http.StatusForbidden, &DeployResponse{Error: message})
	}}
	s.mux.Handle(rt.pattern, rt.handler)
	s.routes = append(s.routes, rt)
}
