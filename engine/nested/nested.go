// Package nested is the task runner of states:startExecution: a Task
// state that starts a child execution on the same engine. Its four forms
// differ in when the parent's task ends:
//
//	arn:aws:states:::states:startExecution                   at once: {ExecutionArn, SdkHttpMetadata, SdkResponseMetadata, StartDate}
//	arn:aws:states:::states:startExecution.sync              when the child ends: its description, Input and Output as JSON text
//	arn:aws:states:::states:startExecution.sync:2            when the child ends: its description, Input and Output as JSON
//	arn:aws:states:::states:startExecution.waitForTaskToken  when SendTask* is called with the token
//
// The outputs are AWS's: members in PascalCase and in alphabetical order,
// dates in epoch milliseconds. A child that does not succeed fails the
// parent's task with States.TaskFailed and the child's description as the
// cause; a start the StartExecution API would refuse fails it with
// StepFunctions.<Code>Exception (StepFunctions.StateMachineDoesNotExistException, ...)
// and the AWS SDK's wording of the API error as the cause. The checks and
// their messages are the API's own (internal/startrule).
//
// A Parameters.Input member AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID
// (usually "$$.Execution.Id") links the child to its parent, as on AWS:
// the member is part of the child's input, where tools can follow it;
// DescribeExecution shows nothing more.
//
// A task dispatched again after a restart starts no second child: the
// child's name derives from the parent's task unless the Parameters name
// one; a child of that name that the parent started is joined (for a name
// the Parameters give: one with the same input started since the parent's
// start or last redrive).
//
// # The host
//
// The runner starts, watches and stops children through the engine, its
// Host: the engine starts a child durably (its first step committed),
// records the parent task's TaskSubmitted, and tells the runner when an
// execution ends (ChildEnded), so that the parents waiting for it are
// answered.
//
//	Run ─► check and resolve (startrule) ─► Host.Start ─► TaskSubmitted (Host.Submitted)
//	                                                            │
//	          ┌──────────────────────┬──────────────────────────┤
//	          ▼                      ▼                          ▼
//	   request-response:       .sync, .sync:2:             .waitForTaskToken:
//	   done(StartExecution's   wait for ChildEnded,        the token ends the task
//	   response)               done(the child's description)
package nested

import (
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"

	"stepwise/awsarn"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/internal/startrule"
	"stepwise/jsonvalue"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Resource is the states:startExecution integration's resource, without
// a pattern.
const Resource = "arn:aws:states:::states:startExecution"

// StartedByMember is the Input member that links a child to its parent.
const StartedByMember = "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID"

// Child is a child execution to start: its state machine as resolved
// (for a version or an alias: that version's revision, with the version's
// and the alias's ARNs), its ARN, name and checked input.
type Child struct {
	StateMachine         *store.StateMachine
	VersionArn, AliasArn string
	Arn, Name, Input     string
	InputValue           any
	// TraceHeader continues the parent task's trace in the child (X-Ray's
	// header, as StartExecution's traceHeader takes it); "" when the
	// parent is not traced.
	TraceHeader string
}

// Host is what the runner needs of the engine.
type Host interface {
	// Executor reads the store: state machines, executions, tags.
	Executor() store.Executor
	// Start starts a child durably and returns its row;
	// store.ErrAlreadyExists when its ARN is taken. An engine that is
	// stopping refuses it with a *sfnapi.Error
	// (ServiceUnavailable).
	Start(ctx context.Context, c *Child) (*store.Execution, error)
	// Submitted records the parent task's TaskSubmitted with output: the
	// child is started, so the task is.
	Submitted(ctx context.Context, t *task.Task, output any)
	// WaitOn says the parent's task waits on the child's work now (not on
	// the outside), and reports whether the task is still wanted.
	WaitOn(parentArn, taskID, childArn string) bool
	// NotRunning says a child the parent waits on is not running (it
	// ended before it was watched).
	NotRunning(childArn string)
	// Stop stops a child whose parent task is no longer wanted.
	Stop(childArn string)
}

// Config is where the runner's children start.
type Config struct {
	Region, Account string
	// PayloadLimit is the largest child input (0: startrule's default).
	PayloadLimit int
}

// Runner carries out states:startExecution tasks (a task.KindRunner).
type Runner struct {
	host Host
	cfg  Config

	mu      sync.Mutex
	waiters map[string][]waiter // child ARN → parent tasks waiting for its end
}

type waiter struct {
	parentArn, taskID string
	v2                bool
	done              func(task.Result)
}

// New returns the runner of a host.
func New(host Host, cfg Config) *Runner {
	return &Runner{host: host, cfg: cfg, waiters: map[string][]waiter{}}
}

var _ task.KindRunner = (*Runner)(nil)

// Takes reports whether a task is a states:startExecution task.
func (r *Runner) Takes(t *task.Task) bool {
	res := t.Request.Resource
	return res == Resource || strings.HasPrefix(res, Resource+".")
}

// Run starts the child of a task in the background.
func (r *Runner) Run(ctx context.Context, t *task.Task, done func(task.Result)) {
	go r.run(ctx, t, done)
}

func (r *Runner) run(ctx context.Context, t *task.Task, done func(task.Result)) {
	mode := strings.TrimPrefix(t.Request.Resource, Resource)
	switch mode {
	case "", ".sync", ".sync:2", ".waitForTaskToken":
	default:
		done(task.Result{Failure: failure.Newf(failure.TaskFailed, "Unknown resource '%s'.", t.Request.Resource)})
		return
	}
	row, err := r.start(ctx, t)
	if err != nil {
		var refused *sfnapi.Error
		if errors.As(err, &refused) {
			done(task.Result{Failure: startFailure(refused)})
			return
		}
		done(task.Result{Failure: failure.Newf(failure.TaskFailed, "%v", err)})
		return
	}
	if mode != "" {
		// The child is started, so the task is: AWS writes TaskStarted now,
		// not when the child ends. Should this step fail, the started event
		// is written with the task's end instead.
		// AWS then writes TaskSubmitted with the StartExecution response.
		r.host.Submitted(ctx, t, startOutput(row))
	}
	switch mode {
	case "":
		done(task.Result{Output: startOutput(row)})
	case ".sync", ".sync:2":
		w := waiter{parentArn: t.ExecutionArn, taskID: t.ID, v2: mode == ".sync:2", done: done}
		r.mu.Lock()
		r.waiters[row.Arn] = append(r.waiters[row.Arn], w)
		r.mu.Unlock()
		// The task waits on the child's work now, not on the outside
		// (unless the child answered it already).
		if !r.host.WaitOn(t.ExecutionArn, t.ID, row.Arn) {
			// The task was cancelled (its parent stopped, or it timed
			// out) before the child could be stopped with it.
			r.Cancel(t.ExecutionArn, t.ID)
			return
		}
		// The child may have ended already (at once, or before a restart).
		if cur, err := r.host.Executor().ExecutionGet(ctx, row.Arn); err == nil && cur.Status != history.StatusRunning {
			r.ChildEnded(cur)
		}
	case ".waitForTaskToken":
		// The child (or whoever it tells) answers with the token, which
		// may go through now that TaskSubmitted is written. Until the
		// child ends, the task waits on the child's work.
		r.host.WaitOn(t.ExecutionArn, t.ID, row.Arn)
		if cur, err := r.host.Executor().ExecutionGet(ctx, row.Arn); err != nil || cur.Status != history.StatusRunning {
			r.host.NotRunning(row.Arn)
		}
		done(task.Result{Waiting: true})
	}
}

// start starts (or, after a restart, finds) the child of a task, checking
// the request as the StartExecution API does.
func (r *Runner) start(ctx context.Context, t *task.Task) (*store.Execution, error) {
	params, _ := t.Request.Parameters.(*jsonvalue.Object)
	var smArn string
	if v, ok := params.Get("StateMachineArn"); ok {
		s, isString := v.(string)
		if !isString {
			return nil, sfnapi.NewError(sfnapi.CodeValidation, "1 validation error detected: Value at 'stateMachineArn' failed to satisfy constraint: Member must be a string")
		}
		smArn = s
	}
	if smArn == "" {
		return nil, sfnapi.NewError(sfnapi.CodeValidation, "1 validation error detected: Value null at 'stateMachineArn' failed to satisfy constraint: Member must not be null")
	}
	input := "{}"
	if v, ok := params.Get("Input"); ok && v != nil {
		if s, isString := v.(string); isString {
			input = s
		} else {
			input = jsonvalue.String(v)
		}
	}
	value, refused := startrule.Input(input, r.cfg.PayloadLimit)
	if refused != nil {
		return nil, refused
	}
	name, named := "", false
	if v, ok := params.Get("Name"); ok && v != nil {
		s, isString := v.(string)
		if !isString {
			return nil, startrule.InvalidName(jsonvalue.String(v))
		}
		if refused := startrule.Name(s); refused != nil {
			return nil, refused
		}
		name, named = s, true
	}
	if !named {
		name = awsarn.DerivedID([]byte(t.ExecutionArn + "\x00" + t.ID))
	}
	if _, refused := startrule.StateMachineArn(smArn); refused != nil {
		return nil, refused
	}
	sm, versionArn, aliasArn, err := startrule.Resolve(ctx, r.host.Executor(), smArn, mathrand.IntN(100))
	if err != nil {
		return nil, err
	}
	if refused := startrule.Runnable(sm); refused != nil {
		return nil, refused
	}
	where := awsarn.Prefix{Region: r.cfg.Region, Account: r.cfg.Account}
	childArn := where.Execution(sm.Name, name)
	if sm.Type == "EXPRESS" {
		childArn = where.Express(sm.Name, name, awsarn.DerivedID([]byte(t.ExecutionArn+"\x00"+t.ID+"\x00express")))
	}
	row, err := r.host.Start(ctx, &Child{StateMachine: sm, VersionArn: versionArn, AliasArn: aliasArn,
		Arn: childArn, Name: name, Input: input, InputValue: value, TraceHeader: sfnapi.XRayTraceHeader(t.TraceParent)})
	if !errors.Is(err, store.ErrAlreadyExists) {
		return row, err
	}
	// The name is taken: by this task's child (a dispatch again after a
	// restart), or by another execution.
	row, err = r.host.Executor().ExecutionGet(ctx, childArn)
	if err != nil {
		return nil, err
	}
	if !named || r.ownChild(ctx, t, row, input) {
		return row, nil
	}
	return nil, startrule.ExecutionAlreadyExists(childArn)
}

// ownChild reports whether an execution holding the name a task asked for
// is the one the task started before a restart: it runs, or it started
// since the parent's start or last redrive, with the same input.
func (r *Runner) ownChild(ctx context.Context, t *task.Task, child *store.Execution, input string) bool {
	if !jsonvalue.EqualText(child.Input, input) {
		return false
	}
	if child.Status == history.StatusRunning {
		return true // StartExecution itself is idempotent for a running execution
	}
	parent, err := r.host.Executor().ExecutionGet(ctx, t.ExecutionArn)
	if err != nil {
		return false
	}
	since := parent.StartDate
	if parent.RedriveDate != nil {
		since = *parent.RedriveDate
	}
	return !child.StartDate.Before(since)
}

// startFailure is how a refused StartExecution fails the parent's task:
// StepFunctions.<Code>Exception, with the message framed the way the AWS
// SDK (v1) that Step Functions uses words a service error.
func startFailure(refused *sfnapi.Error) *failure.Failure {
	status := http.StatusBadRequest
	if refused.Code == sfnapi.CodeServiceUnavailable || refused.Code == sfnapi.CodeInternalFailure {
		status = http.StatusInternalServerError
	}
	return failure.New("StepFunctions."+exceptionName(refused.Code), fmt.Sprintf(
		"%s (Service: AWSStepFunctions; Status Code: %d; Error Code: %s; Request ID: %s; Proxy: null)",
		refused.Message, status, refused.Code, uuid.NewString()))
}

// exceptionName is an API error code as the AWS SDKs name its exception:
// with an "Exception" suffix.
func exceptionName(code string) string {
	if strings.HasSuffix(code, "Exception") {
		return code
	}
	return code + "Exception"
}

// ChildEnded answers the parents waiting for an execution that ended.
func (r *Runner) ChildEnded(row *store.Execution) {
	r.mu.Lock()
	ws := r.waiters[row.Arn]
	delete(r.waiters, row.Arn)
	r.mu.Unlock()
	for _, w := range ws {
		desc := describeForParent(row, w.v2)
		if row.Status == history.StatusSucceeded {
			w.done(task.Result{Output: desc})
			continue
		}
		w.done(task.Result{Failure: failure.New(failure.TaskFailed, jsonvalue.String(desc))})
	}
}

// Waited lists the children parents wait for here.
func (r *Runner) Waited() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	arns := make([]string, 0, len(r.waiters))
	for arn := range r.waiters {
		arns = append(arns, arn)
	}
	return arns
}

// Cancel stops the .sync child a cancelled parent task waits for.
func (r *Runner) Cancel(parentArn, taskID string) {
	r.mu.Lock()
	var child string
	for arn, ws := range r.waiters {
		for i, w := range ws {
			if w.parentArn == parentArn && w.taskID == taskID {
				child = arn
				r.waiters[arn] = append(ws[:i:i], ws[i+1:]...)
				break
			}
		}
	}
	r.mu.Unlock()
	if child != "" {
		r.host.Stop(child)
	}
}
