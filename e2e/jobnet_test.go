package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

// The job net of examples/jobnet, run as its README says, in three forms:
// against stand-ins of the AWS services (moto, and the Lambda stand-in
// running job.py), with the job as a local function instead of Lambda,
// and mocked through a MockConfigFile with no service at all.

const night = "2026-11-24"

var jobs = []string{"extract", "load", "reconcile"}

// jobNetWorld is the services of a job net run.
type jobNetWorld struct {
	moto  string
	flags string // the directory of the jobs' flag files
	input string // the execution's input
}

// setupJobNet creates on moto the job table with the night's jobs, the
// operator's SSM parameter, the event bus whose rule sends the jobs'
// events to an SQS queue, and starts the operator: a worker reading the
// queue and answering each event's task token.
func setupJobNet(t *testing.T, moto string, c *sfn.Client, reportArn string) *jobNetWorld {
	t.Helper()
	ctx := context.Background()
	cfg := awsConfig(t)
	ddb := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(moto) })
	_, err := ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("jobnet"),
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
		BillingMode:          ddbtypes.BillingModePayPerRequest,
	})
	require.NoError(t, err)
	_, err = ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("jobnet"), Item: map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: night}, "jobs": &ddbtypes.AttributeValueMemberSS{Value: jobs},
	}})
	require.NoError(t, err)
	params := ssm.NewFromConfig(cfg, func(o *ssm.Options) { o.BaseEndpoint = aws.String(moto) })
	_, err = params.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String("/jobnet/operator"), Value: aws.String("ada"), Type: "String"})
	require.NoError(t, err)

	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobnet-operator")})
	require.NoError(t, err)
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: queue.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
	require.NoError(t, err)
	eb := eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(moto) })
	_, err = eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String("jobnet")})
	require.NoError(t, err)
	_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("jobs-done"), EventBusName: aws.String("jobnet"),
		EventPattern: aws.String(`{"source": ["jobnet"]}`)})
	require.NoError(t, err)
	_, err = eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("jobs-done"), EventBusName: aws.String("jobnet"),
		Targets: []ebtypes.Target{{Id: aws.String("operator"), Arn: aws.String(attrs.Attributes["QueueArn"])}}})
	require.NoError(t, err)

	// The operator: answers every announced job with its name.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, WaitTimeSeconds: 1, MaxNumberOfMessages: 10})
			if err != nil {
				continue
			}
			for _, m := range got.Messages {
				var event struct {
					Detail struct {
						Job, Operator, TaskToken string
					} `json:"detail"`
				}
				if json.Unmarshal([]byte(aws.ToString(m.Body)), &event) == nil && event.Detail.TaskToken != "" {
					out, _ := json.Marshal(map[string]string{"ackBy": event.Detail.Operator, "job": event.Detail.Job})
					_, _ = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(event.Detail.TaskToken), Output: aws.String(string(out))})
				}
				_, _ = q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: queue.QueueUrl, ReceiptHandle: m.ReceiptHandle})
			}
		}
	}()
	t.Cleanup(func() { close(stop); wg.Wait() })

	w := &jobNetWorld{moto: moto, flags: t.TempDir()}
	in, _ := json.Marshal(map[string]string{"night": night, "table": "jobnet", "bus": "jobnet", "flags": w.flags, "reportMachine": reportArn})
	w.input = string(in)
	return w
}

// createJobNet creates the job net's two state machines from examples/.
func createJobNet(t *testing.T, c *sfn.Client) (netArn, reportArn string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "examples", "jobnet", name))
		require.NoError(t, err)
		return string(b)
	}
	return createMachine(t, c, "jobnet", read("jobnet.asl.json")), createMachine(t, c, "jobnet-report", read("report.asl.json"))
}

// runJobNetNight runs the night: with one job broken it fails; once the job is
// mended, a redrive finishes it. The job table says what ran.
func runJobNetNight(t *testing.T, c *sfn.Client, w *jobNetWorld, netArn string) {
	t.Helper()
	ctx := context.Background()
	broken := filepath.Join(w.flags, "load.broken")
	require.NoError(t, os.WriteFile(broken, nil, 0o600))
	exec := startExecution(t, c, netArn, night, w.input)
	failed := waitDone(t, c, exec)
	require.Equal(t, "FAILED", string(failed.Status), "%s", aws.ToString(failed.Cause))
	require.Equal(t, "JobFailed", aws.ToString(failed.Error))
	require.Contains(t, aws.ToString(failed.Cause), "load is broken")

	require.NoError(t, os.Remove(broken))
	_, err := c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String(exec)})
	require.NoError(t, err)
	done := waitDone(t, c, exec)
	require.Equal(t, "SUCCEEDED", string(done.Status), "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
	var report struct {
		Night string
		Jobs  int
		Rows  []int
	}
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(done.Output)), &report))
	require.Equal(t, night, report.Night)
	require.Equal(t, len(jobs), report.Jobs)
	require.Len(t, report.Rows, len(jobs))

	ddb := dynamodb.NewFromConfig(awsConfig(t), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(w.moto) })
	for _, job := range jobs {
		item, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("jobnet"),
			Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: night + "#" + job}}})
		require.NoError(t, err)
		status, _ := item.Item["status"].(*ddbtypes.AttributeValueMemberS)
		require.NotNil(t, status, "job %s has a status", job)
		require.Equal(t, "SUCCEEDED", status.Value, "job %s", job)
	}
}

func TestJobNetOnAWSStandIns(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	lambdaURL := integrationtest.LambdaStandIn(t)
	source, err := os.ReadFile(filepath.Join("..", "examples", "jobnet", "job.py"))
	require.NoError(t, err)
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	f, err := zw.Create("job.py")
	require.NoError(t, err)
	_, err = f.Write(source)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	fns := lambda.NewFromConfig(awsConfig(t), func(o *lambda.Options) { o.BaseEndpoint = aws.String(lambdaURL) })
	_, err = fns.CreateFunction(context.Background(), &lambda.CreateFunctionInput{FunctionName: aws.String("jobnet-job"),
		Runtime: lambdatypes.RuntimePython312, Handler: aws.String("job.handler"), Role: aws.String(roleArn),
		Code: &lambdatypes.FunctionCode{ZipFile: zipped.Bytes()}})
	// The SDK retries a call whose answer was slow to come: the function
	// the first attempt created is then already there.
	var exists *lambdatypes.ResourceConflictException
	if !errors.As(err, &exists) {
		require.NoError(t, err)
	}

	s := startServer(t, filepath.Join(t.TempDir(), "jobnet.db"), "--aws-endpoint", moto, "--endpoint", "lambda="+lambdaURL)
	c := s.client(t)
	netArn, reportArn := createJobNet(t, c)
	runJobNetNight(t, c, setupJobNet(t, moto, c, reportArn), netArn)
}

func TestJobNetWithLocalFunctions(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	job, err := filepath.Abs(filepath.Join("..", "examples", "jobnet", "job.py"))
	require.NoError(t, err)
	s := startServer(t, filepath.Join(t.TempDir(), "jobnet.db"), "--aws-endpoint", moto, "--function", "jobnet-job=python3 "+job)
	c := s.client(t)
	netArn, reportArn := createJobNet(t, c)
	runJobNetNight(t, c, setupJobNet(t, moto, c, reportArn), netArn)
}

func TestJobNetMocked(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "jobnet.db"), "--mock-config", filepath.Join("..", "examples", "jobnet", "mocks.json"))
	c := s.client(t)
	netArn, _ := createJobNet(t, c)
	input := `{"night": "` + night + `", "table": "jobnet", "bus": "jobnet", "flags": "", "reportMachine": "unused"}`

	done := waitDone(t, c, startExecution(t, c, netArn+"#HappyPath", "happy", input))
	require.Equal(t, "SUCCEEDED", string(done.Status), "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
	require.JSONEq(t, `{"night": "2026-11-24", "jobs": 3}`, aws.ToString(done.Output))

	failed := waitDone(t, c, startExecution(t, c, netArn+"#JobFails", "fails", input))
	require.Equal(t, "FAILED", string(failed.Status))
	require.Equal(t, "JobFailed", aws.ToString(failed.Error))
}
