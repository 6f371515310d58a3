package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
	"stepwise/service"
)

const handMadeTemplate = `
Resources:
  Other: {Type: AWS::StepFunctions::Activity, Properties: {Name: other}}
  Approve: {Type: AWS::StepFunctions::Activity, DependsOn: Other, Properties: {Name: approve}}
  Flow:
    Type: AWS::StepFunctions::StateMachine
    DependsOn: Approve
    Properties:
      StateMachineName: flow
      DefinitionString: '{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}'
`

const handMadeDefinition = `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 1, "End": true}}}`

// makeByHand makes the activity "approve" and the state machine "flow"
// through the service, as a user would.
func (b *testBed) makeByHand(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	_, err := b.svc.CreateActivity(ctx, &service.CreateActivityInput{Name: "approve"})
	require.NoError(t, err)
	_, err = b.svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "flow", Definition: handMadeDefinition,
		RoleArn: "arn:aws:iam::123456789012:role/by-hand"})
	require.NoError(t, err)
}

// A named resource that is there and that the stack did not make fails
// the deploy before anything is made; --adopt takes it over, and the
// stack's delete then deletes it.
func TestHandMadeResourcesAreRefusedThenAdopted(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	ctx := context.Background()
	b.makeByHand(t)
	flowArn := "arn:aws:states:us-east-1:123456789012:stateMachine:flow"

	r, err := b.deploy(t, handMadeTemplate, nil)
	require.EqualError(t, err, "resource Approve (AWS::StepFunctions::Activity): approve already exists (HandlerErrorCode: AlreadyExists); deploy with --adopt to take it over\n"+
		"resource Flow (AWS::StepFunctions::StateMachine): flow already exists (HandlerErrorCode: AlreadyExists); deploy with --adopt to take it over")
	var exists *AlreadyExistsError
	require.ErrorAs(t, err, &exists)
	require.Empty(t, r.Changes)
	require.Equal(t, []string{"approve"}, b.activities(t), "nothing is made: not even the resource before them")
	require.JSONEq(t, handMadeDefinition, b.smDefinition(t, flowArn).Definition)
	require.Empty(t, b.records.stacks)

	tp, err := cfn.Parse([]byte(handMadeTemplate))
	require.NoError(t, err)
	r, err = b.d.Deploy(ctx, tp, Options{StackName: "app", Adopt: true})
	require.NoError(t, err)
	require.Equal(t, []string{"Other created", "Approve adopted", "Flow adopted"}, actions(r))
	require.Equal(t, "taken over: now the stack's own, deleted with it", r.Changes[1].Note)
	require.JSONEq(t, `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`, b.smDefinition(t, flowArn).Definition,
		"the state machine taken over is brought to the template's definition")

	// Now the stack's: an unchanged deploy changes nothing.
	r, err = b.deploy(t, handMadeTemplate, nil)
	require.NoError(t, err)
	require.False(t, r.Changed(), "%v", actions(r))

	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Flow deleted", "Approve deleted", "Other deleted"}, actions(r))
	require.Empty(t, b.activities(t))
	require.Empty(t, b.smNames(t))
}

// Without --adopt, a stack's delete never deletes what was made by hand,
// even when a later template names it.
func TestDeleteLeavesWhatTheStackDidNotMake(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	ctx := context.Background()
	_, err := b.deploy(t, "Resources:\n  Other: {Type: AWS::StepFunctions::Activity, Properties: {Name: other}}\n", nil)
	require.NoError(t, err)
	b.makeByHand(t)

	// Renamed onto the hand-made one: refused at its turn.
	_, err = b.deploy(t, "Resources:\n  Other: {Type: AWS::StepFunctions::Activity, Properties: {Name: approve}}\n", nil)
	require.ErrorContains(t, err, "resource Other (AWS::StepFunctions::Activity): approve already exists (HandlerErrorCode: AlreadyExists)")
	// A new resource naming it: refused before anything is made.
	_, err = b.deploy(t, "Resources:\n  Other: {Type: AWS::StepFunctions::Activity, Properties: {Name: other2}}\n  Flow: {Type: AWS::StepFunctions::StateMachine, Properties: {StateMachineName: flow, DefinitionString: '{}'}}\n", nil)
	require.ErrorContains(t, err, "resource Flow (AWS::StepFunctions::StateMachine): flow already exists")
	require.ElementsMatch(t, []string{"approve", "other"}, b.activities(t))

	r, err := b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Other deleted"}, actions(r))
	require.Equal(t, []string{"approve"}, b.activities(t))
	require.Equal(t, []string{"flow"}, b.smNames(t))
}

// Another stack's resource is refused, naming that stack, even with
// --adopt.
func TestAnotherStacksResourceIsNotTaken(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	ctx := context.Background()
	tp, err := cfn.Parse([]byte("Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: shared}}\n"))
	require.NoError(t, err)
	_, err = b.d.Deploy(ctx, tp, Options{StackName: "base"})
	require.NoError(t, err)
	for _, adopt := range []bool{false, true} {
		_, err = b.d.Deploy(ctx, tp, Options{StackName: "app", Adopt: adopt})
		require.ErrorContains(t, err, "resource A (AWS::StepFunctions::Activity): shared already exists (HandlerErrorCode: AlreadyExists): it is stack base's")
	}
}

// stoppedAfterCreate returns the record as a server killed right after
// the create call of logical id stopAt (before its record was written)
// left it: the last body written that had its intent.
func stoppedAfterCreate(t *testing.T, bodies []string, stopAt string) []byte {
	t.Helper()
	var last string
	for _, body := range bodies {
		var rec stackRecord
		require.NoError(t, json.Unmarshal([]byte(body), &rec))
		for _, it := range rec.Creating {
			if it.LogicalID == stopAt {
				require.Equal(t, stateCreating, it.State)
				require.Nil(t, rec.Resources[stopAt])
				last = body
			}
		}
	}
	require.NotEmpty(t, last, "no intent of %s was recorded", stopAt)
	return []byte(last)
}

const threeActivities = "Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: a}}\n" +
	"  B: {Type: AWS::StepFunctions::Activity, DependsOn: A, Properties: {Name: b}}\n" +
	"  C: {Type: AWS::StepFunctions::Activity, DependsOn: B, Properties: {Name: c}}\n"

// The intent to create is recorded before the create call: a deploy
// stopped after the call and before its record leaves the resource the
// stack's. The next deploy takes it as made (not made twice, not
// refused), and the stack's delete deletes it: nothing is left over.
func TestAResourceMadeBeforeAStopIsTheStacks(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	ctx := context.Background()
	var bodies []string
	b.d.Records = &hookRecords{memRecords: b.records, put: func(body []byte) { bodies = append(bodies, string(body)) }}
	_, err := b.deploy(t, threeActivities, nil)
	require.NoError(t, err)

	for _, stopAt := range []string{"A", "C"} {
		b.records.stacks["app"] = stoppedAfterCreate(t, bodies, stopAt)
		if stopAt == "A" { // B and C were not made yet
			for _, name := range []string{"b", "c"} {
				_, err := b.svc.DeleteActivity(ctx, &service.DeleteActivityInput{ActivityArn: "arn:aws:states:us-east-1:123456789012:activity:" + name})
				require.NoError(t, err)
			}
		}

		// The next deploy: taken as made.
		r, err := b.deploy(t, threeActivities, nil)
		require.NoError(t, err)
		require.Contains(t, r.Changes, Change{LogicalID: stopAt, Type: "AWS::StepFunctions::Activity",
			Physical: "arn:aws:states:us-east-1:123456789012:activity:" + strings.ToLower(stopAt), Action: Created,
			Note: "made by a deploy that stopped before recording it"})
		require.Equal(t, []string{"a", "b", "c"}, b.activities(t))
		rec, err := b.d.readRecord(ctx, "app")
		require.NoError(t, err)
		require.Empty(t, rec.Creating)
		require.Len(t, rec.Resources, 3)
	}

	// Stopped again, then deleted: the intended resource goes too.
	b.records.stacks["app"] = stoppedAfterCreate(t, bodies, "C")
	r, err := b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"C deleted", "B deleted", "A deleted"}, actions(r))
	require.Empty(t, b.activities(t), "no orphan")

	// Stopped, and the template no longer names it: deleted as gone.
	_, err = b.deploy(t, threeActivities, nil)
	require.NoError(t, err)
	b.records.stacks["app"] = stoppedAfterCreate(t, bodies, "C")
	r, err = b.deploy(t, strings.Split(threeActivities, "  C:")[0], nil)
	require.NoError(t, err)
	require.Equal(t, []string{"A unchanged", "B unchanged", "C deleted"}, actions(r))
	require.Equal(t, []string{"a", "b"}, b.activities(t))
}

// An intent whose create never happened (stopped before the call): the
// next deploy creates the resource as any new one.
func TestAnIntentNeverCreatedIsCreated(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	ctx := context.Background()
	var bodies []string
	b.d.Records = &hookRecords{memRecords: b.records, put: func(body []byte) { bodies = append(bodies, string(body)) }}
	_, err := b.deploy(t, threeActivities, nil)
	require.NoError(t, err)
	b.records.stacks["app"] = stoppedAfterCreate(t, bodies, "C")
	_, err = b.svc.DeleteActivity(ctx, &service.DeleteActivityInput{ActivityArn: "arn:aws:states:us-east-1:123456789012:activity:c"})
	require.NoError(t, err)

	r, err := b.deploy(t, threeActivities, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"A unchanged", "B unchanged", "C created"}, actions(r))
	require.Empty(t, r.Changes[2].Note)
	require.Equal(t, []string{"a", "b", "c"}, b.activities(t))

	// Deleted while its intent stands: nothing there, nothing to do.
	b.records.stacks["app"] = stoppedAfterCreate(t, bodies, "C")
	_, err = b.svc.DeleteActivity(ctx, &service.DeleteActivityInput{ActivityArn: "arn:aws:states:us-east-1:123456789012:activity:c"})
	require.NoError(t, err)
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"B deleted", "A deleted"}, actions(r))
	require.Empty(t, b.activities(t))
}

// At the AWS endpoint: a hand-made queue is refused, then taken over
// with Adopt and deleted with the stack; a queue made just before the
// server stopped is the stack's, deleted with it.
func TestQueueOwnership(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	cfg := withMoto(t, b)
	ctx := context.Background()
	sq := sqs.NewFromConfig(cfg)
	queues := func() []string {
		out, err := sq.ListQueues(ctx, &sqs.ListQueuesInput{})
		require.NoError(t, err)
		return out.QueueUrls
	}
	made, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs"), Attributes: map[string]string{"VisibilityTimeout": "90"}})
	require.NoError(t, err)
	tmpl := "Resources:\n  Q: {Type: AWS::SQS::Queue, Properties: {QueueName: jobs, VisibilityTimeout: 10}}\n"
	_, err = b.deploy(t, tmpl, nil)
	require.EqualError(t, err, "resource Q (AWS::SQS::Queue): jobs already exists (HandlerErrorCode: AlreadyExists); deploy with --adopt to take it over")
	require.Empty(t, b.records.stacks)

	tp, err := cfn.Parse([]byte(tmpl))
	require.NoError(t, err)
	r, err := b.d.Deploy(ctx, tp, Options{StackName: "app", Adopt: true})
	require.NoError(t, err)
	require.Equal(t, []string{"Q adopted"}, actions(r))
	require.Equal(t, aws.ToString(made.QueueUrl), r.Changes[0].Physical)
	require.Len(t, r.Warnings, 1)
	require.Contains(t, r.Warnings[0], ": jobs at http://127.0.0.1:")
	require.Contains(t, r.Warnings[0], " is taken over as it is")
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Q deleted"}, actions(r))
	require.Empty(t, queues(), "a queue taken over is deleted with the stack")

	// Made, and the server stopped before it recorded it.
	var bodies []string
	b.d.Records = &hookRecords{memRecords: b.records, put: func(body []byte) { bodies = append(bodies, string(body)) }}
	_, err = b.deploy(t, tmpl, nil)
	require.NoError(t, err)
	b.records.stacks["app"] = stoppedAfterCreate(t, bodies, "Q")
	r, err = b.deploy(t, tmpl, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Q created"}, actions(r))
	require.Equal(t, "made by a deploy that stopped before recording it", r.Changes[0].Note)
	require.Len(t, queues(), 1)

	b.records.stacks["app"] = stoppedAfterCreate(t, bodies, "Q")
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Q deleted"}, actions(r))
	require.Empty(t, queues(), "no orphan")
}

const processOrders = "Resources:\n  F:\n    Type: AWS::Serverless::Function\n" +
	"    Properties: {FunctionName: process-orders, CodeUri: src/, Handler: app.handler, Runtime: nodejs20.x}\n"

// A local function is a named resource as any other: another stack's is
// refused, even with --adopt, and neither that stack's deploy nor its
// delete replaces or removes it.
func TestAnotherStacksFunctionIsNotTaken(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	ctx := context.Background()
	base := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(base, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "src", "app.js"), []byte("exports.handler = async (e) => e;\n"), 0o644))
	deployAs := func(stack, tmpl string, adopt bool) (*Report, error) {
		tp, err := cfn.Parse([]byte(tmpl))
		require.NoError(t, err)
		return b.d.Deploy(ctx, tp, Options{StackName: stack, BaseDir: base, Adopt: adopt})
	}
	_, err := deployAs("orders", processOrders, false)
	require.NoError(t, err)
	fn := b.fns.fns["process-orders"]
	require.NotNil(t, fn)

	other := strings.Replace(processOrders, "Handler: app.handler", "Handler: app.other", 1)
	for _, adopt := range []bool{false, true} {
		_, err = deployAs("billing", other, adopt)
		require.EqualError(t, err, "resource F (AWS::Serverless::Function): process-orders already exists (HandlerErrorCode: AlreadyExists): it is stack orders's")
		require.Same(t, fn, b.fns.fns["process-orders"], "not put over")
	}
	_, err = b.d.Delete(ctx, "billing")
	require.NoError(t, err)
	require.Same(t, fn, b.fns.fns["process-orders"], "not removed")

	// Two stacks that both recorded it (deployed before a stack owned
	// only what it made): one's delete leaves it to the other.
	b.records.stacks["billing"] = []byte(strings.Replace(string(b.records.stacks["orders"]), `"name":"orders"`, `"name":"billing"`, 1))
	r, err := b.d.Delete(ctx, "billing")
	require.NoError(t, err)
	require.Equal(t, []string{"F deleted"}, actions(r))
	require.Equal(t, []string{"F (AWS::Serverless::Function) process-orders is left as it is: stack orders's record has it too"}, r.Warnings)
	require.Same(t, fn, b.fns.fns["process-orders"])

	// One no stack has (its record lost): refused, then taken over.
	require.NoError(t, b.records.DeleteStack(ctx, "orders"))
	_, err = deployAs("billing", other, false)
	require.EqualError(t, err, "resource F (AWS::Serverless::Function): process-orders already exists (HandlerErrorCode: AlreadyExists); deploy with --adopt to take it over")
	r, err = deployAs("billing", other, true)
	require.NoError(t, err)
	require.Equal(t, []string{"F adopted"}, actions(r))
	require.Equal(t, "app.other", b.fns.fns["process-orders"].Handler)
	_, err = b.d.Delete(ctx, "billing")
	require.NoError(t, err)
	require.Empty(t, b.fns.fns)
}

const ordersActivity = "Resources:\n  O: {Type: AWS::StepFunctions::Activity, Properties: {Name: orders}}\n"

// An intent whose create never happened does not take, nor delete, what
// another stack made under its name since.
func TestAnIntentDoesNotTakeAnotherStacksResource(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	ctx := context.Background()
	var bodies []string
	b.d.Records = &hookRecords{memRecords: b.records, put: func(body []byte) { bodies = append(bodies, string(body)) }}
	_, err := b.deploy(t, ordersActivity, nil)
	require.NoError(t, err)
	// Stopped before the call: recorded the intent, made nothing.
	b.records.stacks["app"] = stoppedAfterCreate(t, bodies, "O")
	_, err = b.svc.DeleteActivity(ctx, &service.DeleteActivityInput{ActivityArn: "arn:aws:states:us-east-1:123456789012:activity:orders"})
	require.NoError(t, err)

	tp, err := cfn.Parse([]byte(ordersActivity))
	require.NoError(t, err)
	r, err := b.d.Deploy(ctx, tp, Options{StackName: "billing"})
	require.NoError(t, err)
	require.Equal(t, []string{"O created"}, actions(r))

	for _, adopt := range []bool{false, true} {
		_, err = b.d.Deploy(ctx, tp, Options{StackName: "app", Adopt: adopt})
		require.EqualError(t, err, "resource O (AWS::StepFunctions::Activity): orders already exists (HandlerErrorCode: AlreadyExists): it is stack billing's")
	}
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Empty(t, r.Changes)
	require.Equal(t, []string{"O (AWS::StepFunctions::Activity) orders is left as it is: a deploy that stopped meant to make it, but it is stack billing's"}, r.Warnings)
	require.Equal(t, []string{"orders"}, b.activities(t))
}

// An intent does not take, nor delete, a resource made before it was
// recorded: that one is not what its create made.
func TestAnIntentDoesNotTakeWhatWasThereBefore(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	ctx := context.Background()
	_, err := b.svc.CreateActivity(ctx, &service.CreateActivityInput{Name: "orders"})
	require.NoError(t, err)
	arn := "arn:aws:states:us-east-1:123456789012:activity:orders"
	intentAt := func(at time.Time) []byte {
		return []byte(`{"name":"app","resources":{},"order":[],"creating":[{"logicalId":"O","name":"orders","state":"creating","at":"` +
			at.UTC().Format(time.RFC3339Nano) + `","type":"AWS::StepFunctions::Activity","physical":"` + arn + `"}]}`)
	}

	b.records.stacks["app"] = intentAt(time.Now().Add(time.Minute))
	_, err = b.deploy(t, ordersActivity, nil)
	require.EqualError(t, err, "resource O (AWS::StepFunctions::Activity): orders already exists (HandlerErrorCode: AlreadyExists); deploy with --adopt to take it over")
	r, err := b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Empty(t, r.Changes)
	require.Len(t, r.Warnings, 1)
	require.Contains(t, r.Warnings[0], "O (AWS::StepFunctions::Activity) orders is left as it is: a deploy that stopped meant to make it, but it was made at ")
	require.Equal(t, []string{"orders"}, b.activities(t))

	// Within the clocks' margin, or with no time (an earlier version's
	// intent): the intent's.
	for _, at := range []time.Time{time.Now().Add(3 * time.Second), {}} {
		b.records.stacks["app"] = intentAt(at)
		if at.IsZero() {
			b.records.stacks["app"] = []byte(strings.Replace(string(intentAt(at)), `"at":"0001-01-01T00:00:00Z",`, "", 1))
		}
		r, err = b.deploy(t, ordersActivity, nil)
		require.NoError(t, err)
		require.Equal(t, "made by a deploy that stopped before recording it", r.Changes[0].Note)
		require.NoError(t, b.records.DeleteStack(ctx, "app"))
	}
}

// listRecords fails to list the stacks, or to read one, as told.
type listRecords struct {
	*memRecords
	list func() error
}

func (l *listRecords) ListStacks(ctx context.Context) ([]string, error) {
	if err := l.list(); err != nil {
		return nil, err
	}
	return l.memRecords.ListStacks(ctx)
}

// --adopt takes nothing when the other stacks' records cannot be read:
// one of them may have it.
func TestAdoptFailsWhenTheRecordsCannotBeRead(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	ctx := context.Background()
	b.makeByHand(t)
	var listErr error
	b.d.Records = &listRecords{memRecords: b.records, list: func() error { return listErr }}
	tmpl := "Resources:\n  Approve: {Type: AWS::StepFunctions::Activity, Properties: {Name: approve}}\n"
	tp, err := cfn.Parse([]byte(tmpl))
	require.NoError(t, err)

	listErr = errors.New("database is locked")
	_, err = b.d.Deploy(ctx, tp, Options{StackName: "app", Adopt: true})
	require.EqualError(t, err, "resource Approve (AWS::StepFunctions::Activity): approve already exists, and whose it is cannot be told: the stacks deployed here cannot be listed: database is locked")
	rec, err := b.d.readRecord(ctx, "app")
	require.NoError(t, err)
	require.Empty(t, rec.Resources)

	listErr = nil
	b.records.stacks["other"] = []byte("{")
	_, err = b.d.Deploy(ctx, tp, Options{StackName: "app", Adopt: true})
	require.ErrorContains(t, err, "resource Approve (AWS::StepFunctions::Activity): approve already exists, and whose it is cannot be told: stack other's record cannot be read: stack other: its record is damaged")
	rec, err = b.d.readRecord(ctx, "app")
	require.NoError(t, err)
	require.Empty(t, rec.Resources)
	// Without --adopt too, the deploy is refused before anything.
	_, err = b.deploy(t, tmpl, nil)
	require.ErrorContains(t, err, "approve already exists, and whose it is cannot be told: stack other's record cannot be read")
}

// At the endpoint, an intent takes nothing made before it where the
// service tells when a resource was made (SQS, DynamoDB, EventBridge,
// S3); SNS tells no time: there the name decides.
func TestIntentsAtTheEndpointAndWhenTheirResourcesWereMade(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	cfg := withMoto(t, b)
	ctx := context.Background()
	sq, ddb, eb, sn := sqs.NewFromConfig(cfg), dynamodb.NewFromConfig(cfg), eventbridge.NewFromConfig(cfg), sns.NewFromConfig(cfg)
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	_, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs")})
	require.NoError(t, err)
	_, err = ddb.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("jobs"), BillingMode: ddbtypes.BillingModePayPerRequest,
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("k"), KeyType: ddbtypes.KeyTypeHash}},
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("k"), AttributeType: ddbtypes.ScalarAttributeTypeS}}})
	require.NoError(t, err)
	_, err = eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String("jobs")})
	require.NoError(t, err)
	_, err = s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("jobs")})
	require.NoError(t, err)
	_, err = sn.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("jobs")})
	require.NoError(t, err)

	// A stack whose deploy stopped meaning to make each, a minute after
	// they were made.
	at := time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano)
	var creating []string
	for _, it := range [][2]string{{"Queue", sqsQueue}, {"Table", dynamoTable}, {"Bus", eventBus}, {"Bucket", s3Bucket}, {"Topic", snsTopic}} {
		creating = append(creating, `{"logicalId":"`+it[0]+`","name":"jobs","state":"creating","at":"`+at+`","type":"`+it[1]+`"}`)
	}
	b.records.stacks["app"] = []byte(`{"name":"app","resources":{},"order":[],"creating":[` + strings.Join(creating, ",") + `]}`)
	r, err := b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Topic deleted"}, actions(r))
	require.Len(t, r.Warnings, 4)
	for _, w := range r.Warnings {
		require.Contains(t, w, "jobs is left as it is: a deploy that stopped meant to make it, but it was made at ")
	}
	_, err = sq.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("jobs")})
	require.NoError(t, err)
	_, err = ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("jobs")})
	require.NoError(t, err)
	_, err = eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: aws.String("jobs")})
	require.NoError(t, err)
	_, err = s3c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("jobs")})
	require.NoError(t, err)
}

// A resource an earlier version found at the endpoint and used unasked
// (recorded "adopted") still outlives the stack after its logical id is
// renamed.
func TestAnAdoptedResourceKeepsItsFlagWhenItsIdMoves(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	cfg := withMoto(t, b)
	ctx := context.Background()
	sq := sqs.NewFromConfig(cfg)
	_, err := b.deploy(t, "Resources:\n  Jobs: {Type: AWS::SQS::Queue, Properties: {QueueName: jobs}}\n", nil)
	require.NoError(t, err)
	// As an earlier version recorded a queue it found there.
	b.records.stacks["app"] = []byte(strings.Replace(string(b.records.stacks["app"]), `"type":"AWS::SQS::Queue"`, `"type":"AWS::SQS::Queue","adopted":true`, 1))
	rec, err := b.d.readRecord(ctx, "app")
	require.NoError(t, err)
	require.True(t, rec.Resources["Jobs"].Adopted)

	r, err := b.deploy(t, "Resources:\n  Work: {Type: AWS::SQS::Queue, Properties: {QueueName: jobs}}\n", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Work unchanged", "Jobs retained"}, actions(r))
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Work retained"}, actions(r))
	_, err = sq.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("jobs")})
	require.NoError(t, err, "the queue found there outlives the stack")
}
