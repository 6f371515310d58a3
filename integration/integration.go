package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"stepwise/engine/task"
	"stepwise/failure"
)

// Pattern is a service integration pattern: the suffix of a resource ARN.
type Pattern string

// The integration patterns.
const (
	RequestResponse  Pattern = ""
	Sync             Pattern = ".sync"
	Sync2            Pattern = ".sync:2"
	WaitForTaskToken Pattern = ".waitForTaskToken"
)

// ResourcePrefix starts every service integration ARN.
const ResourcePrefix = "arn:aws:states:::"

// FunctionResource is the resource a module registers to serve Task
// states whose resource is a Lambda function's ARN; their requests have
// Service FunctionService.
const (
	FunctionResource = "lambda:function"
	FunctionService  = "lambda:function"
)

// Request is the work of one Task state, as an integration sees it.
type Request struct {
	// Resource is the Task state's resource ARN as written.
	Resource string
	// Service and Action split the ARN: "sqs", "sendMessage" for
	// arn:aws:states:::sqs:sendMessage.waitForTaskToken; "aws-sdk:sfn",
	// "describeExecution" for arn:aws:states:::aws-sdk:sfn:describeExecution.
	Service, Action string
	Pattern         Pattern
	// Parameters are the state's effective parameters (jsonvalue values).
	Parameters any
	// Token is the task's $$.Task.Token.
	Token string
	// ExecutionArn and TaskID name the task, and ExecutionStart (when
	// its execution started) tells it from a task of an earlier
	// execution of the same name.
	ExecutionArn, TaskID string
	ExecutionStart       time.Time
	// Submit records the answer to the request that started a job
	// (.sync), as AWS writes it in TaskSubmitted, and returns once it is
	// recorded (or the task is cancelled); Call then goes on waiting for
	// the job. It may be called once; it does nothing outside a running
	// task.
	Submit func(output any)
	// Submitted is that answer when it was recorded before the task was
	// dispatched again (after a restart or a takeover): the job started
	// then is followed, never started a second time. Nil otherwise.
	Submitted any
	// Resumed says the task is dispatched again after a restart or a
	// takeover (task.Task.Resumed): its request may have been sent
	// before and its answer lost with the node. A module that starts a
	// job and cannot make the start idempotent looks for that job first.
	Resumed bool
	// TraceParent is the W3C traceparent of the task's span when its
	// execution is traced, "" otherwise (see engine.Config.TaskTrace).
	TraceParent string
}

// Integration carries out requests. Call blocks until the service
// answered (or ctx ended) and returns the task's result as a jsonvalue
// value, or an error: a *failure.Failure is the task's failure as it
// is, any other error fails the task with States.TaskFailed. For
// .waitForTaskToken the result is recorded in TaskSubmitted and the task
// waits for its token.
type Integration interface {
	Call(ctx context.Context, r *Request) (any, error)
}

// Func adapts a function to Integration.
type Func func(ctx context.Context, r *Request) (any, error)

// Call calls f.
func (f Func) Call(ctx context.Context, r *Request) (any, error) { return f(ctx, r) }

// Module describes an integration to the registry.
type Module struct {
	// Resource is the resource ARN served, without the pattern suffix:
	// exact, or ending in "*" to serve every ARN it prefixes.
	Resource string
	// Patterns are the patterns supported besides request-response.
	Patterns []Pattern
	// New makes the integration for a configuration.
	New func(cfg *Config) (Integration, error)
	// Serves, when set, says whether the module can run a resource it
	// matches (a "*" module may not run them all: the AWS SDK
	// integration runs only services it has a model of), and if not,
	// why and what to do.
	Serves func(resource string) (ok bool, why string)
}

var (
	modulesMu sync.Mutex
	modules   = map[string]Module{}
)

// Register makes a module known; it panics when the resource is taken, as
// two modules for one resource is a programming error.
func Register(m Module) {
	modulesMu.Lock()
	defer modulesMu.Unlock()
	if m.Resource == "" || m.New == nil {
		panic("integration: a module needs a Resource and New")
	}
	if _, ok := modules[m.Resource]; ok {
		panic("integration: resource registered twice: " + m.Resource)
	}
	modules[m.Resource] = m
}

// Config configures the integrations.
type Config struct {
	// Region and Account are the server's; calls to AWS services are
	// signed for Region.
	Region  string
	Account string
	// Endpoint, when set, is the URL every AWS service call goes to
	// (a local emulator such as moto or LocalStack), unless Endpoints
	// names one for the service.
	Endpoint string
	// Endpoints maps a service ("sqs", "sns", ...) to the URL its calls
	// go to.
	Endpoints map[string]string
	// Self is the server's own Step Functions API, which aws-sdk:sfn
	// calls in-process. New makes one to be set with SetSelf when nil.
	Self *SelfAPI
	// LocalEvents is the server's local event bus, which the
	// events:putEvents Task puts its entries on too. New makes one to be
	// set with SetLocalEvents when nil.
	LocalEvents *LocalEvents
	// LocalAPIs are the APIs this server serves itself, which
	// apigateway:invoke calls on its own listener. New makes one to be
	// set with SetLocalAPIs when nil.
	LocalAPIs *LocalAPIs
	// Functions maps a Lambda function's name to the command line that
	// runs it locally (--function NAME=COMMAND).
	Functions map[string]string
	// Runtimes maps a Python or Node.js Lambda runtime (python3.12) to
	// the interpreter that runs its local functions (--runtime).
	Runtimes map[string]string
	// BuildCache is the folder local functions' dependencies are
	// installed into (--build-cache; "": stepwise/builds under the
	// user's cache folder).
	BuildCache string
	// ConnectionsFile is the JSON file of the EventBridge connections
	// (authorization and invocation parameters) HTTP Tasks name in
	// Authentication.ConnectionArn; see package integration/http.
	ConnectionsFile string
	// HTTPTaskAllow lists the hosts, addresses and networks HTTP Tasks
	// may call although they are not public, and over plain http://
	// (stepwise serve --http-task-allow; the entries of
	// internal/security/egress.ParseAllow). Without it, HTTP Tasks call public
	// HTTPS endpoints only, as on AWS.
	HTTPTaskAllow []string
	// PayloadLimit is the largest task result in bytes (0: 256 KiB).
	PayloadLimit int
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger

	// shared holds what the registry's modules share (see Shared).
	shared *shared
}

// EndpointFor returns the URL calls to a service go to; "" means AWS's
// own endpoint for the region.
func (c *Config) EndpointFor(service string) string {
	if u, ok := c.Endpoints[service]; ok {
		return u
	}
	return c.Endpoint
}

// SelfCall runs one operation of the server's own Step Functions API in
// process, without HTTP: the operation's name (StartExecution) and its
// request as JSON in, the response as JSON out, or the operation's error
// (an API error is an *sfnapi.Error to errors.As, and answers
// HTTPStatus() int and RequestID() string as the HTTP API would).
type SelfCall func(ctx context.Context, operation string, body []byte) ([]byte, error)

// SelfAPI is the server's own Step Functions API, set once it exists (it
// needs the engine, which needs the registry). Calls made before that,
// by executions the engine resumes at start, wait for it.
type SelfAPI struct {
	once  sync.Once
	ready chan struct{}
	mu    sync.RWMutex
	call  SelfCall
}

func (s *SelfAPI) init() { s.once.Do(func() { s.ready = make(chan struct{}) }) }

// Set sets the API (nil is ignored).
func (s *SelfAPI) Set(call SelfCall) {
	if call == nil {
		return
	}
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.call == nil {
		close(s.ready)
	}
	s.call = call
}

// Caller returns the API, waiting until it is set or ctx ends.
func (s *SelfAPI) Caller(ctx context.Context) (SelfCall, error) {
	s.init()
	select {
	case <-s.ready:
	case <-ctx.Done():
		return nil, errors.New("the server's Step Functions API is not available")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.call, nil
}

// LocalAPIs finds the API Gateway APIs deployed on this server: the
// base URL (http://HOST:PORT) of the listener that serves the API of an
// id, as execute-api's host names it ({apiId}.execute-api.REGION...).
type LocalAPIs struct {
	mu   sync.RWMutex
	find func(apiID string) (string, bool)
}

// Set sets how an API's id is found.
func (l *LocalAPIs) Set(find func(apiID string) (string, bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.find = find
}

// Find is the base URL of the local listener serving the API apiID;
// false when no API of that id is deployed here.
func (l *LocalAPIs) Find(apiID string) (string, bool) {
	if l == nil {
		return "", false
	}
	l.mu.RLock()
	find := l.find
	l.mu.RUnlock()
	if find == nil {
		return "", false
	}
	return find(apiID)
}

// entry is an instantiated module.
type entry struct {
	resource string
	prefix   bool
	patterns []Pattern
	impl     Integration
}

// Registry routes tasks to integrations by resource ARN. It implements
// task.Runner.
type Registry struct {
	cfg     Config
	exact   map[string]*entry
	byPfx   []*entry // longest prefix first
	log     *slog.Logger
	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // "arn\x00id" → cancel
}

var (
	_ task.Runner       = (*Registry)(nil)
	_ task.ResultWriter = (*Registry)(nil)
	_ task.ItemReader   = (*Registry)(nil)
	_ task.ItemStreamer = (*Registry)(nil)
)

// New instantiates every registered module for cfg.
func New(cfg Config) (*Registry, error) {
	if cfg.Self == nil {
		cfg.Self = &SelfAPI{}
	}
	if cfg.LocalEvents == nil {
		cfg.LocalEvents = &LocalEvents{}
	}
	if cfg.LocalAPIs == nil {
		cfg.LocalAPIs = &LocalAPIs{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.shared = &shared{}
	r := &Registry{cfg: cfg, exact: map[string]*entry{}, log: cfg.Logger, running: map[string]context.CancelCauseFunc{}}
	modulesMu.Lock()
	ms := make([]Module, 0, len(modules))
	for _, m := range modules {
		ms = append(ms, m)
	}
	modulesMu.Unlock()
	for _, m := range ms {
		impl, err := m.New(&r.cfg)
		if err != nil {
			return nil, fmt.Errorf("integration %s: %w", m.Resource, err)
		}
		e := &entry{resource: strings.TrimSuffix(m.Resource, "*"), prefix: strings.HasSuffix(m.Resource, "*"), patterns: m.Patterns, impl: impl}
		if e.prefix {
			r.byPfx = append(r.byPfx, e)
		} else {
			r.exact[e.resource] = e
		}
	}
	sort.Slice(r.byPfx, func(i, j int) bool { return len(r.byPfx[i].resource) > len(r.byPfx[j].resource) })
	return r, nil
}

// SetSelf sets the server's own Step Functions API.
func (r *Registry) SetSelf(call SelfCall) { r.cfg.Self.Set(call) }

// SetLocalAPIs sets how the APIs this server serves are found
// (LocalAPIs).
func (r *Registry) SetLocalAPIs(find func(apiID string) (string, bool)) { r.cfg.LocalAPIs.Set(find) }

// ParseResource splits a service integration ARN into its service,
// action and pattern; ok is false for other resources (activities, Lambda
// function ARNs).
func ParseResource(resource string) (service, action string, pattern Pattern, ok bool) {
	rest, found := strings.CutPrefix(resource, ResourcePrefix)
	if !found {
		return "", "", "", false
	}
	for _, p := range []Pattern{WaitForTaskToken, Sync2, Sync} {
		if strings.HasSuffix(rest, string(p)) {
			rest, pattern = strings.TrimSuffix(rest, string(p)), p
			break
		}
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 || i == len(rest)-1 {
		return "", "", "", false
	}
	return rest[:i], rest[i+1:], pattern, true
}

// Unqualified is a service integration ARN that names a region and an
// account (arn:aws:states:us-east-1:123456789012:lambda:invoke) without
// them, as the registry serves it when they are the server's; qualified
// is false for any other resource.
func Unqualified(resource string) (plain string, qualified bool) {
	rest, ok := strings.CutPrefix(resource, "arn:aws:states:")
	if !ok || strings.HasPrefix(rest, "::") {
		return resource, false
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) < 3 || parts[0] == "" || parts[1] == "" {
		return resource, false
	}
	switch kind, _, _ := strings.Cut(parts[2], ":"); kind {
	case "activity", "stateMachine", "execution", "express", "mapRun", "":
		return resource, false
	}
	return ResourcePrefix + parts[2], true
}

// IsFunctionArn reports whether a resource is a Lambda function's ARN:
// arn:<partition>:lambda:<region>:<account>:function:<name>[:<qualifier>].
func IsFunctionArn(resource string) bool {
	parts := strings.SplitN(resource, ":", 8)
	return len(parts) >= 7 && parts[0] == "arn" && parts[2] == "lambda" && parts[5] == "function" && parts[6] != ""
}

// lookup finds the integration serving a resource (without pattern).
func (r *Registry) lookup(base string) *entry {
	if e, ok := r.exact[base]; ok {
		return e
	}
	for _, e := range r.byPfx {
		if strings.HasPrefix(base, e.resource) {
			return e
		}
	}
	return nil
}

// WriteResults writes a map run's results (task.ResultWriter): the
// engine's chooser sends it the tasks with Task.Request.Write set.
func (r *Registry) WriteResults(ctx context.Context, t *task.Task, done func(task.Result)) {
	r.writeResults(ctx, t, done)
}

// ReadItems reads a Map state's ItemReader (task.ItemReader): the
// engine's chooser sends it the tasks with Task.Request.Reader set.
func (r *Registry) ReadItems(ctx context.Context, t *task.Task, done func(task.Result)) {
	r.readItems(ctx, t, done)
}

// route finds the integration serving a resource (nil when none does),
// with the resource's service, action and pattern, and the resource
// without its pattern as the module registered it (a Lambda function's
// ARN is served by FunctionResource). Run and Invoke route alike.
func (r *Registry) route(resource string) (e *entry, service, action string, pattern Pattern, base string) {
	if plain, qualified := Unqualified(resource); qualified {
		region, account, _ := strings.Cut(strings.TrimPrefix(resource, "arn:aws:states:"), ":")
		account, _, _ = strings.Cut(account, ":")
		if region != r.cfg.Region || account != r.cfg.Account {
			return nil, "", "", "", resource // another region's or account's: served by none
		}
		resource = plain
	}
	service, action, pattern, ok := ParseResource(resource)
	base = strings.TrimSuffix(resource, string(pattern))
	if !ok && IsFunctionArn(resource) {
		service, action, base, ok = FunctionService, "invoke", FunctionResource, true
	}
	if !ok {
		return nil, "", "", pattern, base
	}
	return r.lookup(base), service, action, pattern, base
}

// noIntegration fails a task whose resource no integration serves.
func (r *Registry) noIntegration(resource string) *failure.Failure {
	if _, qualified := Unqualified(resource); qualified {
		return failure.Newf(failure.TaskFailed,
			"The resource '%s' is not available in this region: a Task calls services in its state machine's region (%s) and account (%s) only.",
			resource, r.cfg.Region, r.cfg.Account)
	}
	return failure.Newf(failure.TaskFailed, "No integration is configured for the resource '%s'.", resource)
}

// Run calls the integration serving a task's resource in the background;
// done gets its result (for .waitForTaskToken a failed call, or the
// service's answer as a submitted result: the token completes the task).
// What kind of task it is (an activity, a map run, a result write, ...)
// the engine's chooser decided: Run gets the service calls.
func (r *Registry) Run(ctx context.Context, t *task.Task, done func(task.Result)) {
	e, service, action, pattern, base := r.route(t.Request.Resource)
	switch {
	case e == nil && pattern == WaitForTaskToken:
		r.log.DebugContext(ctx, "integration: waiting for the task token, no call made", "resource", t.Request.Resource, "execution_arn", t.ExecutionArn)
		done(task.Result{Waiting: true})
		return
	case e == nil:
		done(task.Result{Failure: r.noIntegration(t.Request.Resource)})
		return
	case pattern != RequestResponse && !slices.Contains(e.patterns, pattern):
		done(task.Result{Failure: failure.Newf(failure.TaskFailed,
			"The resource '%s' does not support the integration pattern '%s'.", base, strings.TrimPrefix(string(pattern), "."))})
		return
	}
	req := &Request{
		Resource: t.Request.Resource, Service: service, Action: action, Pattern: pattern,
		Parameters: t.Request.Parameters, Token: t.Request.Token, ExecutionArn: t.ExecutionArn, TaskID: t.ID, TraceParent: t.TraceParent,
		Submitted: t.Submitted, Resumed: t.Resumed, ExecutionStart: t.ExecutionStart,
	}
	key := t.ExecutionArn + "\x00" + t.ID
	callCtx, cancelCause := context.WithCancelCause(context.WithoutCancel(ctx))
	cancel := func() { cancelCause(context.Canceled) }
	var submitted sync.Once
	req.Submit = func(out any) {
		if pattern != Sync && pattern != Sync2 {
			return
		}
		submitted.Do(func() {
			if callCtx.Err() != nil {
				return
			}
			// The job is followed once its start is recorded: a restart
			// then follows it too, and never starts another.
			recorded := make(chan struct{})
			done(task.Result{Output: out, Submitted: true, Recorded: func(error) { close(recorded) }})
			select {
			case <-recorded:
			case <-callCtx.Done():
			}
		})
	}
	r.mu.Lock()
	r.running[key] = cancelCause
	r.mu.Unlock()
	go func() {
		defer func() {
			r.mu.Lock()
			delete(r.running, key)
			r.mu.Unlock()
			cancel()
		}()
		if t.Started != nil {
			t.Started() // the request is being sent: the task started
		}
		out, err := e.impl.Call(callCtx, req)
		if callCtx.Err() != nil {
			return // cancelled: the result is no longer wanted
		}
		if err != nil {
			done(task.Result{Failure: AsFailure(err)})
			return
		}
		// A .waitForTaskToken task now waits for its token; AWS records
		// the service's answer in TaskSubmitted.
		done(task.Result{Output: out, Submitted: pattern == WaitForTaskToken})
	}()
}

// Invoke makes the call of a Task state's resource and waits for its
// result, for the TestState operation: the result, or the task's failure
// as a *failure.Failure. A .waitForTaskToken resource makes its call
// and answers with what the service answered.
func (r *Registry) Invoke(ctx context.Context, resource string, params any) (any, error) {
	e, service, action, pattern, _ := r.route(resource)
	if e == nil || (pattern != RequestResponse && !slices.Contains(e.patterns, pattern)) {
		return nil, r.noIntegration(resource)
	}
	out, err := e.impl.Call(ctx, &Request{Resource: resource, Service: service, Action: action, Pattern: pattern, Parameters: params,
		Submit: func(any) {}})
	if err != nil {
		return nil, AsFailure(err)
	}
	return out, nil
}

// Cancel stops a call in flight whose result is no longer wanted.
func (r *Registry) Cancel(executionArn, taskID string) {
	r.mu.Lock()
	cancel := r.running[executionArn+"\x00"+taskID]
	r.mu.Unlock()
	if cancel != nil {
		cancel(context.Canceled)
	}
}

// ErrKilled is the cause of a task's context when an operator killed it
// (Kill): a runner that lets work already handed over run to its end
// when it is cancelled (a local function's invoke) stops it then.
var ErrKilled = errors.New("the task was killed by an operator")

// Kill cancels a running task with ErrKilled as its cause.
func (r *Registry) Kill(executionArn, taskID string) {
	r.mu.Lock()
	cancel := r.running[executionArn+"\x00"+taskID]
	r.mu.Unlock()
	if cancel != nil {
		cancel(ErrKilled)
	}
}

// AsFailure is the task failure an integration's error stands for.
func AsFailure(err error) *failure.Failure {
	var f *failure.Failure
	if errors.As(err, &f) {
		return f
	}
	return failure.New(failure.TaskFailed, err.Error())
}

// ExceptionName is an error code as the AWS SDKs name its exception: with
// an "Exception" suffix.
func ExceptionName(code string) string {
	if strings.HasSuffix(code, "Exception") {
		return code
	}
	return code + "Exception"
}
