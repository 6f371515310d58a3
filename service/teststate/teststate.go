package teststate

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/asl/jsonata"
	"stepwise/asl/jsonatafn"
	"stepwise/awsarn"
	"stepwise/failure"
	"stepwise/internal/startrule"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/service"
)

// DefaultPayloadLimit is Config.PayloadLimit's default; the region,
// account and partition default to the service's.
const DefaultPayloadLimit = dataflow.DefaultPayloadLimit

// Config configures a Runner.
type Config struct {
	// Region, Account and Partition make the ARNs of the context object
	// (the service's DefaultRegion, DefaultAccount, DefaultPartition when
	// empty).
	Region    string
	Account   string
	Partition string
	// PayloadLimit is the largest input, result and output in UTF-8 bytes
	// (DefaultPayloadLimit when 0).
	PayloadLimit int
	// Now is the clock (time.Now when nil). It dates the context object;
	// nothing waits.
	Now func() time.Time
	// NewID returns a fresh unique id for the names in the context object
	// (a random UUID when nil).
	NewID func() string
	// Invoke calls the resource of a Task state tested without a mock. It
	// returns the task's result (a jsonvalue value), or a
	// *failure.Failure for a task that failed; any other error is
	// returned to the caller as is. Nil means no integration is
	// available: such a request is refused with a ValidationException.
	Invoke func(ctx context.Context, call *Call) (any, error)
}

// Call is the call of a Task state's resource, for Config.Invoke.
type Call struct {
	StateName  string
	Resource   string
	Parameters any // the effective parameters, after InputPath and Parameters
	RoleArn    string
	// TimeoutSeconds and HeartbeatSeconds are 0 when the state sets none.
	TimeoutSeconds   int64
	HeartbeatSeconds int64
}

// Runner runs the TestState operation. It is safe for concurrent use.
type Runner struct {
	cfg Config
	// funcs are the Step Functions functions of JSONata expressions.
	funcs map[string]*jsonata.Func
}

// Runner.TestState is service.Service's TestState hook.
var _ func(context.Context, *service.TestStateInput) (*service.TestStateOutput, error) = (*Runner)(nil).TestState

// New returns a Runner.
func New(cfg Config) *Runner {
	cfg.Region = cmp.Or(cfg.Region, service.DefaultRegion)
	cfg.Account = cmp.Or(cfg.Account, service.DefaultAccount)
	cfg.Partition = cmp.Or(cfg.Partition, service.DefaultPartition)
	cfg.PayloadLimit = cmp.Or(cfg.PayloadLimit, DefaultPayloadLimit)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = uuid.NewString
	}
	return &Runner{cfg: cfg, funcs: jsonatafn.Funcs(jsonatafn.Env{})}
}

// TestState runs one state of a definition, as the TestState operation
// does, with the signature of service.Service's TestState hook. Requests
// it refuses get a *sfnapi.Error; a state that fails is a
// response with status FAILED, not an error.
func (r *Runner) TestState(ctx context.Context, in *service.TestStateInput) (*service.TestStateOutput, error) {
	t, err := r.prepare(in)
	if err != nil {
		return nil, err
	}
	return r.run(ctx, t)
}

// test is a checked request, ready to run.
type test struct {
	in       *service.TestStateInput
	machine  *asl.StateMachine // the state and a stand-in for each state it moves to
	state    *asl.State
	res      resource // the Task state's resource
	input    any      // the raw state input
	vars     *jsonvalue.Object
	context  any // "$$": the request's context object or a default one
	mock     *mock
	inspect  bool // DEBUG or TRACE
	retries  int64
	failures *int // stateConfiguration.mapIterationFailureCount
	// readerItems are the items of a Map state's ItemReader
	// (stateConfiguration.mapItemReaderData); nil when not given.
	readerItems []any
}

// mock is a checked mock: a result or a failure.
type mock struct {
	result  any
	failure *failure.Failure
}

// prepare checks a request, in the order AWS checks it, and parses its
// JSON texts.
func (r *Runner) prepare(in *service.TestStateInput) (*test, error) {
	sm, st, err := loadState(in.Definition, in.StateName)
	if err != nil {
		return nil, err
	}
	t := &test{in: in, machine: sm, state: st, inspect: in.InspectionLevel == "DEBUG" || in.InspectionLevel == "TRACE"}
	if st.Type == asl.TypeTask {
		t.res = parseResource(st.Resource)
	}
	conf := in.StateConfiguration
	if conf == nil {
		conf = &service.TestStateConfiguration{}
	}
	if in.Mock == nil {
		if err := checkUnmocked(t, conf); err != nil {
			return nil, err
		}
	} else if t.mock, err = checkMock(t, conf); err != nil {
		return nil, err
	}
	if conf.RetrierRetryCount != nil {
		t.retries = int64(*conf.RetrierRetryCount)
	}
	t.failures = conf.MapIterationFailureCount
	if conf.MapItemReaderData != nil {
		v, _ := jsonvalue.ParseString(*conf.MapItemReaderData)
		t.readerItems, _ = v.([]any)
	}

	inputText := "{}"
	if in.Input != nil {
		inputText = *in.Input
	}
	if t.input, err = r.parseInput(inputText); err != nil {
		return nil, err
	}
	if t.vars, err = parseVariables(in.Variables); err != nil {
		return nil, err
	}
	if in.Context != nil {
		// Checked with the mock.
		t.context, _ = jsonvalue.ParseString(*in.Context)
	} else {
		t.context = r.defaultContext(t)
	}
	return t, nil
}

// checkUnmocked checks a request without a mock.
func checkUnmocked(t *test, conf *service.TestStateConfiguration) error {
	switch {
	case conf.MapIterationFailureCount != nil:
		return errNeedsMock("MapIterationFailureCount")
	case conf.RetrierRetryCount != nil:
		return errNeedsMock("RetrierRetryCount")
	case conf.ErrorCausedByState != nil:
		return errNeedsMock("ErrorCausedByState")
	case t.in.Context != nil:
		return errNeedsMock("Context")
	}
	switch t.state.Type {
	case asl.TypeMap, asl.TypeParallel:
		return errMapOrParallel()
	case asl.TypeTask:
		if t.in.RoleArn == nil {
			return errRoleArnRequired()
		}
		if t.res.needsMock() {
			return errNeedsMockPattern(t.res.arn)
		}
	}
	return nil
}

// parseInput checks the state input as StartExecution checks an execution
// input.
func (r *Runner) parseInput(text string) (any, error) {
	if len(text) > r.cfg.PayloadLimit {
		return nil, errInvalidInput(fmt.Sprintf("Input exceeds the maximum size of %d bytes (UTF-8).", r.cfg.PayloadLimit))
	}
	if strings.TrimSpace(text) == "" {
		return nil, errInvalidInput("Invalid execution input.")
	}
	v, err := jsonvalue.ParseString(text)
	if err != nil {
		return nil, errInvalidInput(startrule.JSONErrorMessage(text, err))
	}
	return v, nil
}

// parseVariables reads the variables the state is tested with: a JSON
// object of names and values.
func parseVariables(text *string) (*jsonvalue.Object, error) {
	if text == nil {
		return jsonvalue.NewObject(0), nil
	}
	v, err := jsonvalue.ParseString(*text)
	if err != nil {
		return nil, errInvalidVariables(startrule.JSONErrorMessage(*text, err))
	}
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, errInvalidVariables("variables must be a JSON object")
	}
	return obj, nil
}

// defaultContext is the context object of a request that gives none: the
// state runs as the only state of an EXPRESS execution that starts now.
func (r *Runner) defaultContext(t *test) *jsonvalue.Object {
	now := r.cfg.Now().UTC().Format(interp.TimestampFormat)
	machine, execution := r.cfg.NewID(), r.cfg.NewID()
	where := awsarn.Prefix{Partition: r.cfg.Partition, Region: r.cfg.Region, Account: r.cfg.Account}

	e := jsonvalue.NewObject(5)
	e.Set("Id", where.String()+awsarn.Express+":"+machine+":"+execution) // as AWS writes it: no id
	e.Set("Input", t.input)
	e.Set("Name", execution)
	if t.in.RoleArn != nil {
		e.Set("RoleArn", *t.in.RoleArn)
	}
	e.Set("StartTime", now)
	sm := jsonvalue.NewObject(2)
	sm.Set("Id", where.StateMachine(machine))
	sm.Set("Name", machine)
	s := jsonvalue.NewObject(3)
	s.Set("Name", t.state.Name)
	s.Set("EnteredTime", now)
	switch t.state.Type {
	case asl.TypeTask, asl.TypeParallel, asl.TypeMap:
		s.Set("RetryCount", jsonvalue.NumberFromInt(t.retries))
	}

	c := jsonvalue.NewObject(4)
	c.Set("Execution", e)
	c.Set("StateMachine", sm)
	c.Set("State", s)
	if t.res.pattern == ".waitForTaskToken" {
		task := jsonvalue.NewObject(1)
		task.Set("Token", r.cfg.NewID())
		c.Set("Task", task)
	}
	return c
}
