package start_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/history"
	"stepwise/service"
	"stepwise/service/servicetest"
	"stepwise/sfnapi"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

const (
	region  = "us-east-1"
	account = "123456789012"
	prefix  = "arn:aws:states:us-east-1:123456789012:"
	def     = `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`
	// fanDef has a Map state, P, which a failure policy applies to.
	fanDef = `{"StartAt": "P", "States": {"P": {"Type": "Map", "ItemProcessor": {"StartAt": "I", "States": {"I": {"Type": "Pass", "End": true}}}, "End": true}}}`
)

// runs is the engine under a Starter: it records the parameters of each
// start, and refuses an ARN it started already.
type runs struct {
	mu      sync.Mutex
	started []*start.Params
	arns    map[string]bool
}

func (r *runs) StartExecution(_ context.Context, p *start.Params) (*store.Execution, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.arns[p.ExecutionArn] {
		return nil, store.ErrAlreadyExists
	}
	r.arns[p.ExecutionArn] = true
	r.started = append(r.started, p)
	return &store.Execution{Arn: p.ExecutionArn, Name: p.Name, StateMachineArn: p.StateMachine.Arn, Status: history.StatusRunning,
		VersionArn: p.VersionArn, AliasArn: p.AliasArn, MapRunArn: p.MapRunArn}, nil
}

func (r *runs) StartSyncExecution(_ context.Context, p *start.Params) (*start.SyncResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, p)
	return &start.SyncResult{Execution: &store.Execution{Arn: p.ExecutionArn}}, nil
}

func (r *runs) RedriveExecution(context.Context, string) (*store.Execution, error) {
	return nil, errors.New("not redriven")
}

type testBundle struct {
	drv  *sqlitestore.Driver
	svc  *service.Service // writes the state machines, versions, aliases, tags
	runs *runs
	ids  int
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "db"), sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { drv.Close() })
	svc, err := service.New(drv, servicetest.StoreEngine(drv, nil), service.Config{Region: region, Account: account})
	require.NoError(t, err)
	return &testBundle{drv: drv, svc: svc, runs: &runs{arns: map[string]bool{}}}
}

// starter is a Starter over the bundle's store, with fresh ids id-1,
// id-2, ... and the aliases' weights drawn at draw.
func (b *testBundle) starter(cfg start.Config) *start.Starter {
	cfg.Store, cfg.Runs, cfg.Region, cfg.Account = b.drv.Executor(), b.runs, region, account
	cfg.NewID = func() string { b.ids++; return "id-" + string(rune('0'+b.ids)) }
	return start.New(cfg)
}

// machine creates a state machine with a version (1) and an alias
// (live, on version 1) and a failure policy tag.
func (b *testBundle) machine(t *testing.T, name, typ string) {
	t.Helper()
	ctx := context.Background()
	out, err := b.svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: name, Definition: fanDef, Type: typ,
		RoleArn: "arn:aws:iam::123456789012:role/r", Publish: true,
		Tags: []service.Tag{{Key: ptr("stepwise:policy/P"), Value: ptr("finish-running")}}})
	require.NoError(t, err)
	_, err = b.svc.CreateStateMachineAlias(ctx, &service.CreateStateMachineAliasInput{Name: "live",
		RoutingConfiguration: []service.RoutingConfigurationListItem{{StateMachineVersionArn: out.StateMachineVersionArn, Weight: ptr(100)}}})
	require.NoError(t, err)
}

func ptr[T any](v T) *T { return &v }

// Every start that names a state machine resolves it in one place: a
// version or an alias records the version and the alias, the failure
// policies come from the tags, the ARN and name are made once.
func TestStartResolvesStateMachineVersionAndAlias(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.machine(t, "m", "")
	s := b.starter(start.Config{})
	ctx := context.Background()
	for _, tc := range []struct {
		arn, version, alias string
	}{
		{prefix + "stateMachine:m", "", ""},
		{prefix + "stateMachine:m:1", prefix + "stateMachine:m:1", ""},
		{prefix + "stateMachine:m:live", prefix + "stateMachine:m:1", prefix + "stateMachine:m:live"},
	} {
		row, err := s.Start(ctx, &start.Request{StateMachineArn: tc.arn})
		require.NoError(t, err, tc.arn)
		p := b.runs.started[len(b.runs.started)-1]
		require.Equal(t, prefix+"stateMachine:m", p.StateMachine.Arn, tc.arn)
		require.Equal(t, tc.version, p.VersionArn, tc.arn)
		require.Equal(t, tc.alias, p.AliasArn, tc.arn)
		require.Equal(t, tc.alias, row.AliasArn, tc.arn)
		require.Equal(t, `{"P":["finish-running"]}`, p.Policies.Text(), tc.arn)
		require.Equal(t, prefix+"execution:m:"+p.Name, p.ExecutionArn, tc.arn)
		require.Equal(t, "{}", p.Input, "no input is {}")
		require.True(t, p.InputParsed)
		require.NotNil(t, p.Machine, "the definition is parsed once, here")
	}
}

// A start the API would refuse is refused with AWS's code and message, in
// StartExecution's order of checks.
func TestStartRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.machine(t, "m", "")
	s := b.starter(start.Config{TestCase: func(sm, tc string) bool { return tc == "happy" }})
	ctx := context.Background()
	bad := "{no"
	for _, tc := range []struct {
		r          start.Request
		code, text string
	}{
		{start.Request{StateMachineArn: prefix + "stateMachine:gone"}, sfnapi.CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '" + prefix + "stateMachine:gone'"},
		{start.Request{StateMachineArn: prefix + "stateMachine:m:7"}, sfnapi.CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '" + prefix + "stateMachine:m:7'"},
		{start.Request{StateMachineArn: "arn:aws:states:eu-west-1:123456789012:stateMachine:m"}, sfnapi.CodeStateMachineDoesNotExist, "State Machine Does Not Exist: 'arn:aws:states:eu-west-1:123456789012:stateMachine:m'"},
		{start.Request{StateMachineArn: "nope", Name: "a b"}, sfnapi.CodeInvalidArn, "Invalid Arn: 'Invalid ARN prefix: nope'"},
		{start.Request{StateMachineArn: prefix + "stateMachine:gone", Name: "a b"}, sfnapi.CodeInvalidName, "Invalid Name: 'a b'"},
		{start.Request{StateMachineArn: prefix + "stateMachine:m", Sync: true}, sfnapi.CodeStateMachineTypeNotSupp, "This operation is not supported by this type of state machine"},
		{start.Request{StateMachineArn: prefix + "stateMachine:m", Input: &bad}, sfnapi.CodeInvalidExecutionInput, "Invalid State Machine Execution Input: 'Unexpected character ('n' (code 110)): was expecting double-quote to start field name'"},
		{start.Request{StateMachineArn: prefix + "stateMachine:m#sad", TestCases: true}, sfnapi.CodeValidation, "The mock configuration has no test case 'sad' for state machine 'm'"},
		{start.Request{StateMachineArn: prefix + "stateMachine:m#happy"}, sfnapi.CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '" + prefix + "stateMachine:m#happy'"},
	} {
		_, err := s.Start(ctx, &tc.r)
		var refused *sfnapi.Error
		require.ErrorAs(t, err, &refused, tc.r.StateMachineArn)
		require.Equal(t, tc.code, refused.Code, tc.r.StateMachineArn)
		require.Equal(t, tc.text, refused.Message, tc.r.StateMachineArn)
	}
	require.Empty(t, b.runs.started)

	_, err := s.Start(ctx, &start.Request{StateMachineArn: prefix + "stateMachine:m#happy", TestCases: true})
	require.NoError(t, err)
	require.Equal(t, "happy", b.runs.started[0].TestCase)
}

// A name taken is an ExistsError with the execution's ARN; an EXPRESS
// execution's ARN ends with the id given, or a fresh one.
func TestStartArns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.machine(t, "m", "")
	b.machine(t, "x", "EXPRESS")
	s := b.starter(start.Config{})
	ctx := context.Background()
	_, err := s.Start(ctx, &start.Request{StateMachineArn: prefix + "stateMachine:m", Name: "once"})
	require.NoError(t, err)
	_, err = s.Start(ctx, &start.Request{StateMachineArn: prefix + "stateMachine:m", Name: "once"})
	var taken *start.ExistsError
	require.ErrorAs(t, err, &taken)
	require.Equal(t, prefix+"execution:m:once", taken.Arn)
	require.ErrorIs(t, err, store.ErrAlreadyExists)

	_, err = s.Start(ctx, &start.Request{StateMachineArn: prefix + "stateMachine:x", Name: "e", ExpressID: "derived"})
	require.NoError(t, err)
	require.Equal(t, prefix+"express:x:e:derived", b.runs.started[1].ExecutionArn)
	res, err := s.StartSync(ctx, &start.Request{StateMachineArn: prefix + "stateMachine:x:live", Sync: true})
	require.NoError(t, err)
	require.Equal(t, prefix+"express:x:id-1:id-2", res.Execution.Arn, "a fresh name, then a fresh id")
	require.Equal(t, prefix+"stateMachine:x:live", b.runs.started[2].AliasArn)
}

// A request whose target is resolved already (a map run's child) is not
// resolved again: its target, map run and checked input are what run.
func TestStartResolvedTarget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.starter(start.Config{})
	sm := &store.StateMachine{Arn: prefix + "stateMachine:parent/Map", RevisionID: "r1", Type: "STANDARD", Name: "parent/Map", Definition: def}
	in := `"item"`
	_, err := s.Start(context.Background(), &start.Request{Target: &start.Target{StateMachine: sm, TestCase: "happy"},
		ExecutionArn: prefix + "execution:parent/Map:c1", Name: "c1", Input: &in, InputChecked: true, InputValue: "item",
		MapRunArn: prefix + "mapRun:parent/Map:r"})
	require.NoError(t, err, "a state machine the store does not hold")
	p := b.runs.started[0]
	require.Equal(t, sm, p.StateMachine)
	require.Equal(t, "happy", p.TestCase)
	require.Equal(t, prefix+"mapRun:parent/Map:r", p.MapRunArn)
	require.Equal(t, "item", p.InputValue)
	require.Nil(t, p.Policies, "a resolved target's policies are its own")
}

// With CacheFor, a state machine read for a start is reused until it is
// forgotten.
func TestStartCache(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.machine(t, "m", "")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := b.starter(start.Config{CacheFor: time.Second, Now: func() time.Time { return now }})
	ctx := context.Background()
	arn := prefix + "stateMachine:m"
	_, err := s.Start(ctx, &start.Request{StateMachineArn: arn})
	require.NoError(t, err)
	_, err = b.svc.DeleteStateMachine(ctx, &service.DeleteStateMachineInput{StateMachineArn: arn})
	require.NoError(t, err)
	_, err = s.Start(ctx, &start.Request{StateMachineArn: arn})
	require.NoError(t, err, "read a moment ago")
	s.Forget(arn)
	_, err = s.Start(ctx, &start.Request{StateMachineArn: arn})
	var refused *sfnapi.Error
	require.ErrorAs(t, err, &refused)
	require.Equal(t, sfnapi.CodeStateMachineDoesNotExist, refused.Code)
}
