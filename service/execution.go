package service

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"stepwise/awsarn"
	"stepwise/engine"
	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/internal/startrule"
	"stepwise/jsonvalue"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Redrive statuses (what can be redriven is engine.Redrivable).
const (
	redriveRedrivable    = "REDRIVABLE"
	redriveNotRedrivable = "NOT_REDRIVABLE"
	// A map run's child is redriven with its map run, not on its own.
	redriveByMapRun = "REDRIVABLE_BY_MAP_RUN"
)

// executionStatuses is the ExecutionStatus enum in the order AWS lists it
// in validation errors.
var executionStatuses = []string{"SUCCEEDED", "TIMED_OUT", "PENDING_REDRIVE", "ABORTED", "FAILED", "RUNNING"}

// startRequest is what StartExecution and StartSyncExecution share.
type startRequest struct {
	stateMachineArn string
	name            *string
	input           *string
	traceHeader     *string
}

// validate checks the members of a start request.
func (r *startRequest) validate(v *validator) {
	if v.required("stateMachineArn", r.stateMachineArn) {
		v.length("stateMachineArn", r.stateMachineArn, 1, maxArnLength)
	}
	if r.name != nil {
		v.length("name", *r.name, 1, maxNameLength)
	}
	if r.traceHeader != nil {
		v.length("traceHeader", *r.traceHeader, 0, maxTraceHeader)
		if !isASCII(*r.traceHeader) {
			v.pattern("traceHeader", *r.traceHeader, `\p{ASCII}*`)
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// request is the start the Starter (engine/start, the one way in)
// resolves, checks and runs: the stateMachineArn may end in
// "#<test case>" (Config.TestCase).
func (r *startRequest) request(sync bool) *start.Request {
	q := &start.Request{StateMachineArn: r.stateMachineArn, TestCases: true, Sync: sync, Input: r.input}
	if r.name != nil {
		q.Name = *r.name
	}
	if r.traceHeader != nil {
		q.TraceHeader = *r.traceHeader
	}
	return q
}

// StartExecution starts an execution. STANDARD executions are idempotent
// by name and input while they run; a name is never reused otherwise.
// EXPRESS executions started this way run on the engine like STANDARD
// ones.
func (s *Service) StartExecution(ctx context.Context, in *StartExecutionInput) (*StartExecutionOutput, error) {
	r := &startRequest{stateMachineArn: in.StateMachineArn, name: in.Name, input: in.Input, traceHeader: in.TraceHeader}
	v := newValidator()
	r.validate(v)
	if err := v.err(); err != nil {
		return nil, err
	}
	row, err := s.starter.Start(ctx, r.request(false))
	var taken *start.ExistsError
	if errors.As(err, &taken) {
		input := "{}"
		if r.input != nil {
			input = *r.input
		}
		return s.idempotentStart(ctx, taken.Arn, input)
	}
	if err != nil {
		return nil, engineError("start execution", err)
	}
	return &StartExecutionOutput{ExecutionArn: row.Arn, StartDate: history.EpochTime(row.StartDate)}, nil
}

// idempotentStart answers a start whose execution ARN is taken: the same
// running execution if name and input match, else ExecutionAlreadyExists.
func (s *Service) idempotentStart(ctx context.Context, execArn, input string) (*StartExecutionOutput, error) {
	row, err := s.db().ExecutionGet(ctx, execArn)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, errExecutionAlreadyExists(execArn)
		}
		return nil, storeError("get execution", err)
	}
	if row.Status == history.StatusRunning && jsonvalue.EqualText(row.Input, input) {
		return &StartExecutionOutput{ExecutionArn: row.Arn, StartDate: history.EpochTime(row.StartDate)}, nil
	}
	return nil, errExecutionAlreadyExists(execArn)
}

// StartSyncExecution runs an EXPRESS execution to its end and answers with
// its result. Nothing is stored.
func (s *Service) StartSyncExecution(ctx context.Context, in *StartSyncExecutionInput) (*StartSyncExecutionOutput, error) {
	r := &startRequest{stateMachineArn: in.StateMachineArn, name: in.Name, input: in.Input, traceHeader: in.TraceHeader}
	v := newValidator()
	r.validate(v)
	v.enum("includedData", in.IncludedData, includedAllData, includedMetadataOnly)
	if err := v.err(); err != nil {
		return nil, err
	}
	res, err := s.starter.StartSync(ctx, r.request(true))
	if err != nil {
		return nil, engineError("start sync execution", err)
	}
	x := res.Execution
	out := &StartSyncExecutionOutput{
		ExecutionArn:    x.Arn,
		StateMachineArn: x.StateMachineArn,
		Name:            x.Name,
		StartDate:       history.EpochTime(x.StartDate),
		Status:          syncStatus(x.Status),
		Error:           x.Error,
		Cause:           x.Cause,
		BillingDetails:  &BillingDetails{BilledMemoryUsedInMB: res.BilledMemoryMB, BilledDurationInMilliseconds: res.BilledDurationMillis},
	}
	if x.StopDate != nil {
		out.StopDate = history.EpochTime(*x.StopDate)
	} else {
		out.StopDate = history.EpochTime(s.now())
	}
	if x.TraceHeader != "" {
		out.TraceHeader = ptr(x.TraceHeader)
	}
	included := in.IncludedData != includedMetadataOnly
	out.InputDetails = &DataDetails{Included: included}
	out.OutputDetails = &DataDetails{Included: included}
	if included {
		out.Input = ptr(x.Input)
		if x.Status == history.StatusSucceeded {
			out.Output = x.Output
		}
	}
	return out, nil
}

// syncStatus maps an execution status to a SyncExecutionStatus, which has
// no ABORTED (an aborted synchronous execution failed).
func syncStatus(st history.ExecutionStatus) string {
	switch st {
	case history.StatusSucceeded, history.StatusTimedOut:
		return string(st)
	default:
		return string(history.StatusFailed)
	}
}

// engineError passes the engine's API errors on and words its store errors.
func engineError(op string, err error) error {
	var (
		input   *engine.InvalidInputError
		output  *engine.InvalidOutputError
		redrive *engine.NotRedrivableError
	)
	switch {
	case errors.Is(err, task.ErrStopped):
		return sfnapi.NewError(sfnapi.CodeServiceUnavailable, "the server is shutting down")
	case errors.Is(err, engine.ErrInvalidToken):
		return sfnapi.NewError(sfnapi.CodeInvalidToken, "Invalid Token: 'Invalid token'")
	case errors.Is(err, engine.ErrTaskOver):
		return sfnapi.NewError(sfnapi.CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
	case errors.As(err, &input):
		return startrule.InvalidInput(input.Err.Error())
	case errors.As(err, &output):
		return sfnapi.NewError(sfnapi.CodeInvalidOutput, "Invalid Output: '%v'", output.Err)
	case errors.As(err, &redrive):
		return errExecutionNotRedrivable(redrive.Arn, redrive.Reason())
	}
	return storeError(op, err)
}

// executionArnInput checks a required execution ARN member and parses it.
func (s *Service) executionArnInput(text string) (*executionRef, error) {
	v := newValidator()
	if v.required("executionArn", text) {
		v.length("executionArn", text, 1, maxArnLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return s.parseExecutionArn(text)
}

// getExecution returns the execution an ARN names, or
// ExecutionDoesNotExist.
func (s *Service) getExecution(ctx context.Context, ref *executionRef) (*store.Execution, error) {
	if !ref.local {
		return nil, errExecutionDoesNotExist(ref.arn)
	}
	x, err := s.db().ExecutionGet(ctx, ref.arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errExecutionDoesNotExist(ref.arn)
	}
	if err != nil {
		return nil, storeError("get execution", err)
	}
	return x, nil
}

// DescribeExecution describes an execution.
func (s *Service) DescribeExecution(ctx context.Context, in *DescribeExecutionInput) (*DescribeExecutionOutput, error) {
	if err := checkIncludedData(in.IncludedData); err != nil {
		return nil, err
	}
	ref, err := s.executionArnInput(in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	x, err := s.getExecution(ctx, ref)
	if err != nil {
		return nil, err
	}
	included := in.IncludedData != includedMetadataOnly
	out := &DescribeExecutionOutput{
		ExecutionArn:           x.Arn,
		StateMachineArn:        x.StateMachineArn,
		Name:                   x.Name,
		Status:                 string(x.Status),
		StartDate:              history.EpochTime(x.StartDate),
		InputDetails:           &DataDetails{Included: included},
		Error:                  x.Error,
		Cause:                  x.Cause,
		RedriveCount:           x.RedriveCount,
		StateMachineVersionArn: x.VersionArn,
		MapRunArn:              x.MapRunArn,
		StateMachineAliasArn:   x.AliasArn,
	}
	if included {
		out.Input = ptr(x.Input)
	}
	if x.StopDate != nil {
		out.StopDate = ptr(history.EpochTime(*x.StopDate))
	}
	if x.Status == history.StatusSucceeded {
		out.OutputDetails = &DataDetails{Included: included}
		if included {
			out.Output = x.Output
		}
	}
	if x.TraceHeader != "" {
		out.TraceHeader = ptr(x.TraceHeader)
	}
	if x.RedriveDate != nil {
		out.RedriveDate = ptr(history.EpochTime(*x.RedriveDate))
	}
	reason := s.notRedrivable(x, ref.express)
	switch {
	case x.MapRunArn != "" && (reason == "" || ref.express) && x.Status != history.StatusRunning && x.Status != history.StatusSucceeded:
		out.RedriveStatus = redriveByMapRun
	case reason == "":
		out.RedriveStatus = redriveRedrivable
	default:
		out.RedriveStatus = redriveNotRedrivable
		out.RedriveStatusReason = ptr(reason)
	}
	return out, nil
}

// notRedrivable returns why an execution cannot be redriven, or "".
func (s *Service) notRedrivable(x *store.Execution, express bool) string {
	return NotRedrivableReason(x, express, s.now())
}

// NotRedrivableReason returns why an execution cannot be redriven at now,
// in AWS's words (DescribeExecution's redriveStatusReason), or "" when it
// can be.
func NotRedrivableReason(x *store.Execution, express bool, now time.Time) string {
	var why *engine.NotRedrivableError
	switch err := engine.Redrivable(x, now); {
	case errors.As(err, &why):
		return why.Reason()
	case express:
		return "Execution is EXPRESS and cannot be redriven"
	}
	return ""
}

// DescribeStateMachineForExecution describes the state machine revision an
// execution runs.
func (s *Service) DescribeStateMachineForExecution(ctx context.Context, in *DescribeStateMachineForExecutionInput) (*DescribeStateMachineForExecutionOutput, error) {
	if err := checkIncludedData(in.IncludedData); err != nil {
		return nil, err
	}
	ref, err := s.executionArnInput(in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	x, err := s.getExecution(ctx, ref)
	if err != nil {
		return nil, err
	}
	if x.MapRunArn != "" {
		return s.describeChildMachine(ctx, x, in.IncludedData)
	}
	rev, err := s.db().RevisionGet(ctx, x.StateMachineArn, x.RevisionID)
	if err != nil {
		return nil, storeError("get revision", err)
	}
	out := &DescribeStateMachineForExecutionOutput{
		StateMachineArn:         x.StateMachineArn,
		Name:                    awsarn.StateMachineName(x.StateMachineArn),
		Definition:              rev.Definition,
		RoleArn:                 rev.RoleArn,
		UpdateDate:              history.EpochTime(rev.CreatedAt),
		LoggingConfiguration:    defaultLogging(),
		TracingConfiguration:    defaultTracing(),
		EncryptionConfiguration: defaultEncryption(),
		VariableReferences:      variableReferencesOf(rev.Definition),
	}
	sm, err := s.db().StateMachineGet(ctx, x.StateMachineArn)
	switch {
	case err == nil:
		out.Name = sm.Name
		out.LoggingConfiguration = readConfig(sm.LoggingConfiguration, defaultLogging())
		out.TracingConfiguration = readConfig(sm.TracingConfiguration, defaultTracing())
		out.EncryptionConfiguration = readConfig(sm.EncryptionConfiguration, defaultEncryption())
		if !rev.CreatedAt.Equal(sm.CreatedAt) {
			out.RevisionID = rev.RevisionID
		}
	case !errors.Is(err, store.ErrNotFound):
		return nil, storeError("get state machine", err)
	}
	if in.IncludedData == includedMetadataOnly {
		out.Definition = ""
	}
	return out, nil
}

// ListExecutions lists a state machine's executions, newest first.
func (s *Service) ListExecutions(ctx context.Context, in *ListExecutionsInput) (*ListExecutionsOutput, error) {
	v := newValidator()
	if in.StateMachineArn != "" {
		v.length("stateMachineArn", in.StateMachineArn, 1, maxArnLength)
	}
	if in.MapRunArn != "" {
		v.length("mapRunArn", in.MapRunArn, 1, 2000)
	}
	v.enum("statusFilter", in.StatusFilter, executionStatuses...)
	v.intRange("maxResults", in.MaxResults, 0, maxPageSize)
	if in.NextToken != nil {
		v.tokenLength("nextToken", *in.NextToken, maxExecutionsTokenLength)
	}
	v.enum("redriveFilter", in.RedriveFilter, "REDRIVEN", "NOT_REDRIVEN")
	if err := v.err(); err != nil {
		return nil, err
	}
	if in.StateMachineArn == "" && in.MapRunArn == "" {
		return nil, errListExecutionsTarget()
	}
	if in.StateMachineArn != "" && in.MapRunArn != "" {
		return nil, apiErr(sfnapi.CodeValidation, "1 validation error detected: Provide either a StateMachine ARN or a MapRun ARN, not both")
	}
	if in.StateMachineArn == "" {
		return s.listMapRunExecutions(ctx, in)
	}
	// A version or alias ARN lists the executions started on it.
	sm, versionArn, aliasArn, err := s.listTarget(ctx, in.StateMachineArn)
	if err != nil {
		return nil, err
	}
	if sm.Type != typeStandard {
		return nil, errTypeNotSupported()
	}
	scope := in.StateMachineArn + "|" + in.StatusFilter + "|" + in.RedriveFilter
	c, err := decodeToken(in.NextToken, cursorExecutions, scope)
	if err != nil {
		return nil, err
	}
	limit := pageSize(in.MaxResults)
	p := &store.ExecutionListParams{StateMachineArn: sm.Arn, VersionArn: versionArn, AliasArn: aliasArn, Status: history.ExecutionStatus(in.StatusFilter), Limit: limit + 1}
	if c != nil {
		p.AfterStartDate, p.AfterArn = fromMillis(c.Time), c.After
	}
	return s.pageExecutions(ctx, p, limit, in.RedriveFilter, scope, executionItem)
}

// pageExecutions answers a ListExecutions: a page of the executions p
// selects (p.Limit is limit+1) that the redrive filter keeps, each listed
// by item, and the token of the next page in scope.
func (s *Service) pageExecutions(ctx context.Context, p *store.ExecutionListParams, limit int, redriveFilter, scope string,
	item func(*store.Execution) ExecutionListItem) (*ListExecutionsOutput, error) {
	out := &ListExecutionsOutput{Executions: []ExecutionListItem{}}
	var last *store.Execution
	for {
		rows, err := s.db().ExecutionList(ctx, p)
		if err != nil {
			return nil, storeError("list executions", err)
		}
		for _, x := range rows {
			if !redriveMatch(redriveFilter, x) {
				last = x
				continue
			}
			if len(out.Executions) == limit {
				out.NextToken = encodeToken(cursor{Kind: cursorExecutions, Scope: scope, After: last.Arn, Time: millis(last.StartDate)})
				return out, nil
			}
			out.Executions = append(out.Executions, item(x))
			last = x
		}
		if len(rows) < p.Limit {
			return out, nil
		}
		p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
	}
}

func redriveMatch(filter string, x *store.Execution) bool {
	switch filter {
	case "REDRIVEN":
		return x.RedriveCount > 0
	case "NOT_REDRIVEN":
		return x.RedriveCount == 0
	}
	return true
}

func executionItem(x *store.Execution) ExecutionListItem {
	it := ExecutionListItem{
		ExecutionArn:           x.Arn,
		StateMachineArn:        x.StateMachineArn,
		Name:                   x.Name,
		Status:                 string(x.Status),
		StartDate:              history.EpochTime(x.StartDate),
		RedriveCount:           x.RedriveCount,
		StateMachineVersionArn: x.VersionArn,
		StateMachineAliasArn:   x.AliasArn,
	}
	if x.StopDate != nil {
		it.StopDate = ptr(history.EpochTime(*x.StopDate))
	}
	if x.RedriveDate != nil {
		it.RedriveDate = ptr(history.EpochTime(*x.RedriveDate))
	}
	return it
}

// StopExecution stops a running execution with an optional error and
// cause. Stopping an execution that has ended changes nothing.
func (s *Service) StopExecution(ctx context.Context, in *StopExecutionInput) (*StopExecutionOutput, error) {
	v := newValidator()
	if v.required("executionArn", in.ExecutionArn) {
		v.length("executionArn", in.ExecutionArn, 1, maxArnLength)
	}
	errName, cause := "", ""
	if in.Error != nil {
		errName = *in.Error
		v.sensitiveLength("error", errName, 0, maxErrorLength)
	}
	if in.Cause != nil {
		cause = *in.Cause
		v.sensitiveLength("cause", cause, 0, maxCauseLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	ref, err := s.parseExecutionArn(in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	if _, err := s.getExecution(ctx, ref); err != nil {
		return nil, err
	}
	row, err := s.engine.StopExecution(ctx, ref.arn, errName, cause)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errExecutionDoesNotExist(ref.arn)
	}
	if err != nil {
		return nil, engineError("stop execution", err)
	}
	stop := s.now()
	if row != nil && row.StopDate != nil {
		stop = *row.StopDate
	}
	return &StopExecutionOutput{StopDate: history.EpochTime(stop)}, nil
}

// RedriveExecution restarts a FAILED, TIMED_OUT or ABORTED STANDARD
// execution from where it failed.
func (s *Service) RedriveExecution(ctx context.Context, in *RedriveExecutionInput) (*RedriveExecutionOutput, error) {
	v := newValidator()
	if v.required("executionArn", in.ExecutionArn) {
		v.length("executionArn", in.ExecutionArn, 1, maxArnLength)
	}
	if in.ClientToken != nil {
		v.length("clientToken", *in.ClientToken, 1, 64)
		if !printableASCII(*in.ClientToken) {
			v.pattern("clientToken", *in.ClientToken, "[!-~]+")
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	ref, err := s.parseExecutionArn(in.ExecutionArn)
	if err != nil {
		return nil, err
	}
	x, err := s.getExecution(ctx, ref)
	if err != nil {
		return nil, err
	}
	if reason := s.notRedrivable(x, ref.express); reason != "" {
		return nil, errExecutionNotRedrivable(x.Arn, reason)
	}
	if x.MapRunArn != "" {
		return nil, errExecutionNotRedrivable(x.Arn, "Execution was started by a Map Run and can be redriven only with it: redrive its parent execution")
	}
	if in.By != "" {
		ctx = engine.WithActor(ctx, in.By)
	}
	row, err := s.starter.Redrive(ctx, ref.arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errExecutionDoesNotExist(ref.arn)
	}
	if err != nil {
		return nil, engineError("redrive execution", err)
	}
	date := s.now()
	if row != nil && row.RedriveDate != nil {
		date = *row.RedriveDate
	}
	return &RedriveExecutionOutput{RedriveDate: history.EpochTime(date)}, nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '!' || s[i] > '~' {
			return false
		}
	}
	return s != ""
}

// startCacheTTL is how long a state machine read for a start, and its
// failure policies, are reused (start.Config.CacheFor). Starts are the
// hot path; AWS documents that executions started shortly after
// UpdateStateMachine may still run the previous definition, and this
// node forgets its copy at once on its own updates and deletes.
const startCacheTTL = time.Second

// forgetStateMachine drops a state machine, and its failure policies,
// from the Starter's cache.
func (s *Service) forgetStateMachine(arn string) { s.starter.Forget(arn) }

// StartExecutionInput is the request of StartExecution.
type StartExecutionInput struct {
	StateMachineArn string  `json:"stateMachineArn"`
	Name            *string `json:"name,omitempty" awsjson:"name"`
	Input           *string `json:"input,omitempty"`
	TraceHeader     *string `json:"traceHeader,omitempty"`
}

// StartExecutionOutput is the response of StartExecution.
type StartExecutionOutput struct {
	ExecutionArn string            `json:"executionArn"`
	StartDate    history.EpochTime `json:"startDate"`
}

// StartSyncExecutionInput is the request of StartSyncExecution.
type StartSyncExecutionInput struct {
	StateMachineArn string  `json:"stateMachineArn"`
	Name            *string `json:"name,omitempty" awsjson:"name"`
	Input           *string `json:"input,omitempty"`
	TraceHeader     *string `json:"traceHeader,omitempty"`
	IncludedData    string  `json:"includedData,omitempty"`
}

// DataDetails says whether a payload is included in a response.
type DataDetails struct {
	Included bool `json:"included"`
}

// BillingDetails is what a synchronous execution is billed.
type BillingDetails struct {
	BilledMemoryUsedInMB         int64 `json:"billedMemoryUsedInMB"`
	BilledDurationInMilliseconds int64 `json:"billedDurationInMilliseconds"`
}

// StartSyncExecutionOutput is the response of StartSyncExecution.
type StartSyncExecutionOutput struct {
	ExecutionArn    string            `json:"executionArn"`
	StateMachineArn string            `json:"stateMachineArn,omitempty"`
	Name            string            `json:"name,omitempty"`
	StartDate       history.EpochTime `json:"startDate"`
	StopDate        history.EpochTime `json:"stopDate"`
	Status          string            `json:"status"`
	Error           *string           `json:"error,omitempty"`
	Cause           *string           `json:"cause,omitempty"`
	Input           *string           `json:"input,omitempty"`
	InputDetails    *DataDetails      `json:"inputDetails,omitempty"`
	Output          *string           `json:"output,omitempty"`
	OutputDetails   *DataDetails      `json:"outputDetails,omitempty"`
	TraceHeader     *string           `json:"traceHeader,omitempty"`
	BillingDetails  *BillingDetails   `json:"billingDetails,omitempty"`
}

// DescribeExecutionInput is the request of DescribeExecution.
type DescribeExecutionInput struct {
	ExecutionArn string `json:"executionArn"`
	IncludedData string `json:"includedData,omitempty"`
}

// DescribeExecutionOutput is the response of DescribeExecution.
type DescribeExecutionOutput struct {
	ExecutionArn        string             `json:"executionArn"`
	StateMachineArn     string             `json:"stateMachineArn"`
	Name                string             `json:"name,omitempty"`
	Status              string             `json:"status"`
	StartDate           history.EpochTime  `json:"startDate"`
	StopDate            *history.EpochTime `json:"stopDate,omitempty"`
	Input               *string            `json:"input,omitempty"`
	InputDetails        *DataDetails       `json:"inputDetails,omitempty"`
	Output              *string            `json:"output,omitempty"`
	OutputDetails       *DataDetails       `json:"outputDetails,omitempty"`
	TraceHeader         *string            `json:"traceHeader,omitempty"`
	Error               *string            `json:"error,omitempty"`
	Cause               *string            `json:"cause,omitempty"`
	RedriveCount        int                `json:"redriveCount"`
	RedriveDate         *history.EpochTime `json:"redriveDate,omitempty"`
	RedriveStatus       string             `json:"redriveStatus,omitempty"`
	RedriveStatusReason *string            `json:"redriveStatusReason,omitempty"`
	// StateMachineVersionArn and StateMachineAliasArn: the version the
	// execution ran, and the alias it was started on.
	StateMachineVersionArn string `json:"stateMachineVersionArn,omitempty"`
	StateMachineAliasArn   string `json:"stateMachineAliasArn,omitempty"`
	// MapRunArn: the map run that started the execution.
	MapRunArn string `json:"mapRunArn,omitempty"`
}

// DescribeStateMachineForExecutionInput is the request of
// DescribeStateMachineForExecution.
type DescribeStateMachineForExecutionInput struct {
	ExecutionArn string `json:"executionArn"`
	IncludedData string `json:"includedData,omitempty"`
}

// DescribeStateMachineForExecutionOutput is the response of
// DescribeStateMachineForExecution.
type DescribeStateMachineForExecutionOutput struct {
	StateMachineArn         string                   `json:"stateMachineArn"`
	Name                    string                   `json:"name"`
	Definition              string                   `json:"definition,omitempty"`
	RoleArn                 string                   `json:"roleArn"`
	UpdateDate              history.EpochTime        `json:"updateDate"`
	LoggingConfiguration    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	TracingConfiguration    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	MapRunArn               string                   `json:"mapRunArn,omitempty"`
	Label                   string                   `json:"label,omitempty"`
	RevisionID              string                   `json:"revisionId,omitempty"`
	EncryptionConfiguration *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
	VariableReferences      VariableReferences       `json:"variableReferences,omitempty"`
}

// ListExecutionsInput is the request of ListExecutions.
type ListExecutionsInput struct {
	StateMachineArn string  `json:"stateMachineArn,omitempty"`
	StatusFilter    string  `json:"statusFilter,omitempty"`
	MaxResults      *int    `json:"maxResults,omitempty"`
	NextToken       *string `json:"nextToken,omitempty"`
	MapRunArn       string  `json:"mapRunArn,omitempty"`
	RedriveFilter   string  `json:"redriveFilter,omitempty"`
}

// ExecutionListItem is one execution in a list.
type ExecutionListItem struct {
	ExecutionArn    string             `json:"executionArn"`
	StateMachineArn string             `json:"stateMachineArn"`
	Name            string             `json:"name"`
	Status          string             `json:"status"`
	StartDate       history.EpochTime  `json:"startDate"`
	StopDate        *history.EpochTime `json:"stopDate,omitempty"`
	// RedriveCount is listed only for an execution that was redriven:
	// AWS's items of the others carry none.
	RedriveCount int                `json:"redriveCount,omitempty"`
	RedriveDate  *history.EpochTime `json:"redriveDate,omitempty"`
	// StateMachineVersionArn and StateMachineAliasArn: the version the
	// execution ran, and the alias it was started on.
	StateMachineVersionArn string `json:"stateMachineVersionArn,omitempty"`
	StateMachineAliasArn   string `json:"stateMachineAliasArn,omitempty"`
	// MapRunArn: the map run, for its children listed by its ARN.
	MapRunArn string `json:"mapRunArn,omitempty"`
}

// ListExecutionsOutput is the response of ListExecutions.
type ListExecutionsOutput struct {
	Executions []ExecutionListItem `json:"executions"`
	NextToken  string              `json:"nextToken,omitempty"`
}

// StopExecutionInput is the request of StopExecution.
type StopExecutionInput struct {
	ExecutionArn string  `json:"executionArn"`
	Error        *string `json:"error,omitempty"`
	Cause        *string `json:"cause,omitempty"`
}

// StopExecutionOutput is the response of StopExecution.
type StopExecutionOutput struct {
	StopDate history.EpochTime `json:"stopDate"`
}

// RedriveExecutionInput is the request of RedriveExecution.
type RedriveExecutionInput struct {
	ExecutionArn string  `json:"executionArn"`
	ClientToken  *string `json:"clientToken,omitempty"`
	// By names who asks (the operator log's "by"): the server's to say,
	// never the request's.
	By string `json:"-"`
}

// RedriveExecutionOutput is the response of RedriveExecution.
type RedriveExecutionOutput struct {
	RedriveDate history.EpochTime `json:"redriveDate"`
}
