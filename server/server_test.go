package server_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"stepwise/config"
	"stepwise/deploy"
	"stepwise/engine/task"
	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/slowtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
	"stepwise/server"
	"stepwise/server/servertest"
	"stepwise/service"
)

const (
	roleArn = "arn:aws:iam::123456789012:role/r"
	passDef = `{"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": {"done": true}, "End": true}}}`
)

// run creates a state machine name of def on s and runs one execution of
// it to its end, through the AWS SDK for Go.
func run(t *testing.T, s *servertest.Server, name, def string) *sfn.DescribeExecutionOutput {
	t.Helper()
	ctx := context.Background()
	sm, err := s.SFN.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), RoleArn: aws.String(roleArn), Definition: aws.String(def)})
	require.NoError(t, err)
	x, err := s.SFN.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{}`)})
	require.NoError(t, err)
	var d *sfn.DescribeExecutionOutput
	testwait.Until(t, func() bool {
		d, err = s.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		require.NoError(t, err)
		return d.Status != types.ExecutionStatusRunning
	}, 30*time.Second, 10*time.Millisecond, "the execution ends")
	return d
}

// The PostgreSQL cluster of the tests that ask for one is stopped once
// they ran.
func TestMain(m *testing.M) { pgtest.Main(m) }

// A server built from a configuration serves the Step Functions API: an
// AWS SDK client creates a state machine and runs it to SUCCEEDED.
func TestServesTheAPI(t *testing.T) {
	t.Parallel()
	s := servertest.New(t)
	d := run(t, s, "hello", passDef)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status)
	require.JSONEq(t, `{"done": true}`, aws.ToString(d.Output))
	// The parts in process see the same data.
	sms, err := s.Service().ListStateMachines(context.Background(), &service.ListStateMachinesInput{})
	require.NoError(t, err)
	require.Len(t, sms.StateMachines, 1)
}

// A server on PostgreSQL serves the same API as one on SQLite.
func TestServesTheAPIOnPostgres(t *testing.T) {
	t.Parallel()
	slowtest.Require(t, "it runs a PostgreSQL cluster")
	s := servertest.New(t, servertest.WithPostgres())
	require.True(t, strings.HasPrefix(s.Where(), "postgres"), s.Where())
	d := run(t, s, "hello", passDef)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status)
	require.JSONEq(t, `{"done": true}`, aws.ToString(d.Output))
}

// Two servers on two stores share nothing: a state machine of one is
// unknown to the other, and closing one leaves the other serving.
func TestTwoServersAreIndependent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := servertest.New(t), servertest.New(t)
	require.NotEqual(t, a.URL, b.URL)
	require.NotEqual(t, a.Where(), b.Where())
	run(t, a, "only-a", passDef)
	_, err := b.SFN.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{
		StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:only-a")})
	var missing *types.StateMachineDoesNotExist
	require.ErrorAs(t, err, &missing)

	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "Close is safe to call again")
	d := run(t, b, "only-b", passDef)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status)
}

// Close stops every goroutine the server started: the engine's loops, the
// schedules, the deletion of old executions, the HTTP server. (Not
// parallel: the goroutines are counted over the whole process.)
func TestCloseLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	cfg := config.DefaultServe()
	cfg.Addr = "127.0.0.1:0"
	cfg.DB = filepath.Join(t.TempDir(), "stepwise.db")
	s, err := server.New(cfg)
	require.NoError(t, err)
	require.NoError(t, s.Start(context.Background()))
	require.NoError(t, s.Listen())
	<-s.Engine().Resumed()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	cancel()
	require.NoError(t, <-served)
	require.NoError(t, s.Close())
	goleak.VerifyNone(t, before)
}

// New refuses a configuration that does not validate, and an option's
// bad value, as a ConfigError naming the setting.
func TestNewRefusesBadSettings(t *testing.T) {
	t.Parallel()
	cfg := config.DefaultServe()
	cfg.DB = filepath.Join(t.TempDir(), "stepwise.db")
	cfg.Region = "moon"
	_, err := server.New(cfg)
	var cfgErr *server.ConfigError
	require.ErrorAs(t, err, &cfgErr)
	require.EqualError(t, err, `region "moon": not a region name such as us-east-1`)

	cfg = config.DefaultServe()
	cfg.DB = filepath.Join(t.TempDir(), "stepwise.db")
	_, err = server.New(cfg, server.WithEvents(server.Events{Webhooks: []string{"ftp://x"}}))
	require.ErrorAs(t, err, &cfgErr)
	require.EqualError(t, err, `events-webhook "ftp://x": not an http or https URL`)
	_, err = server.New(cfg, server.WithLogger(nil))
	require.EqualError(t, err, "server: WithLogger: the logger is nil")
}

// WithDeployAtStart deploys with the server's deployer before the server
// listens, and its error stops the start.
func TestDeployAtStart(t *testing.T) {
	t.Parallel()
	s := servertest.New(t, servertest.WithOptions(server.WithDeployAtStart(func(ctx context.Context, d *deploy.Deployer) error {
		_, err := d.Service.CreateActivity(ctx, &service.CreateActivityInput{Name: "made-at-start"})
		return err
	})))
	out, err := s.SFN.ListActivities(context.Background(), &sfn.ListActivitiesInput{})
	require.NoError(t, err)
	require.Len(t, out.Activities, 1)
	require.Equal(t, "made-at-start", aws.ToString(out.Activities[0].Name))

	cfg := config.DefaultServe()
	cfg.Addr = "127.0.0.1:0"
	cfg.DB = filepath.Join(t.TempDir(), "stepwise.db")
	broken := errors.New("no template")
	srv, err := server.New(cfg, server.WithDeployAtStart(func(context.Context, *deploy.Deployer) error { return broken }))
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	require.ErrorIs(t, srv.Start(context.Background()), broken)
	require.Empty(t, srv.URL(), "a failed start does not listen")
}

// answer answers every task with its state's name.
type answer struct{}

func (answer) Run(_ context.Context, t *task.Task, done func(task.Result)) {
	out := jsonvalue.NewObject(1)
	out.Set("by", t.Request.StateName)
	go done(task.Result{Output: out})
}

func (answer) Cancel(string, string) {}

// WithTasks runs the tasks with the runner given, which need not be an
// integration registry.
func TestWithTasks(t *testing.T) {
	t.Parallel()
	s := servertest.New(t, servertest.WithOptions(server.WithTasks(answer{})))
	d := run(t, s, "answered", `{"StartAt": "Work", "States": {"Work": {"Type": "Task",
		"Resource": "arn:aws:lambda:us-east-1:123456789012:function:nowhere", "End": true}}}`)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status)
	require.JSONEq(t, `{"by": "Work"}`, aws.ToString(d.Output))
}
