package teststate

import (
	"context"
	"errors"
	"time"

	"stepwise/asl"
	"stepwise/failure"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/service"
)

// Test statuses.
const (
	StatusSucceeded   = "SUCCEEDED"
	StatusFailed      = "FAILED"
	StatusRetriable   = "RETRIABLE"
	StatusCaughtError = "CAUGHT_ERROR"
)

// run runs the state on the interpreter, as the first state of a machine
// of its own (see loadState), under an interp.Inspection: a recorder
// collects what TestState reports, the mock (or Config.Invoke) answers
// the Task, the mock stands for a Parallel's branches and a Map's
// iterations, and a Wait's time passes at once. The run stops when the
// state is to be retried: TestState reports the retry, it does not make it.
func (r *Runner) run(ctx context.Context, t *test) (*service.TestStateOutput, error) {
	rec := &recorder{state: t.state, vars: t.vars, mock: t.mock}
	if t.inspect {
		rec.insp = &service.InspectionData{}
		rec.insp.Input = ptr(jsonvalue.String(t.input))
	}
	ins := &interp.Inspection{Inspector: rec, Context: t.context, Variables: t.vars,
		RetriesMade: t.retries, ReaderItems: t.readerItems}
	if t.failures != nil {
		ins.FailedIterations = *t.failures
	}
	x := interp.New(t.machine, interp.Info{Name: t.state.Name}, t.input, interp.Options{
		PayloadLimit: r.cfg.PayloadLimit,
		Inspect:      ins,
	})
	var refused error
	d := interp.Driver{
		Resolver: interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
			result, err := r.call(ctx, t, req)
			var fl *failure.Failure
			switch {
			case errors.As(err, &fl):
				return nil, fl
			case err != nil:
				refused = err
				return nil, &failure.Failure{}
			}
			return result, nil
		}),
		Halt: func() bool { return refused != nil || rec.retry != nil },
	}
	d.Run(x, r.cfg.Now())
	if refused != nil {
		return nil, refused
	}
	return rec.outcome(x), nil
}

// call does the work of the Task state: its mock, or Config.Invoke. The
// task's failure is a *failure.Failure; any other error refuses the
// request.
func (r *Runner) call(ctx context.Context, t *test, req *interp.TaskRequest) (any, error) {
	switch m := t.mock; {
	case m != nil && m.failure != nil:
		return nil, m.failure
	case m != nil:
		return m.result, nil
	case r.cfg.Invoke == nil:
		return nil, errNoIntegration(req.Resource)
	}
	call := &Call{StateName: req.StateName, Resource: req.Resource, Parameters: req.Parameters,
		TimeoutSeconds: req.TimeoutSeconds, HeartbeatSeconds: req.HeartbeatSeconds}
	if t.in.RoleArn != nil {
		call.RoleArn = *t.in.RoleArn
	}
	return r.cfg.Invoke(ctx, call)
}

// recorder is the interp.Inspector of a test: it keeps what the tested
// state did, as TestState reports it.
type recorder struct {
	state *asl.State
	vars  *jsonvalue.Object // the variables the test started with
	mock  *mock
	// insp collects the inspection data; nil at INFO.
	insp *service.InspectionData

	details *service.InspectionErrorDetails
	retry   *failure.Failure // the failure a retrier retries
	caught  *failure.Failure // the failure a catcher caught
	exited  bool
	output  string
	next    string
	// assigned are the variables the state assigned on its way out.
	assigned *jsonvalue.Object
}

// Note reports a step of the data flow, as AWS reports it per state type:
// a Pass state with Result reports no afterInputPath and afterParameters,
// a Parallel state neither.
func (c *recorder) Note(s *asl.State, stage interp.Stage, v any) {
	if s != c.state || c.insp == nil {
		return
	}
	d := c.insp
	var dst **string
	switch stage {
	case interp.AfterInputPath:
		if s.Type == asl.TypeParallel || (s.Type == asl.TypePass && s.HasResult) {
			return
		}
		dst = &d.AfterInputPath
	case interp.AfterParameters:
		dst = &d.AfterParameters
	case interp.AfterArguments:
		dst = &d.AfterArguments
	case interp.Result:
		dst = &d.Result
	case interp.AfterResultSelector:
		dst = &d.AfterResultSelector
	case interp.AfterResultPath:
		dst = &d.AfterResultPath
	case interp.AfterItemsPath:
		dst = &d.AfterItemsPath
	case interp.AfterItemSelector:
		dst = &d.AfterItemSelector
	case interp.MaxConcurrency:
		d.MaxConcurrency = ptr(int(number(v)))
		return
	case interp.ToleratedFailureCount:
		d.ToleratedFailureCount = ptr(int(number(v)))
		return
	case interp.ToleratedFailurePercentage:
		d.ToleratedFailurePercentage = ptr(number(v))
		return
	default:
		return
	}
	*dst = ptr(jsonvalue.String(v))
}

// number is the value of a numeric stage.
func number(v any) float64 {
	n, _ := v.(jsonvalue.Number)
	return n.Float64()
}

// Retry records the retrier that matched the state's failure; when it
// retries the state, the test ends there.
func (c *recorder) Retry(s *asl.State, fl *failure.Failure, i int, delay time.Duration, retrying bool) {
	if s != c.state || c.retry != nil {
		return
	}
	c.details = &service.InspectionErrorDetails{RetryIndex: ptr(i)}
	if retrying {
		c.retry = fl
		c.details.RetryBackoffIntervalSeconds = ptr(int(delay / time.Second))
	}
}

// Catch records that a catcher caught the state's failure.
func (c *recorder) Catch(s *asl.State, fl *failure.Failure, i int) {
	if s != c.state {
		return
	}
	c.caught = fl
	if c.details == nil {
		c.details = &service.InspectionErrorDetails{}
	}
	c.details.CatchIndex = ptr(i)
}

// Exit records the state's output and next state.
func (c *recorder) Exit(s *asl.State, output string, assigned *jsonvalue.Object, next string) {
	if s != c.state {
		return
	}
	c.exited, c.output, c.next, c.assigned = true, output, next, assigned
}

// Children stands for a Parallel state's branches and a Map state's
// iterations: their results are the mock's, or its failure.
func (c *recorder) Children(*asl.State) (any, *failure.Failure) {
	if c.mock.failure != nil {
		return nil, c.mock.failure
	}
	return c.mock.result, nil
}

// outcome is the response: the state's output and next state when it
// exited (CAUGHT_ERROR when through a catcher), RETRIABLE when a retrier
// retries it, FAILED otherwise; with the error, the inspection data and
// the variables after the state.
func (c *recorder) outcome(x *interp.Execution) *service.TestStateOutput {
	out := &service.TestStateOutput{InspectionData: c.insp}
	var fl *failure.Failure
	switch {
	case c.retry != nil:
		out.Status, fl = StatusRetriable, c.retry
	case c.exited:
		out.Status = StatusSucceeded
		if c.caught != nil {
			out.Status, fl = StatusCaughtError, c.caught
		}
		out.Output = ptr(c.output)
		if c.next != "" {
			out.NextState = ptr(c.next)
		}
	default:
		out.Status, fl = StatusFailed, x.Failure
	}
	if fl != nil {
		if fl.Name != "" {
			out.Error = ptr(fl.Name)
		}
		if fl.HasCause {
			out.Cause = ptr(fl.Cause)
		}
	}
	if c.insp != nil {
		c.insp.ErrorDetails = c.details
		vars := c.vars
		if c.exited && c.assigned.Len() > 0 {
			vars = vars.Clone()
			for k, v := range c.assigned.All() {
				vars.Set(k, v)
			}
		}
		if vars.Len() > 0 {
			c.insp.Variables = ptr(jsonvalue.String(vars))
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
