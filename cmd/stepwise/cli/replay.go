package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/spf13/cobra"

	"stepwise/asl"
	"stepwise/history"
	"stepwise/internal/boundedfile"
	"stepwise/jsonvalue"
	"stepwise/workflowtest"
)

type replayCommand struct {
	*CommandBase
	endpoint   string
	recording  string
	definition string
}

func (c *replayCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replay [EXECUTION_ARN] --endpoint URL | --recording FILE [--definition EDITED.json]",
		Short: "Replay a recorded execution on an edited definition and show where it first diverges",
		Long: `Replay an execution with its recorded input and task results on an
edited definition, in-process and in virtual time, and print the first
divergence: the state, the replay's history event and the difference
(of the state's input or output, of the state it went on to, or of the
execution's end). A Task the edit added has no recorded result: it is
named. The execution is read from a server through the Step Functions
API (EXECUTION_ARN with --endpoint), or from a file "stepwise test
--record" wrote (--recording). Without --definition the recorded
definition is replayed.

Exit status: 0 for "same path, same output", 1 at a divergence, 2 for
bad usage, an execution that cannot be read or a file that is not a
recording.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.replay(args) },
	}
	f := cmd.Flags()
	f.StringVar(&c.endpoint, "endpoint", "", "the server's URL (its Step Functions API)")
	f.StringVar(&c.recording, "recording", "", "replay this recording (a file stepwise test --record wrote) instead of an execution on a server")
	f.StringVar(&c.definition, "definition", "", "the edited definition (JSON or YAML) to replay on")
	return cmd
}

func (c *replayCommand) replay(args []string) error {
	var (
		data []byte
		name string
		err  error
	)
	switch {
	case c.recording != "" && (len(args) > 0 || c.endpoint != ""):
		return &UsageError{"give an EXECUTION_ARN with --endpoint, or --recording, not both"}
	case c.recording != "":
		name = c.recording
		if data, err = boundedfile.Read(context.Background(), c.recording, maxDataFile); err != nil {
			return &UsageError{"--recording: " + err.Error()}
		}
	case len(args) == 1 && c.endpoint != "":
		name = "recording.test.json"
		if data, _, err = recordFromServer(context.Background(), c.endpoint, args[0], 0); err != nil {
			return &UsageError{err.Error()}
		}
	default:
		return &UsageError{"give an EXECUTION_ARN with --endpoint URL, or --recording FILE"}
	}
	f, err := workflowtest.LoadData(name, data)
	if err != nil {
		return &UsageError{fmt.Sprintf("%s is not a recording:\n%v", name, err)}
	}
	edited := f.Machine
	if c.definition != "" {
		if edited, err = readDefinition(c.definition); err != nil {
			return &UsageError{err.Error()}
		}
	}
	diverged := false
	for _, tc := range f.Cases {
		res, err := workflowtest.Replay(f, tc, edited)
		if err != nil {
			return &UsageError{fmt.Sprintf("%s: %v", tc.Name, err)}
		}
		if d := res.Divergence; d != nil {
			diverged = true
			fmt.Fprintf(c.Out, "%s: first divergence at %s\n", tc.Name, d)
			if u := res.Replayed.Unmocked; u != nil && u.StateName != d.State {
				fmt.Fprintf(c.Out, "    then state %s has no recorded result: the replay stopped there\n", u.StateName)
			}
			for _, g := range res.Replayed.Got {
				fmt.Fprintf(c.Out, "    replayed %s\n", g)
			}
			for _, g := range res.Recorded.Got {
				fmt.Fprintf(c.Out, "    recorded %s\n", g)
			}
			continue
		}
		fmt.Fprintf(c.Out, "%s: same path, same output\n", tc.Name)
	}
	if diverged {
		return &ExitError{Code: 1}
	}
	return nil
}

// readDefinition reads and parses a definition file.
func readDefinition(path string) (*asl.StateMachine, error) {
	data, err := boundedfile.Read(context.Background(), path, maxDefinitionFile)
	if err != nil {
		return nil, fmt.Errorf("--definition: %w", err)
	}
	if ext := filepath.Ext(path); ext == ".yaml" || ext == ".yml" {
		v, err := workflowtest.ParseYAML(data)
		if err != nil {
			return nil, fmt.Errorf("--definition %s: %w", path, err)
		}
		data = jsonvalue.Marshal(v)
	}
	m, diags := asl.Parse(data)
	if m == nil {
		msg := fmt.Sprintf("--definition %s is not a valid definition:", path)
		for _, d := range diags {
			msg += fmt.Sprintf("\n%s %s %s: %s", d.Severity, d.Code, d.Location, d.Message)
		}
		return nil, errors.New(msg)
	}
	return m, nil
}

// recordFromServer records an execution read through the Step Functions
// API of the server at endpoint.
// run names the run of a redriven execution to record (1 for the first),
// 0 the latest; it returns the recording and a sentence naming the run
// recorded ("run 2 of 2"), empty when the execution ran once.
func recordFromServer(ctx context.Context, endpoint, arn string, run int) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	client, err := apiClient(ctx, endpoint)
	if err != nil {
		return nil, "", err
	}
	x, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return nil, "", apiError(endpoint, arn, err)
	}
	sm, err := client.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: aws.String(arn)})
	if err != nil {
		return nil, "", apiError(endpoint, arn, err)
	}
	events, err := executionHistory(ctx, client, arn)
	if err != nil {
		return nil, "", apiError(endpoint, arn, err)
	}
	src := &workflowtest.Source{StateMachineName: aws.ToString(sm.Name), Definition: aws.ToString(sm.Definition),
		ExecutionName: aws.ToString(x.Name), Events: events, Run: run}
	// The map runs of the execution and, in turn, of its children (a
	// distributed Map inside a distributed Map's processor).
	if err := recordChildren(ctx, client, endpoint, src, events); err != nil {
		return nil, "", err
	}
	for i := 0; i < len(src.Children); i++ {
		if err := recordChildren(ctx, client, endpoint, src, src.Children[i]); err != nil {
			return nil, "", err
		}
	}
	data, err := workflowtest.Record(src)
	if err != nil {
		return nil, "", fmt.Errorf("cannot record %s: %w", arn, err)
	}
	which := ""
	if n, runs := workflowtest.RecordedRun(src); runs > 1 {
		which = fmt.Sprintf("run %d of %d", n, runs)
	}
	return data, which, nil
}

// apiClient is an SDK client of the server at endpoint: the usual AWS
// credentials and region when there are some, else a placeholder key and
// the default region.
func apiClient(ctx context.Context, endpoint string) (*sfn.Client, error) {
	cfg, err := loadOwnConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		cfg.Credentials = credentials.NewStaticCredentialsProvider("stepwise", "stepwise", "")
	}
	return sfn.NewFromConfig(cfg, func(o *sfn.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.RetryMaxAttempts = 2
	}), nil
}

// apiError words an error of the API: an execution that is not there, a
// server that does not answer.
func apiError(endpoint, arn string, err error) error {
	var missing *sfntypes.ExecutionDoesNotExist
	var badArn *sfntypes.InvalidArn
	var netErr *net.OpError
	switch {
	case errors.As(err, &missing):
		return fmt.Errorf("no execution %s at %s", arn, endpoint)
	case errors.As(err, &badArn):
		return fmt.Errorf("%s is not an execution's ARN: %s", arn, aws.ToString(badArn.Message))
	case errors.As(err, &netErr):
		return fmt.Errorf("no server answers at %s: %v", endpoint, netErr.Err)
	}
	return fmt.Errorf("reading %s from %s: %w", arn, endpoint, err)
}

// executionHistory reads an execution's whole history, oldest first.
func executionHistory(ctx context.Context, client *sfn.Client, arn string) ([]*history.Event, error) {
	var events []*history.Event
	in := &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000}
	for p := sfn.NewGetExecutionHistoryPaginator(client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for i := range page.Events {
			events = append(events, historyEvent(&page.Events[i]))
		}
	}
	return events, nil
}

// historyEvent is the part of an SDK history event a recording reads.
func historyEvent(e *sfntypes.HistoryEvent) *history.Event {
	ev := &history.Event{Type: history.EventType(e.Type), ID: e.Id, PreviousEventID: e.PreviousEventId, Timestamp: aws.ToTime(e.Timestamp)}
	s := aws.ToString
	fail := func(errp, cause *string) *history.FailureEventDetails {
		return &history.FailureEventDetails{Error: errp, Cause: cause}
	}
	taskFail := func(resource, resourceType, errp, cause *string) *history.TaskEventDetails {
		return &history.TaskEventDetails{Resource: s(resource), ResourceType: s(resourceType), Error: errp, Cause: cause}
	}
	if d := e.ExecutionStartedEventDetails; d != nil {
		ev.ExecutionStartedEventDetails = &history.ExecutionStartedEventDetails{Input: s(d.Input), RoleArn: s(d.RoleArn)}
	}
	if d := e.ExecutionSucceededEventDetails; d != nil {
		ev.ExecutionSucceededEventDetails = &history.OutputEventDetails{Output: s(d.Output)}
	}
	if d := e.ExecutionFailedEventDetails; d != nil {
		ev.ExecutionFailedEventDetails = fail(d.Error, d.Cause)
	}
	if d := e.ExecutionTimedOutEventDetails; d != nil {
		ev.ExecutionTimedOutEventDetails = fail(d.Error, d.Cause)
	}
	if d := e.ExecutionAbortedEventDetails; d != nil {
		ev.ExecutionAbortedEventDetails = fail(d.Error, d.Cause)
	}
	if d := e.ExecutionRedrivenEventDetails; d != nil {
		ev.ExecutionRedrivenEventDetails = &history.ExecutionRedrivenEventDetails{RedriveCount: int(aws.ToInt32(d.RedriveCount))}
	}
	if d := e.StateEnteredEventDetails; d != nil {
		ev.StateEnteredEventDetails = &history.StateEnteredEventDetails{Name: s(d.Name), Input: s(d.Input)}
	}
	if d := e.StateExitedEventDetails; d != nil {
		ev.StateExitedEventDetails = &history.StateExitedEventDetails{Name: s(d.Name), Output: s(d.Output)}
	}
	if d := e.MapRunStartedEventDetails; d != nil {
		ev.MapRunStartedEventDetails = &history.MapRunStartedEventDetails{MapRunArn: s(d.MapRunArn)}
	}
	if d := e.TaskScheduledEventDetails; d != nil {
		ev.TaskScheduledEventDetails = &history.TaskScheduledEventDetails{Resource: s(d.Resource), ResourceType: s(d.ResourceType), Parameters: s(d.Parameters)}
	}
	if d := e.TaskSucceededEventDetails; d != nil {
		ev.TaskSucceededEventDetails = &history.TaskEventDetails{Resource: s(d.Resource), ResourceType: s(d.ResourceType), Output: d.Output}
	}
	if d := e.TaskFailedEventDetails; d != nil {
		ev.TaskFailedEventDetails = taskFail(d.Resource, d.ResourceType, d.Error, d.Cause)
	}
	// A task that failed to start or to be submitted (and a Lambda
	// function or an activity that could not be scheduled or started,
	// AWS's other failures before a task runs) is recorded as failed
	// with its error: the events keep their own types.
	if d := e.TaskStartFailedEventDetails; d != nil {
		ev.TaskFailedEventDetails = taskFail(d.Resource, d.ResourceType, d.Error, d.Cause)
	}
	if d := e.TaskSubmitFailedEventDetails; d != nil {
		ev.TaskFailedEventDetails = taskFail(d.Resource, d.ResourceType, d.Error, d.Cause)
	}
	if d := e.LambdaFunctionStartFailedEventDetails; d != nil {
		ev.LambdaFunctionFailedEventDetails = fail(d.Error, d.Cause)
	}
	if d := e.LambdaFunctionScheduleFailedEventDetails; d != nil {
		ev.LambdaFunctionFailedEventDetails = fail(d.Error, d.Cause)
	}
	if d := e.ActivityScheduleFailedEventDetails; d != nil {
		ev.ActivityFailedEventDetails = fail(d.Error, d.Cause)
	}
	if d := e.TaskTimedOutEventDetails; d != nil {
		ev.TaskTimedOutEventDetails = taskFail(d.Resource, d.ResourceType, d.Error, d.Cause)
	}
	if d := e.LambdaFunctionScheduledEventDetails; d != nil {
		ev.LambdaFunctionScheduledEventDetails = &history.LambdaFunctionScheduledEventDetails{Resource: s(d.Resource), Input: s(d.Input)}
	}
	if d := e.LambdaFunctionSucceededEventDetails; d != nil {
		ev.LambdaFunctionSucceededEventDetails = &history.OutputEventDetails{Output: s(d.Output)}
	}
	if d := e.LambdaFunctionFailedEventDetails; d != nil {
		ev.LambdaFunctionFailedEventDetails = fail(d.Error, d.Cause)
	}
	if d := e.LambdaFunctionTimedOutEventDetails; d != nil {
		ev.LambdaFunctionTimedOutEventDetails = fail(d.Error, d.Cause)
	}
	if d := e.ActivityScheduledEventDetails; d != nil {
		ev.ActivityScheduledEventDetails = &history.ActivityScheduledEventDetails{Resource: s(d.Resource), Input: s(d.Input)}
	}
	if d := e.ActivitySucceededEventDetails; d != nil {
		ev.ActivitySucceededEventDetails = &history.OutputEventDetails{Output: s(d.Output)}
	}
	if d := e.ActivityFailedEventDetails; d != nil {
		ev.ActivityFailedEventDetails = fail(d.Error, d.Cause)
	}
	if d := e.ActivityTimedOutEventDetails; d != nil {
		ev.ActivityTimedOutEventDetails = fail(d.Error, d.Cause)
	}
	return ev
}

// recordChildren adds to src the histories of the child executions of
// the map runs that events started.
func recordChildren(ctx context.Context, client *sfn.Client, endpoint string, src *workflowtest.Source, events []*history.Event) error {
	for _, ev := range events {
		if ev.MapRunStartedEventDetails == nil {
			continue
		}
		in := &sfn.ListExecutionsInput{MapRunArn: aws.String(ev.MapRunStartedEventDetails.MapRunArn), MaxResults: 1000}
		for p := sfn.NewListExecutionsPaginator(client, in); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return apiError(endpoint, ev.MapRunStartedEventDetails.MapRunArn, err)
			}
			for _, child := range page.Executions {
				h, err := executionHistory(ctx, client, aws.ToString(child.ExecutionArn))
				if err != nil {
					return apiError(endpoint, aws.ToString(child.ExecutionArn), err)
				}
				src.Children = append(src.Children, h)
			}
		}
	}
	return nil
}

// loadOwnConfig is the AWS SDK's configuration for a client of a Stepwise
// server (its API, deploy, the clock): the environment's and the shared
// files' credentials and region. Never an instance's metadata service:
// a server's keys are in its credentials file, not an instance role.
func loadOwnConfig(ctx context.Context) (aws.Config, error) {
	return awsconfig.LoadDefaultConfig(ctx, awsconfig.WithEC2IMDSClientEnableState(imds.ClientDisabled))
}
