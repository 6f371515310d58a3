package deploy

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
	"stepwise/engine"
	"stepwise/scheduler"
	"stepwise/service"
	"stepwise/store/sqlitestore"
)

// memRecords keeps stack records in memory, counting the writes.
type memRecords struct {
	mu     sync.Mutex
	stacks map[string][]byte
	puts   int
}

func (m *memRecords) GetStack(_ context.Context, name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stacks[name], nil
}

func (m *memRecords) PutStack(_ context.Context, name string, body []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stacks[name] = body
	m.puts++
	return nil
}

func (m *memRecords) DeleteStack(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.stacks, name)
	return nil
}

func (m *memRecords) ListStacks(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := sortedKeys(m.stacks)
	sort.Strings(names)
	return names, nil
}

// memFunctions records the functions put.
type memFunctions struct {
	mu  sync.Mutex
	fns map[string]*Function
}

func (m *memFunctions) PutFunction(_ context.Context, f *Function) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fns[f.Name] = f
	return nil
}

func (m *memFunctions) HasFunction(_ context.Context, name string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fns[name] != nil, nil
}

func (m *memFunctions) DeleteFunction(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.fns, name)
	return nil
}

type testBed struct {
	d       *Deployer
	svc     *service.Service
	records *memRecords
	fns     *memFunctions
}

// newTestBed is a deployer onto a real service and scheduler on a
// SQLite file.
func newTestBed(t testing.TB) *testBed {
	t.Helper()
	return newTestBedWith(t, scheduler.Config{})
}

// newTestBedWith is newTestBed with the scheduler's configuration (its
// region and account set).
func newTestBedWith(t testing.TB, sc scheduler.Config) *testBed {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "stepwise.db"), sqlitestore.Options{})
	require.NoError(t, err)
	eng, err := engine.New(drv, engine.Config{Region: "us-east-1", Account: "123456789012", WaitTimeScale: 1})
	require.NoError(t, err)
	require.NoError(t, eng.Start(ctx))
	svc, err := service.New(drv, eng, service.Config{})
	require.NoError(t, err)
	t.Cleanup(func() {
		eng.Stop()
		drv.Close()
	})
	b := &testBed{svc: svc, records: &memRecords{stacks: map[string][]byte{}}, fns: &memFunctions{fns: map[string]*Function{}}}
	sc.Region, sc.Account = "us-east-1", "123456789012"
	b.d = &Deployer{Service: svc, Scheduler: scheduler.New(drv.Executor(), sc),
		Functions: b.fns, Records: b.records}
	return b
}

// deploy parses and deploys a template as stack "app".
func (b *testBed) deploy(t *testing.T, tmpl string, params map[string]string) (*Report, error) {
	t.Helper()
	tp, err := cfn.Parse([]byte(tmpl))
	require.NoError(t, err)
	return b.d.Deploy(context.Background(), tp, Options{StackName: "app", Parameters: params, BaseDir: t.TempDir()})
}

// actions is a report's changes as "LogicalId action" lines.
func actions(r *Report) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, c.LogicalID+" "+string(c.Action))
	}
	return out
}

func (b *testBed) activities(t *testing.T) []string {
	t.Helper()
	out, err := b.svc.ListActivities(context.Background(), &service.ListActivitiesInput{})
	require.NoError(t, err)
	var names []string
	for _, a := range out.Activities {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return names
}

const activities = `
Parameters:
  Env: {Type: String, Default: dev}
Resources:
  Approve:
    Type: AWS::StepFunctions::Activity
    Properties:
      Name: !Sub approve-${Env}
      Tags: [{Key: team, Value: night}]
  Role:
    Type: AWS::IAM::Role
    Properties: {AssumeRolePolicyDocument: {}}
Outputs:
  ApproveArn: {Value: !Ref Approve}
  RoleArn: {Value: !GetAtt Role.Arn}
`

func TestActivitiesCreatedUnchangedUpdatedReplacedDeleted(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()

	r, err := b.deploy(t, activities, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Approve created", "Role skipped"}, actions(r))
	require.Equal(t, []string{"approve-dev"}, b.activities(t))
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:activity:approve-dev", r.Outputs[0].Value)
	require.Equal(t, "arn:aws:iam::123456789012:role/app-Role", r.Outputs[1].Value)
	require.Len(t, r.Warnings, 1)
	require.Contains(t, r.Warnings[0], "Role (AWS::IAM::Role) is not made here")

	// The same template again: nothing changes, the record is not
	// rewritten.
	puts := b.records.puts
	r, err = b.deploy(t, activities, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Approve unchanged", "Role skipped"}, actions(r))
	require.False(t, r.Changed())
	require.Equal(t, puts, b.records.puts)

	// New tags: updated in place.
	r, err = b.deploy(t, strings.Replace(activities, "Value: night", "Value: day", 1), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Approve updated", "Role skipped"}, actions(r))
	tags, err := b.svc.ListTagsForResource(ctx, &service.ListTagsForResourceInput{ResourceArn: r.Changes[0].Physical})
	require.NoError(t, err)
	require.Len(t, tags.Tags, 1)
	require.Equal(t, "day", *tags.Tags[0].Value)

	// A new name: a new activity, the old one deleted.
	r, err = b.deploy(t, activities, map[string]string{"Env": "prod"})
	require.NoError(t, err)
	require.Equal(t, []string{"Approve replaced", "Role skipped"}, actions(r))
	require.Equal(t, []string{"approve-prod"}, b.activities(t))

	// An activity deleted by hand is made again.
	_, err = b.svc.DeleteActivity(ctx, &service.DeleteActivityInput{ActivityArn: r.Changes[0].Physical})
	require.NoError(t, err)
	r, err = b.deploy(t, activities, map[string]string{"Env": "prod"})
	require.NoError(t, err)
	require.Equal(t, []string{"Approve created", "Role skipped"}, actions(r))

	// Gone from the template: deleted.
	r, err = b.deploy(t, "Resources:\n  Other: {Type: AWS::StepFunctions::Activity, Properties: {Name: other}}\n", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Other created", "Role deleted", "Approve deleted"}, actions(r))
	require.Equal(t, []string{"other"}, b.activities(t))

	// The stack deleted: its resources and its record.
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Other deleted"}, actions(r))
	require.Empty(t, b.activities(t))
	require.Empty(t, b.records.stacks)
	_, err = b.d.Delete(ctx, "app")
	require.ErrorContains(t, err, "stack app does not exist")
}

func TestRetainedOutlivesTheStack(t *testing.T) {
	b := newTestBed(t)
	_, err := b.deploy(t, "Resources:\n  Keep: {Type: AWS::StepFunctions::Activity, DeletionPolicy: Retain, Properties: {Name: keep}}\n", nil)
	require.NoError(t, err)
	r, err := b.d.Delete(context.Background(), "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Keep retained"}, actions(r))
	require.Equal(t, []string{"keep"}, b.activities(t))
}

func TestErrorsNameTheResource(t *testing.T) {
	b := newTestBed(t)
	_, err := b.deploy(t, "Resources:\n  NoName: {Type: AWS::StepFunctions::Activity, Properties: {}}\n", nil)
	require.ErrorContains(t, err, "resource NoName (AWS::StepFunctions::Activity): Properties.Name")
	_, err = b.deploy(t, "Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: a}}\nOutputs:\n  X: {Value: !GetAtt A.Nope}\n", nil)
	require.ErrorContains(t, err, "Template error: resource A does not support attribute type Nope in Fn::GetAtt")
	_, err = b.d.Deploy(context.Background(), &cfn.Template{}, Options{StackName: "1bad"})
	require.ErrorContains(t, err, `stack name "1bad"`)
}

func TestImportValueReadsOtherStacksExports(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	tp, err := cfn.Parse([]byte("Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: shared}}\nOutputs:\n  Arn: {Value: !Ref A, Export: {Name: shared-arn}}\n"))
	require.NoError(t, err)
	_, err = b.d.Deploy(ctx, tp, Options{StackName: "base"})
	require.NoError(t, err)
	r, err := b.deploy(t, "Resources:\n  B: {Type: AWS::StepFunctions::Activity, Properties: {Name: !Join [-, [b, !Select [6, !Split [':', !ImportValue shared-arn]]]]}}\n", nil)
	require.NoError(t, err)
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:activity:b-shared", r.Changes[0].Physical)
}

// A deploy that fails part way keeps the record of what it did not
// reach: a later delete still finds and deletes it.
func TestFailedDeployKeepsWhatItDidNotReach(t *testing.T) {
	b := newTestBed(t)
	two := "Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: a}}\n  B: {Type: AWS::StepFunctions::Activity, DependsOn: A, Properties: {Name: b}}\n  C: {Type: AWS::StepFunctions::Activity, DependsOn: B, Properties: {Name: c}}\n"
	_, err := b.deploy(t, two, nil)
	require.NoError(t, err)
	_, err = b.deploy(t, strings.Replace(two, "{Name: b}", "{}", 1), nil)
	require.ErrorContains(t, err, "resource B (AWS::StepFunctions::Activity)")
	r, err := b.d.Delete(context.Background(), "app")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"A deleted", "B deleted", "C deleted"}, actions(r))
	require.Empty(t, b.activities(t))
}

// A SAM state machine made before its event failed is recorded: the
// next deploy finds it and makes the event; a delete removes both.
func TestMadeBeforeItFailedIsRecorded(t *testing.T) {
	b := newTestBed(t)
	tmpl := `Transform: AWS::Serverless-2016-10-31
Resources:
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}
      Events:
        Nightly: {Type: ScheduleV2, Properties: {ScheduleExpression: "EXPR"}}
`
	_, err := b.deploy(t, strings.Replace(tmpl, "EXPR", "every night", 1), nil)
	require.ErrorContains(t, err, "resource Flow (AWS::Serverless::StateMachine)")
	r, err := b.deploy(t, strings.Replace(tmpl, "EXPR", "cron(0 2 * * ? *)", 1), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Flow unchanged", "FlowNightly created"}, actions(r))
	r, err = b.d.Delete(context.Background(), "app")
	require.NoError(t, err)
	require.Equal(t, []string{"FlowNightly deleted", "Flow deleted"}, actions(r))
	list, err := b.svc.ListStateMachines(context.Background(), &service.ListStateMachinesInput{})
	require.NoError(t, err)
	require.Empty(t, list.StateMachines)
}

// A resource moved to another logical id under the same name is kept:
// the old id's removal does not delete what the new id has.
func TestMovedToAnotherLogicalIDIsKept(t *testing.T) {
	b := newTestBed(t)
	_, err := b.deploy(t, "Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: shared}}\n", nil)
	require.NoError(t, err)
	r, err := b.deploy(t, "Resources:\n  B: {Type: AWS::StepFunctions::Activity, Properties: {Name: shared}}\n", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"B unchanged", "A retained"}, actions(r))
	require.Equal(t, "now B's", r.Changes[1].Note)
	require.Equal(t, []string{"shared"}, b.activities(t))
}

// A name made from a long stack name and logical id is cut with a hash
// of the whole, so ids that differ only at the end keep different names.
func TestLongNamesStayApart(t *testing.T) {
	x := &run{opts: Options{StackName: strings.Repeat("s", 40)}}
	a, b := x.name("PriceOrderFunctionC1D8E794", 64), x.name("PriceOrderFunctionAB12CD34", 64)
	require.Len(t, a, 64)
	require.NotEqual(t, a, b)
	require.Equal(t, "app-Short", (&run{opts: Options{StackName: "app"}}).name("Short", 64))
}

// Each resource is recorded as soon as it is made, and its intent before
// it is: a server stopped mid-deploy has recorded what it made or was
// making (the record before the third of three resources is made holds
// the first two, and the third's intent).
func TestRecordedAsItGoes(t *testing.T) {
	b := newTestBed(t)
	var bodies []string
	rec := &hookRecords{memRecords: b.records, put: func(body []byte) { bodies = append(bodies, string(body)) }}
	b.d.Records = rec
	tmpl := "Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: a}}\n  B: {Type: AWS::StepFunctions::Activity, DependsOn: A, Properties: {Name: b}}\n  C: {Type: AWS::StepFunctions::Activity, DependsOn: B, Properties: {Name: c}}\n"
	_, err := b.deploy(t, tmpl, nil)
	require.NoError(t, err)
	require.Len(t, bodies, 4, "one write before each resource is made (its intent, with what was made before it), one at the end")
	var before stackRecord
	require.NoError(t, json.Unmarshal([]byte(bodies[2]), &before))
	require.Equal(t, []string{"A", "B"}, before.Order)
	require.Len(t, before.Creating, 1)
	require.Equal(t, "C", before.Creating[0].LogicalID)

	// As if the server stopped before C was made: the next deploy finds
	// A and B, and makes only C.
	b.records.stacks["app"] = []byte(bodies[2])
	_, err = b.svc.DeleteActivity(context.Background(), &service.DeleteActivityInput{ActivityArn: "arn:aws:states:us-east-1:123456789012:activity:c"})
	require.NoError(t, err)
	r, err := b.deploy(t, tmpl, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"A unchanged", "B unchanged", "C created"}, actions(r))
}

// hookRecords tells of each record written.
type hookRecords struct {
	*memRecords
	put func([]byte)
}

func (h *hookRecords) PutStack(ctx context.Context, name string, body []byte) error {
	h.put(body)
	return h.memRecords.PutStack(ctx, name, body)
}
