package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/testwait"
)

// stepwiseCLI runs the stepwise binary and returns its output and exit
// status.
func stepwiseCLI(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "stepwise %v: %s", args, out)
		return string(out), exit.ExitCode()
	}
	return string(out), 0
}

// copyTree copies the folder src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	}))
}

// runOrder runs the order flow on an input and returns the execution.
func runOrder(t *testing.T, c *sfn.Client, flowArn, input string) *sfn.DescribeExecutionOutput {
	t.Helper()
	started, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: aws.String(flowArn), Input: aws.String(input)})
	require.NoError(t, err)
	return waitDone(t, c, aws.ToString(started.ExecutionArn))
}

// TestDeploySAMApp deploys a SAM app (Python and Node functions run
// locally, a DynamoDB table on moto, a state machine from a file with
// DefinitionSubstitutions, a ScheduleV2 event) with `stepwise deploy`,
// runs it, deploys it again unchanged and changed, survives a restart,
// and deletes it.
func TestDeploySAMApp(t *testing.T) {
	for _, tool := range []string{"python3", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on this machine", tool)
		}
	}
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	app := filepath.Join(t.TempDir(), "samapp")
	copyTree(t, filepath.Join("testdata", "samapp"), app)
	db := filepath.Join(t.TempDir(), "stepwise.db")
	s := startServer(t, db, "--aws-endpoint", moto)
	c := s.client(t)
	template := filepath.Join(app, "template.yaml")
	deployArgs := []string{"deploy", template, "--endpoint", s.url(), "--parameter-overrides", "Stage=dev"}

	// A parameter without a value is refused, naming it.
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "Parameters: [Stage] must have values")

	out, code = stepwiseCLI(t, deployArgs...)
	require.Equal(t, 0, code, out)
	for _, want := range []string{"stack samapp", "created   Orders (AWS::DynamoDB::Table) orders-dev", "created   CheckFunction (AWS::Serverless::Function)",
		"created   OrderFlow (AWS::Serverless::StateMachine)", "OrderFlowArn = arn:aws:states:us-east-1:123456789012:stateMachine:order-flow-dev"} {
		require.Contains(t, out, want)
	}
	flowArn := "arn:aws:states:us-east-1:123456789012:stateMachine:order-flow-dev"

	// The nightly event is a schedule on the state machine.
	sched := s.schedulerClient(t)
	list, err := sched.ListSchedules(ctx, &scheduler.ListSchedulesInput{})
	require.NoError(t, err)
	require.Len(t, list.Schedules, 1)
	got, err := sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: list.Schedules[0].Name, GroupName: list.Schedules[0].GroupName})
	require.NoError(t, err)
	require.Equal(t, "cron(0 2 * * ? *)", aws.ToString(got.ScheduleExpression))
	require.Equal(t, "Asia/Tokyo", aws.ToString(got.ScheduleExpressionTimezone))
	require.Equal(t, flowArn, aws.ToString(got.Target.Arn))

	// An order goes through both functions and into the table on moto;
	// the slow function times out and is caught by name.
	done := runOrder(t, c, flowArn, `{"id": "o-1", "amount": 12}`)
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	var result struct {
		Order  map[string]any `json:"order"`
		Notify struct {
			Notice map[string]any `json:"notice"`
		} `json:"notify"`
		Slow struct{ Error string } `json:"slow"`
	}
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(done.Output)), &result))
	require.Equal(t, map[string]any{"id": "o-1", "amount": 12.0, "stage": "dev", "table": "orders-dev",
		"checkedBy": "samapp-CheckFunction", "memory": "256", "version": "v1"}, result.Order)
	require.Equal(t, map[string]any{"notified": "o-1", "by": "samapp-NotifyFunction", "node": true}, result.Notify.Notice)
	require.Equal(t, "Sandbox.Timedout", result.Slow.Error)
	ddb := dynamodb.NewFromConfig(awsConfig(t), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(moto) })
	item, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("orders-dev"),
		Key: map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: "o-1"}}})
	require.NoError(t, err)
	require.Equal(t, &ddbtypes.AttributeValueMemberS{Value: "dev"}, item.Item["stage"])

	// The handler's own exception is caught by its name.
	done = runOrder(t, c, flowArn, `{"id": "o-2", "amount": 1000}`)
	require.Equal(t, "FAILED", string(done.Status))
	require.Equal(t, "Rejected", aws.ToString(done.Error))
	require.Contains(t, aws.ToString(done.Cause), "OrderRejected")
	require.Contains(t, aws.ToString(done.Cause), "amount 1000 is over the limit")

	// The same template again changes nothing: no new revision.
	before, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(flowArn)})
	require.NoError(t, err)
	out, code = stepwiseCLI(t, deployArgs...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "no changes")
	after, err := c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(flowArn)})
	require.NoError(t, err)
	require.Equal(t, aws.ToString(before.RevisionId), aws.ToString(after.RevisionId))

	// An edited handler runs at the next invoke, without a deploy.
	check := filepath.Join(app, "orders", "check.py")
	code0, err := os.ReadFile(check)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(check, []byte(strings.Replace(string(code0), `"version": "v1"`, `"version": "v2"`, 1)), 0o644))
	// (Code is looked at at most once a second.)
	testwait.Until(t, func() bool {
		done = runOrder(t, c, flowArn, `{"id": "o-3", "amount": 3}`)
		require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
		return strings.Contains(aws.ToString(done.Output), `"version":"v2"`)
	}, 15*time.Second, 100*time.Millisecond)

	// A changed definition: the state machine is updated (a new
	// revision), the rest is unchanged.
	def := filepath.Join(app, "statemachine", "order-flow.asl.json")
	text, err := os.ReadFile(def)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(def, []byte(strings.Replace(string(text), `"Done": {"Type": "Succeed"}`,
		`"Done": {"Type": "Pass", "Result": "shipped", "ResultPath": "$.state", "End": true}`, 1)), 0o644))
	out, code = stepwiseCLI(t, deployArgs...)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "updated   OrderFlow")
	require.Contains(t, out, "unchanged NotifyFunction")
	require.Contains(t, out, "updated   CheckFunction") // its code changed above

	// A restart keeps the stack: its functions are back.
	s.stop(t)
	s = startServer(t, db, "--aws-endpoint", moto)
	c = s.client(t)
	done = runOrder(t, c, flowArn, `{"id": "o-4", "amount": 4}`)
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	require.Contains(t, aws.ToString(done.Output), `"state":"shipped"`)

	// Deleted: the state machine, its schedule, the functions, the
	// table.
	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--delete")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "deleted   OrderFlow")
	_, err = c.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(flowArn)})
	require.ErrorContains(t, err, "StateMachineDoesNotExist")
	list, err = s.schedulerClient(t).ListSchedules(ctx, &scheduler.ListSchedulesInput{})
	require.NoError(t, err)
	require.Empty(t, list.Schedules)
	_, err = ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("orders-dev")})
	require.ErrorContains(t, err, "ResourceNotFoundException")
}

// TestDeployRefusesBadTemplates: each bad template is refused with the
// resource's logical id in the message, and nothing is made.
func TestDeployRefusesBadTemplates(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"))
	dir := t.TempDir()
	cases := map[string]struct{ template, want string }{
		"unknown intrinsic": {"Resources:\n  Flow:\n    Type: AWS::StepFunctions::Activity\n    Properties:\n      Name: {\"Fn::Nope\": x}\n", "resource Flow"},
		"cycle":             {"Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: !Ref B}}\n  B: {Type: AWS::StepFunctions::Activity, Properties: {Name: !Ref A}}\n", "A"},
		"unknown resource":  {"Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: !GetAtt Missing.Arn}}\n", "resource A"},
		"bad definition":    {"Resources:\n  Flow:\n    Type: AWS::StepFunctions::StateMachine\n    Properties:\n      Definition: {StartAt: X, States: {}}\n", "resource Flow (AWS::StepFunctions::StateMachine)"},
		"missing file":      {"Transform: AWS::Serverless-2016-10-31\nResources:\n  Flow:\n    Type: AWS::Serverless::StateMachine\n    Properties:\n      DefinitionUri: nowhere.json\n", "resource Flow"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.template), 0o644))
			out, code := stepwiseCLI(t, "deploy", path, "--endpoint", s.url())
			require.Equal(t, 1, code, out)
			require.Contains(t, out, tc.want)
		})
	}
	list, err := s.client(t).ListStateMachines(context.Background(), &sfn.ListStateMachinesInput{})
	require.NoError(t, err)
	require.Empty(t, list.StateMachines)
}

// With --credentials, a deploy is taken only signed with a key of the
// server's: `stepwise deploy` signs with the environment's AWS keys.
func TestDeploySigned(t *testing.T) {
	s := startAuthServer(t)
	template := filepath.Join(t.TempDir(), "app.yaml")
	require.NoError(t, os.WriteFile(template, []byte("Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: signed}}\n"), 0o644))
	deploy := func(env ...string) (string, int) {
		cmd := exec.Command(binary, "deploy", template, "--endpoint", s.url())
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_PROFILE=", "AWS_REGION=us-east-1")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "%s", out)
			return string(out), exit.ExitCode()
		}
		return string(out), 0
	}
	out, code := deploy()
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "deploy: ")
	out, code = deploy("AWS_ACCESS_KEY_ID="+authKeyID, "AWS_SECRET_ACCESS_KEY=not-the-secret")
	require.Equal(t, 1, code, out)
	out, code = deploy("AWS_ACCESS_KEY_ID="+authKeyID, "AWS_SECRET_ACCESS_KEY="+authSecret)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "created   A (AWS::StepFunctions::Activity)")
}
