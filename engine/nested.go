package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"stepwise/awsarn"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/sfnapi"
	"stepwise/store"
)

// The states:startExecution integration starts a child execution on this
// engine. Its four forms differ in when the parent's task ends:
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
// and the AWS SDK's wording of the API error as the cause.
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
const startExecutionResource = "arn:aws:states:::states:startExecution"

// startedByMember is the Input member that links a child to its parent.
const startedByMember = "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID"

// children tracks the parents waiting for .sync children to end.
type children struct {
	mu      sync.Mutex
	waiters map[string][]childWaiter // child ARN → waiting parent tasks
}

type childWaiter struct {
	parentArn, taskID string
	v2                bool
	done              func(TaskResult)
}

func isStartExecution(resource string) bool {
	return resource == startExecutionResource || strings.HasPrefix(resource, startExecutionResource+".")
}

// startChild carries out a states:startExecution task.
func (e *Engine) startChild(ctx context.Context, t *Task, done func(TaskResult)) {
	mode := strings.TrimPrefix(t.Request.Resource, startExecutionResource)
	switch mode {
	case "", ".sync", ".sync:2", ".waitForTaskToken":
	default:
		done(TaskResult{Failure: failure.Newf(failure.TaskFailed, "Unknown resource '%s'.", t.Request.Resource)})
		return
	}
	row, err := e.startChildExecution(ctx, t)
	if err != nil {
		if errors.Is(err, ErrStopped) {
			err = refuse(sfnapi.CodeServiceUnavailable, "the server is shutting down")
		}
		var refusal *startRefusal
		if errors.As(err, &refusal) {
			done(TaskResult{Failure: startFailure(refusal)})
			return
		}
		done(TaskResult{Failure: failure.Newf(failure.TaskFailed, "%v", err)})
		return
	}
	if mode != "" {
		// The child is started, so the task is: AWS writes TaskStarted now,
		// not when the child ends. Should this step fail, the started event
		// is written with the task's end instead.
		// AWS then writes TaskSubmitted with the StartExecution response.
		_, _ = e.applyEvent(ctx, t.ExecutionArn, interp.Event{Kind: interp.TaskSubmitted, ID: t.ID, Output: startOutput(row)})
	}
	switch mode {
	case "":
		done(TaskResult{Output: startOutput(row)})
	case ".sync", ".sync:2":
		w := childWaiter{parentArn: t.ExecutionArn, taskID: t.ID, v2: mode == ".sync:2", done: done}
		e.children.mu.Lock()
		if e.children.waiters == nil {
			e.children.waiters = map[string][]childWaiter{}
		}
		e.children.waiters[row.Arn] = append(e.children.waiters[row.Arn], w)
		e.children.mu.Unlock()
		// The task waits on the child's work now, not on the outside
		// (unless the child answered it already).
		e.work.taskOnChild(t.ExecutionArn, t.ID, row.Arn)
		if !e.work.has(t.ExecutionArn, t.ID) {
			// The task was cancelled (its parent stopped, or it timed
			// out) before the child could be stopped with it.
			e.cancelChild(t.ExecutionArn, t.ID)
			return
		}
		// The child may have ended already (at once, or before a restart).
		if cur, err := e.store.Executor().ExecutionGet(ctx, row.Arn); err == nil && cur.Status != history.StatusRunning {
			e.childEnded(cur)
		}
	case ".waitForTaskToken":
		// The child (or whoever it tells) answers with the token, which
		// may go through now that TaskSubmitted is written. Until the
		// child ends, the task waits on the child's work.
		e.work.taskOnChild(t.ExecutionArn, t.ID, row.Arn)
		if cur, err := e.store.Executor().ExecutionGet(ctx, row.Arn); err != nil || cur.Status != history.StatusRunning {
			e.work.childEnded(row.Arn)
		}
		done(TaskResult{Waiting: true})
	}
}

// startChildExecution starts (or, after a restart, finds) the child of a
// task, checking the request as the StartExecution API does.
func (e *Engine) startChildExecution(ctx context.Context, t *Task) (*store.Execution, error) {
	params, _ := t.Request.Parameters.(*jsonvalue.Object)
	var smArn string
	if v, ok := params.Get("StateMachineArn"); ok {
		s, isString := v.(string)
		if !isString {
			return nil, refuse(sfnapi.CodeValidation, "1 validation error detected: Value at 'stateMachineArn' failed to satisfy constraint: Member must be a string")
		}
		smArn = s
	}
	if smArn == "" {
		return nil, refuse(sfnapi.CodeValidation, "1 validation error detected: Value null at 'stateMachineArn' failed to satisfy constraint: Member must not be null")
	}
	input := "{}"
	if v, ok := params.Get("Input"); ok && v != nil {
		if s, isString := v.(string); isString {
			input = s
		} else {
			input = jsonvalue.String(v)
		}
	}
	if err := e.checkChildInput(input); err != nil {
		return nil, err
	}
	name, named := "", false
	if v, ok := params.Get("Name"); ok && v != nil {
		s, isString := v.(string)
		if !isString || s == "" || len(s) > 80 || !awsarn.ValidName(s) {
			if !isString {
				s = jsonvalue.String(v)
			}
			return nil, refuse(sfnapi.CodeInvalidName, "Invalid Name: '%s'", s)
		}
		name, named = s, true
	}
	if !named {
		sum := sha256.Sum256([]byte(t.ExecutionArn + "\x00" + t.ID))
		h := hex.EncodeToString(sum[:16])
		name = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	if !strings.HasPrefix(smArn, "arn:") {
		return nil, refuse(sfnapi.CodeInvalidArn, "Invalid Arn: 'Invalid ARN prefix: %s'", smArn)
	}
	sm, versionArn, aliasArn, err := ResolveStateMachine(ctx, e.store.Executor(), smArn, mathrand.IntN(100))
	if errors.Is(err, store.ErrNotFound) {
		return nil, refuse(sfnapi.CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", smArn)
	}
	if err != nil {
		return nil, err
	}
	if sm.Status == "DELETING" {
		return nil, refuse(sfnapi.CodeStateMachineDeleting, "State Machine is being deleted: '%s'", sm.Arn)
	}
	m, err := e.machine(ctx, sm.Arn, sm.RevisionID)
	if err != nil {
		return nil, err
	}
	prefix := fmt.Sprintf("arn:aws:states:%s:%s:", e.cfg.Region, e.cfg.Account)
	childArn := prefix + "execution:" + sm.Name + ":" + name
	if sm.Type == "EXPRESS" {
		sum := sha256.Sum256([]byte(t.ExecutionArn + "\x00" + t.ID + "\x00express"))
		h := hex.EncodeToString(sum[:16])
		childArn = prefix + "express:" + sm.Name + ":" + name + ":" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	}
	policies, err := PoliciesOf(ctx, e.store.Executor(), sm.Arn)
	if err != nil {
		return nil, err
	}
	row, err := e.StartExecution(ctx, &StartParams{StateMachine: sm, Machine: m, ExecutionArn: childArn, Name: name, Input: input,
		VersionArn: versionArn, AliasArn: aliasArn, Policies: policies})
	if !errors.Is(err, store.ErrAlreadyExists) {
		return row, err
	}
	// The name is taken: by this task's child (a dispatch again after a
	// restart), or by another execution.
	row, err = e.store.Executor().ExecutionGet(ctx, childArn)
	if err != nil {
		return nil, err
	}
	if !named || e.ownChild(ctx, t, row, input) {
		return row, nil
	}
	return nil, refuse(sfnapi.CodeExecutionAlreadyExists, "Execution Already Exists: '%s'", childArn)
}

// ResolveStateMachine returns the state machine an ARN names; for a
// version or an alias (…:NAME:N, …:NAME:ALIAS) as that version runs (its
// revision), with the version's ARN and the alias's. An alias picks its
// version by weight with draw, uniform in [0, 100) (store.Alias.Pick).
// ErrNotFound when any of them is missing. The service's starts and the
// engine's nested starts resolve alike.
func ResolveStateMachine(ctx context.Context, ex store.Executor, arn string, draw int) (*store.StateMachine, string, string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 8 {
		sm, err := ex.StateMachineGet(ctx, arn)
		return sm, "", "", err
	}
	base, qualifier := strings.Join(parts[:7], ":"), parts[7]
	sm, err := ex.StateMachineGet(ctx, base)
	if err != nil {
		return nil, "", "", err
	}
	aliasArn := ""
	n, err := strconv.ParseInt(qualifier, 10, 64)
	if err != nil || n <= 0 || qualifier[0] == '0' {
		a, err := ex.AliasGet(ctx, base, qualifier)
		if err != nil {
			return nil, "", "", err
		}
		aliasArn, n = a.Arn(), a.Pick(draw)
	}
	v, err := ex.VersionGet(ctx, base, n)
	if err != nil {
		return nil, "", "", err
	}
	rev, err := ex.RevisionGet(ctx, base, v.RevisionID)
	if err != nil {
		return nil, "", "", err
	}
	out := *sm
	out.RevisionID, out.Definition, out.RoleArn = rev.RevisionID, rev.Definition, rev.RoleArn
	return &out, v.Arn(), aliasArn, nil
}

// ownChild reports whether an execution holding the name a task asked for
// is the one the task started before a restart: it runs, or it started
// since the parent's start or last redrive, with the same input.
func (e *Engine) ownChild(ctx context.Context, t *Task, child *store.Execution, input string) bool {
	if !jsonvalue.EqualText(child.Input, input) {
		return false
	}
	if child.Status == history.StatusRunning {
		return true // StartExecution itself is idempotent for a running execution
	}
	parent, err := e.store.Executor().ExecutionGet(ctx, t.ExecutionArn)
	if err != nil {
		return false
	}
	since := parent.StartDate
	if parent.RedriveDate != nil {
		since = *parent.RedriveDate
	}
	return !child.StartDate.Before(since)
}

func (e *Engine) checkChildInput(input string) error {
	limit := e.cfg.PayloadLimit
	if limit <= 0 {
		limit = 256 * 1024
	}
	if len(input) > limit {
		return refuse(sfnapi.CodeInvalidExecutionInput,
			"Invalid State Machine Execution Input: 'Input exceeds the maximum size of %d bytes (UTF-8).'", limit)
	}
	if _, err := jsonvalue.ParseString(input); err != nil || strings.TrimSpace(input) == "" {
		return refuse(sfnapi.CodeInvalidExecutionInput, "Invalid State Machine Execution Input: 'Invalid execution input.'")
	}
	return nil
}

// startFailure is how a refused StartExecution fails the parent's task:
// StepFunctions.<Code>Exception, with the message framed the way the AWS
// SDK (v1) that Step Functions uses words a service error.
func startFailure(r *startRefusal) *failure.Failure {
	status := http.StatusBadRequest
	if r.code == sfnapi.CodeServiceUnavailable || r.code == sfnapi.CodeInternalFailure {
		status = http.StatusInternalServerError
	}
	return failure.New("StepFunctions."+exceptionName(r.code), fmt.Sprintf(
		"%s (Service: AWSStepFunctions; Status Code: %d; Error Code: %s; Request ID: %s; Proxy: null)",
		r.message, status, r.code, uuid.NewString()))
}

// startRefusal is a child execution that StartExecution would refuse: the
// error code and message its API answers, which the parent's task fails
// with as the AWS SDK words a service error (startFailure). It never
// leaves the engine.
type startRefusal struct{ code, message string }

func (r *startRefusal) Error() string { return r.code + ": " + r.message }

func refuse(code, format string, args ...any) *startRefusal {
	return &startRefusal{code: code, message: fmt.Sprintf(format, args...)}
}

// exceptionName is an API error code as the AWS SDKs name its exception:
// with an "Exception" suffix.
func exceptionName(code string) string {
	if strings.HasSuffix(code, "Exception") {
		return code
	}
	return code + "Exception"
}

// startOutput is the request-response result: StartExecution's response
// with the SDK's HTTP metadata, as AWS returns it.
func startOutput(row *store.Execution) *jsonvalue.Object {
	body := `{"executionArn":` + jsonvalue.String(row.Arn) + `,"startDate":` +
		strconv.FormatFloat(float64(row.StartDate.UnixMilli())/1000, 'f', -1, 64) + `}`
	out := jsonvalue.NewObject(4)
	out.Set("ExecutionArn", row.Arn)
	out.Set("SdkHttpMetadata", sdkHTTPMetadata(http.StatusOK, [][2]string{
		{"Content-Length", strconv.Itoa(len(body))},
		{"Content-Type", "application/x-amz-json-1.0"},
		{"Date", row.StartDate.UTC().Format(http.TimeFormat)},
	}, uuid.NewString()))
	out.Set("SdkResponseMetadata", sdkResponseMetadata(out))
	out.Set("StartDate", jsonvalue.NumberFromInt(row.StartDate.UnixMilli()))
	return out
}

// sdkHTTPMetadata is the SdkHttpMetadata member AWS adds to the results
// of optimized integrations: the response headers (x-amzn-RequestId
// first, then the others as given), once as lists and once as values in
// case-insensitive order, and the status code.
func sdkHTTPMetadata(status int, headers [][2]string, requestID string) *jsonvalue.Object {
	all := jsonvalue.NewObject(len(headers) + 1)
	single := jsonvalue.NewObject(len(headers) + 1)
	all.Set("x-amzn-RequestId", []any{requestID})
	for _, h := range headers {
		all.Set(h[0], []any{h[1]})
	}
	sorted := append([][2]string{{"x-amzn-RequestId", requestID}}, headers...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && strings.ToLower(sorted[j][0]) < strings.ToLower(sorted[j-1][0]); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	for _, h := range sorted {
		single.Set(h[0], h[1])
	}
	md := jsonvalue.NewObject(3)
	md.Set("AllHttpHeaders", all)
	md.Set("HttpHeaders", single)
	md.Set("HttpStatusCode", jsonvalue.NumberFromInt(int64(status)))
	return md
}

// sdkResponseMetadata is {"RequestId": ...} of an output holding
// SdkHttpMetadata.
func sdkResponseMetadata(out *jsonvalue.Object) *jsonvalue.Object {
	id := ""
	if md, ok := out.Get("SdkHttpMetadata"); ok {
		if h, ok := md.(*jsonvalue.Object).Get("HttpHeaders"); ok {
			v, _ := h.(*jsonvalue.Object).Get("x-amzn-RequestId")
			id, _ = v.(string)
		}
	}
	m := jsonvalue.NewObject(1)
	m.Set("RequestId", id)
	return m
}

// childEnded answers the parents waiting for a child that ended.
func (e *Engine) childEnded(row *store.Execution) {
	if row.MapRunArn != "" {
		e.mapRuns.childEnded(row)
	}
	e.work.childEnded(row.Arn)
	e.children.mu.Lock()
	ws := e.children.waiters[row.Arn]
	delete(e.children.waiters, row.Arn)
	e.children.mu.Unlock()
	for _, w := range ws {
		desc := describeForParent(row, w.v2)
		if row.Status == history.StatusSucceeded {
			w.done(TaskResult{Output: desc})
			continue
		}
		w.done(TaskResult{Failure: failure.New(failure.TaskFailed, jsonvalue.String(desc))})
	}
}

// cancelChild stops the .sync child a cancelled parent task waits for.
func (e *Engine) cancelChild(parentArn, taskID string) {
	e.children.mu.Lock()
	var child string
	for arn, ws := range e.children.waiters {
		for i, w := range ws {
			if w.parentArn == parentArn && w.taskID == taskID {
				child = arn
				e.children.waiters[arn] = append(ws[:i:i], ws[i+1:]...)
				break
			}
		}
	}
	e.children.mu.Unlock()
	if child != "" {
		// The stop is work: the clock must not skip the child on meanwhile.
		e.work.stepBegan()
		go func() {
			defer e.work.stepEnded()
			if _, err := e.StopExecution(e.ctx, child, "", "The parent execution stopped its child."); err != nil && !errors.Is(err, errStopped) {
				e.log.ErrorContext(e.ctx, "engine: stop child failed", "execution_arn", child, "error", err)
			}
		}()
	}
}

// describeForParent is the child's description as a .sync task returns
// it (and as the cause of its failure): DescribeExecution's members in
// PascalCase and alphabetical order, dates in epoch milliseconds; Input
// and Output as JSON text, or parsed for .sync:2. Output is there only
// for a child that succeeded.
func describeForParent(row *store.Execution, v2 bool) *jsonvalue.Object {
	text := func(s string) any {
		if !v2 {
			return s
		}
		v, err := jsonvalue.ParseString(s)
		if err != nil {
			return s
		}
		return v
	}
	included := jsonvalue.NewObject(1)
	included.Set("Included", true)
	d := jsonvalue.NewObject(12)
	if row.Cause != nil {
		d.Set("Cause", *row.Cause)
	}
	if row.Error != nil {
		d.Set("Error", *row.Error)
	}
	d.Set("ExecutionArn", row.Arn)
	d.Set("Input", text(row.Input))
	d.Set("InputDetails", included)
	d.Set("Name", row.Name)
	if row.Status == history.StatusSucceeded && row.Output != nil {
		d.Set("Output", text(*row.Output))
		d.Set("OutputDetails", included)
	}
	d.Set("StartDate", epochMillis(row.StartDate))
	d.Set("StateMachineArn", row.StateMachineArn)
	d.Set("Status", string(row.Status))
	if row.StopDate != nil {
		d.Set("StopDate", epochMillis(*row.StopDate))
	}
	return d
}

func epochMillis(t time.Time) jsonvalue.Number { return jsonvalue.NumberFromInt(t.UnixMilli()) }

// PoliciesOf reads the failure policies a state machine's tags set
// (interp.PoliciesFromTags); a tag that sets none that is known is
// ignored, as TagResource refuses it.
func PoliciesOf(ctx context.Context, ex store.Executor, smArn string) (interp.Policies, error) {
	tags, err := ex.TagList(ctx, smArn)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, t := range tags {
		if strings.HasPrefix(t.Key, interp.PolicyTagPrefix) {
			m[t.Key] = t.Value
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	ps, _ := interp.PoliciesFromTags(m)
	return ps, nil
}
