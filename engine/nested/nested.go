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
// Host (start.Children, the host it shares with the map runs): the
// engine starts a child durably (its first step committed) through the
// Starter, which resolves and checks it as StartExecution does, records
// the parent task's TaskSubmitted, and tells the runner when an execution
// ends (ChildEnded), so that the parents waiting for it are answered.
//
//	Run ─► check the Parameters (startrule) ─► Host.Start (the Starter) ─► TaskSubmitted (Host.Submitted)
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
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"

	"stepwise/awsarn"
	"stepwise/engine/start"
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

// Host is what the runner needs of the engine: its children
// (start.Children), and the record of a parent task's TaskSubmitted with
// output (the child is started, so the task is).
type Host interface {
	start.Children
	Submitted(ctx context.Context, t *task.Task, output any)
}

// Config configures the runner.
type Config struct {
	// PayloadLimit is the largest child input (0: startrule's default).
	PayloadLimit int
	// Logger logs a child's stop that failed; nil discards.
	Logger *slog.Logger
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
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
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
	if errors.Is(err, task.ErrStopped) {
		err = sfnapi.NewError(sfnapi.CodeServiceUnavailable, "the server is shutting down")
	}
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
			r.host.Ended(row.Arn)
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
	row, err := r.host.Start(ctx, &start.Request{StateMachineArn: smArn, Name: name,
		ExpressID: awsarn.DerivedID([]byte(t.ExecutionArn + "\x00" + t.ID + "\x00express")),
		Input:     &input, InputChecked: true, InputValue: value, TraceHeader: sfnapi.XRayTraceHeader(t.TraceParent)})
	var taken *start.ExistsError
	if !errors.As(err, &taken) {
		return row, err
	}
	// The name is taken: by this task's child (a dispatch again after a
	// restart), or by another execution.
	row, err = r.host.Executor().ExecutionGet(ctx, taken.Arn)
	if err != nil {
		return nil, err
	}
	if !named || r.ownChild(ctx, t, row, input) {
		return row, nil
	}
	return nil, startrule.ExecutionAlreadyExists(taken.Arn)
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
		// The stop is work: the clock must not skip the child on
		// meanwhile.
		r.host.Go(func(ctx context.Context) {
			if err := r.host.Stop(ctx, child, "The parent execution stopped its child."); err != nil && !errors.Is(err, task.ErrStopped) {
				r.cfg.Logger.ErrorContext(ctx, "engine: stop child failed", "execution_arn", child, "error", err)
			}
		})
	}
}
