package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/config"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/integration"
	"stepwise/integration/lambda"
	"stepwise/integration/mock"
	"stepwise/integration/standard"
	"stepwise/internal/boundedfile"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/workflowtest"
)

// Defaults of in-process runs.
const (
	DefaultRegion  = workflowtest.Region
	DefaultAccount = workflowtest.Account
	DefaultRoleArn = workflowtest.RoleArn
)

type runCommand struct {
	*CommandBase
	// closers stop what the run started (local functions' processes).
	closers   []func()
	input     string
	inputFile string
	scale     float64
	scaleSet  bool // --wait-time-scale was given
	realTime  bool
	history   bool
	// record, when set, is a file the run is written to as a test
	// (stepwise test's format), as `stepwise test --record` writes one.
	record   string
	mockFile string
	name     string
	maxSteps int

	mockConfig   string
	testCase     string
	stateMachine string
	functions    []string
	awsEndpoint  string
	endpoints    map[string]string

	payloadLimit int
	cost         bool
	price        float64

	// callsOut says some Tasks may call out of the process (--function,
	// --aws-endpoint, --endpoint), taking real time.
	callsOut bool
	// sleep waits for real time and now reads the real clock; nil are
	// time.Sleep and time.Now (tests fake them).
	sleep func(time.Duration)
	now   func() time.Time
}

func (c *runCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a state machine definition in-process and print its result as JSON",
		Long: `Run a state machine definition in-process and print one JSON object:
{"status": ..., "output": ..., "error": ..., "cause": ...} (with --history,
also "events", shaped like GetExecutionHistory's events; with --cost, also
"billing": the billable state transitions of the run as a STANDARD
execution, and their price on AWS at --transition-price).

Exit status: 0 when the execution SUCCEEDED, 1 when it ended otherwise,
2 for bad usage or an invalid definition (diagnostics on stderr).

The run is in virtual time, as "stepwise test" runs cases: timers (Wait
states, retry back-offs, timeouts) fire in the order of their deadlines
and the clock jumps to each, so a Wait of a day ends at once and the
history's timestamps still show the day between. --real-time waits for
each timer for real instead (--wait-time-scale F waits F times its time).
Calls that leave the process (a --function, a service at --aws-endpoint)
are made for real in either mode, and the history shows the real time
they took.

Task states are answered from --mock, a JSON object mapping state names to
{"Return": <output>} or {"Throw": {"Error": "...", "Cause": "..."}}, or to an
array of those used one per invocation of the state (the last again after
them); or from --mock-config, a mock configuration in Step Functions Local's
MockConfigFile format, with --test-case naming the test case (of the state
machine named by --state-machine, by default the file's name without its
extensions). Both number a state's invocations in the execution from 0, as
Step Functions Local does: retries, loops back to the state, Map iterations
and Parallel branches each take the next number. A
Lambda Task whose function --function runs locally calls it. With
--aws-endpoint (or --endpoint for one service), every other Task calls
its service there as the server would (an ItemReader's reads and a
ResultWriter's writes to S3 too); without, any other Task fails with
States.TaskFailed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c.scaleSet = cmd.Flags().Changed("wait-time-scale")
			return c.run(args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.input, "input", "", "execution input as JSON text (default {})")
	f.StringVar(&c.inputFile, "input-file", "", "read the execution input from this file")
	f.BoolVar(&c.realTime, "real-time", false, "wait for real for each Wait state, retry back-off and timeout (default: virtual time, they pass at once)")
	f.Float64Var(&c.scale, "wait-time-scale", 0, "scale of real time spent in Wait states and retry back-offs: 1 is --real-time, 0 (the default) virtual time, where the history's timestamps still advance")
	f.BoolVar(&c.history, "history", false, "include the execution history")
	f.StringVar(&c.record, "record", "", "write the run to FILE as a test (the definition, the input, every task's result as mocks, the status, output and path), as stepwise test --record does for a server's execution")
	f.StringVar(&c.mockFile, "mock", "", "JSON file of mocked Task results by state name")
	f.StringVar(&c.mockConfig, "mock-config", "", "mock configuration in Step Functions Local's MockConfigFile format")
	f.StringVar(&c.testCase, "test-case", "", "test case of --mock-config to run")
	f.StringVar(&c.stateMachine, "state-machine", "", "state machine name the test case is under in --mock-config (default: the file's name)")
	f.StringArrayVar(&c.functions, "function", nil, "run Lambda function NAME locally: NAME=COMMAND, or a handler run warm by python3 or node, NAME=python:DIR:module.function[@TIMEOUT] or NAME=node:DIR:file.function[@TIMEOUT], DIR relative to the working directory, TIMEOUT e.g. 900s (default 15m) (repeatable)")
	f.StringVar(&c.awsEndpoint, "aws-endpoint", "", "URL the AWS service calls of the Task states no mock answers go to (e.g. a local emulator)")
	f.StringToStringVar(&c.endpoints, "endpoint", nil, "URL the calls to one service go to, as service=URL (repeatable)")
	f.StringVar(&c.name, "name", "", "execution name (default: a generated one)")
	f.IntVar(&c.payloadLimit, "payload-limit", dataflow.DefaultPayloadLimit, "largest input and state output in bytes; a larger state output fails with States.DataLimitExceeded")
	f.IntVar(&c.maxSteps, "max-steps", 1_000_000, "stop after this many outside events (a guard against endless loops)")
	f.BoolVar(&c.cost, "cost", false, `add "billing": the execution's billable state transitions and what they would cost on AWS`)
	f.Float64Var(&c.price, "transition-price", history.DefaultPrices.Transition, "US dollars a state transition costs on AWS (STANDARD), for --cost")
	return cmd
}

type runResult struct {
	Status  history.ExecutionStatus `json:"status"`
	Output  json.RawMessage         `json:"output"`
	Error   *string                 `json:"error"`
	Cause   *string                 `json:"cause"`
	Events  []*history.Event        `json:"events,omitempty"`
	Billing *runBilling             `json:"billing,omitempty"`
}

// runBilling is what a run would cost on AWS as a STANDARD execution.
type runBilling struct {
	StateTransitions   int     `json:"stateTransitions"`
	TransitionPriceUSD float64 `json:"transitionPriceUSD"`
	EstimatedCostUSD   float64 `json:"estimatedCostUSD"`
}

var nameCleaner = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func (c *runCommand) run(file string) error {
	if c.input != "" && c.inputFile != "" {
		return &UsageError{"use --input or --input-file, not both"}
	}
	if c.payloadLimit <= 0 {
		return &UsageError{"--payload-limit must be positive"}
	}
	if c.scale < 0 {
		return &UsageError{"--wait-time-scale must not be negative"}
	}
	if c.realTime {
		if c.scaleSet {
			return &UsageError{"use --real-time or --wait-time-scale, not both"}
		}
		c.scale = 1
	}
	def, err := boundedfile.Read(context.Background(), file, maxDefinitionFile)
	if err != nil {
		return &UsageError{err.Error()}
	}
	m, diags := asl.Parse(def)
	if m == nil {
		for _, d := range diags {
			fmt.Fprintf(c.Err, "%s: %s %s %s: %s\n", file, d.Severity, d.Code, locationOrRoot(d.Location), d.Message)
		}
		return &ExitError{Code: 2}
	}
	inText := []byte("{}")
	switch {
	case c.input != "":
		inText = []byte(c.input)
	case c.inputFile != "":
		if inText, err = boundedfile.Read(context.Background(), c.inputFile, int64(c.payloadLimit)); err != nil {
			var tl *boundedfile.TooLargeError
			if errors.As(err, &tl) {
				return &UsageError{fmt.Sprintf("--input-file %s is more than the payload limit of %d bytes", c.inputFile, c.payloadLimit)}
			}
			return &UsageError{err.Error()}
		}
	}
	if len(inText) > c.payloadLimit {
		return &UsageError{fmt.Sprintf("the input is %d bytes, more than the payload limit of %d bytes", len(inText), c.payloadLimit)}
	}
	input, err := jsonvalue.Parse(inText)
	if err != nil {
		return &UsageError{"invalid input: " + err.Error()}
	}
	mocks, err := loadMocks(c.mockFile)
	if err != nil {
		return &UsageError{err.Error()}
	}
	clock := c.now
	if clock == nil {
		clock = time.Now
	}
	now := clock().UTC()
	smName := nameCleaner.ReplaceAllString(workflowtest.TrimExt(filepath.Base(file)), "-")
	if c.stateMachine != "" {
		smName = c.stateMachine
	}
	resolver, err := c.resolver(smName, mocks)
	defer func() {
		for _, stop := range c.closers {
			stop()
		}
	}()
	if err != nil {
		return err
	}
	execName := c.name
	if execName == "" {
		execName = fmt.Sprintf("run-%d", now.UnixNano())
	}
	e := &workflowtest.Exec{
		Machine:          m,
		StateMachineName: smName,
		ExecutionName:    execName,
		Input:            input,
		InputText:        string(inText),
		Start:            now,
		Resolver:         resolver,
		PayloadLimit:     c.payloadLimit,
		MaxSteps:         c.maxSteps,
	}
	sleep := c.sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	// The execution's clock is the real one plus the time timers skipped
	// beyond what was waited for: a call that leaves the process moves it
	// on by the real time the call took.
	var skipped time.Duration
	e.Sleep = func(dur time.Duration) {
		waited := time.Duration(float64(dur) * c.scale)
		if waited > 0 {
			sleep(waited)
		}
		skipped += dur - waited
	}
	if c.callsOut {
		e.Now = func() time.Time { return clock().UTC().Add(skipped) }
	}
	o := e.Run()
	if c.record != "" {
		text, err := workflowtest.Record(&workflowtest.Source{StateMachineName: smName, Definition: string(def),
			ExecutionName: execName, Events: o.Events, Children: o.Children})
		if err != nil {
			return fmt.Errorf("--record: %w", err)
		}
		if err := os.WriteFile(c.record, text, 0o644); err != nil {
			return fmt.Errorf("--record: %w", err)
		}
	}
	res := runResult{Status: o.Status, Output: json.RawMessage("null"), Error: o.Error, Cause: o.Cause}
	if o.Status == history.StatusSucceeded {
		res.Output = jsonvalue.Marshal(o.Output)
	}
	if c.history {
		res.Events = o.Events
	}
	if c.cost {
		n := history.StateTransitions(o.Events)
		prices := history.Prices{Transition: c.price}
		res.Billing = &runBilling{StateTransitions: n, TransitionPriceUSD: c.price, EstimatedCostUSD: prices.Standard(n)}
	}
	enc := json.NewEncoder(c.Out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return err
	}
	if o.Status != history.StatusSucceeded {
		return &ExitError{Code: 1}
	}
	return nil
}

func locationOrRoot(loc string) string {
	if loc == "" {
		return "/"
	}
	return loc
}

// resolver answers the Task states of a run: from --mock-config's test
// case, then --mock, then the local functions, then the integrations when
// --aws-endpoint or --endpoint says where their services are.
func (c *runCommand) resolver(smName string, mocks *mockResolver) (interp.Resolver, error) {
	if (c.mockConfig == "") != (c.testCase == "") {
		return nil, &UsageError{"--mock-config and --test-case go together"}
	}
	var cfg *mock.Config
	if c.mockConfig != "" {
		var err error
		if cfg, err = mock.Load(c.mockConfig); err != nil {
			return nil, &UsageError{err.Error()}
		}
		if !cfg.HasTestCase(smName, c.testCase) {
			return nil, &UsageError{fmt.Sprintf("%s has no test case %q for state machine %q (see --state-machine)", c.mockConfig, c.testCase, smName)}
		}
	}
	fns, err := config.ParseFunctions(c.functions)
	if err != nil {
		return nil, &UsageError{err.Error()}
	}
	local, err := lambda.NewLocal(fns, c.payloadLimit, c.Logger)
	if err != nil {
		return nil, &UsageError{err.Error()}
	}
	c.closers = append(c.closers, local.Close)
	var services *integration.Registry
	if c.awsEndpoint != "" || len(c.endpoints) > 0 {
		for service := range c.endpoints {
			if !integration.KnownService(service) {
				return nil, &UsageError{fmt.Sprintf("--endpoint %s=...: no integration calls a service named %s; the services are %s",
					service, service, strings.Join(integration.KnownServices(), ", "))}
			}
		}
		services, err = standard.New(integration.Config{Region: workflowtest.Region, Account: workflowtest.Account,
			Endpoint: c.awsEndpoint, Endpoints: c.endpoints, PayloadLimit: c.payloadLimit, Logger: c.Logger})
		if err != nil {
			return nil, &UsageError{err.Error()}
		}
		c.closers = append(c.closers, services.Close)
	}
	c.callsOut = len(fns) > 0 || services != nil
	smArn := workflowtest.StateMachineArn(smName)
	return interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
		if cfg != nil {
			if r, ok := cfg.Mocked(&task.Task{StateMachineArn: smArn, TestCase: c.testCase, Request: req}); ok {
				return r.Output, r.Failure
			}
		}
		if fn := local.Lookup(lambda.FunctionNamed(req.Resource, req.Parameters)); fn != nil {
			out, err := lambda.InvokeLocal(context.Background(), fn, req.Resource, req.Parameters)
			if err != nil {
				return nil, integration.AsFailure(err)
			}
			return out, nil
		}
		if out, fl, ok := mocks.mocks.Lookup(req); ok || services == nil {
			if !ok {
				return nil, failure.Newf(failure.TaskFailed,
					"no integration is available in-process for resource '%s'; give the state a mocked response with --mock, or say where its service is with --aws-endpoint", req.Resource)
			}
			return out, fl
		}
		return services.Resolve(req)
	}), nil
}

// maxDefinitionFile bounds a definition file the commands read, as AWS
// bounds a definition.
const maxDefinitionFile = workflowtest.MaxDefinitionSize

// maxTemplateFile bounds a template, as CloudFormation bounds one read
// from S3.
const maxTemplateFile = 1 << 20

// maxDataFile bounds the other files they read: recordings, an input to
// evaluate.
const maxDataFile = workflowtest.MaxFileSize

// mockResolver answers Task states from a mock file.
type mockResolver struct{ mocks *workflowtest.StateMocks }

func loadMocks(file string) (*mockResolver, error) {
	m, err := workflowtest.LoadStateMocks(file)
	if err != nil {
		return nil, err
	}
	return &mockResolver{mocks: m}, nil
}
