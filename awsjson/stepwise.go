package awsjson

import (
	"context"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"

	"stepwise/history"
	"stepwise/internal/security/sigv4auth"
	"stepwise/service"
)

// Stepwise's own operations (the operator controls of running
// executions) are served beside the Step Functions API, on the same path
// and port, in the same protocol and behind the same authentication, under
// their own X-Amz-Target prefix:
//
//	X-Amz-Target: Stepwise.HoldState
//
//	{"executionArn": "...", "state": "Load"}
//
// No AWS SDK sends that prefix (theirs is AWSStepFunctions.), so a
// client of AWS never reaches them by mistake, and they are not among the
// in-process calls of Task states (API.Call). Who made a control (the
// operator log's "by") is the server's to say, never the client's: the
// access key id that signed the request, "console:<access key id>" for
// the console's session, "anonymous@<client address>" on a server
// without --credentials. A RerunExecution, and the Step Functions API's
// RedriveExecution, are logged with their caller the same way.

// StepwiseTargetPrefix is the X-Amz-Target prefix of Stepwise's own
// operations.
const StepwiseTargetPrefix = "Stepwise."

// Inputs of Stepwise's operations, as their JSON members are named: arn
// is the execution's or the state machine's (hold, release), state the
// state's name.
type (
	// StateControlInput is HoldState's and ReleaseState's input: arn,
	// or executionArn, or stateMachineArn.
	StateControlInput struct {
		Arn             string `json:"arn,omitempty"`
		ExecutionArn    string `json:"executionArn,omitempty"`
		StateMachineArn string `json:"stateMachineArn,omitempty"`
		State           string `json:"state"`
	}
	// ExecutionControlInput is SuspendExecution's and ResumeExecution's.
	ExecutionControlInput struct {
		ExecutionArn string `json:"executionArn"`
	}
	// SkipStateInput is SkipState's: output is the state's output (JSON
	// text, {} when left out).
	SkipStateInput struct {
		ExecutionArn string `json:"executionArn"`
		State        string `json:"state"`
		Output       string `json:"output,omitempty"`
	}
	// RerunExecutionInput is RerunExecution's: from is FAILED, NEXT,
	// TOP, WARNINGS or STATE:NAME (or STATE with state naming the
	// state); output is NEXT's output for the failed state (JSON text, {}
	// when left out); definition a corrected definition, or revision the
	// number of a published version, to run on; dryRun answers the
	// preview and changes nothing.
	RerunExecutionInput struct {
		ExecutionArn string `json:"executionArn"`
		From         string `json:"from"`
		State        string `json:"state,omitempty"`
		Output       string `json:"output,omitempty"`
		Definition   string `json:"definition,omitempty"`
		Revision     int64  `json:"revision,omitempty"`
		DryRun       bool   `json:"dryRun,omitempty"`
	}
	// KillStateInput is KillState's: error (Stepwise.Killed when left
	// out) and cause are the task's failure.
	KillStateInput struct {
		ExecutionArn string `json:"executionArn"`
		State        string `json:"state"`
		Error        string `json:"error,omitempty"`
		Cause        string `json:"cause,omitempty"`
	}
)

// OperatorAction is one action of ListOperatorActions' answer: date,
// who (by), what (action: Hold, Release, Suspend, Resume, Skip, Kill,
// Rerun, Redrive), and the state, a skip's output, a kill's error and
// cause, a rerun's mode, state, output (NEXT's) and corrected
// definition.
type OperatorAction struct {
	Date       history.EpochTime `json:"date"`
	By         string            `json:"by,omitempty"`
	Action     string            `json:"action"`
	State      string            `json:"state,omitempty"`
	Output     string            `json:"output,omitempty"`
	Error      string            `json:"error,omitempty"`
	Cause      string            `json:"cause,omitempty"`
	Mode       string            `json:"mode,omitempty"`
	Definition string            `json:"definition,omitempty"`
}

// RerunExecutionOutput is RerunExecution's answer, the rerun's preview:
// its mode, the state it starts at (startState, left out for the failed
// states of FAILED and WARNINGS), the states that run again and those
// that keep their results, the states the definition it runs on adds,
// removes and changes; and for a rerun made, its redriveDate and the
// execution's redriveCount.
type RerunExecutionOutput struct {
	Mode          string             `json:"mode"`
	StartState    string             `json:"startState,omitempty"`
	RerunStates   []string           `json:"rerunStates"`
	KeptStates    []string           `json:"keptStates"`
	AddedStates   []string           `json:"addedStates"`
	RemovedStates []string           `json:"removedStates"`
	ChangedStates []string           `json:"changedStates"`
	DryRun        bool               `json:"dryRun,omitempty"`
	RedriveDate   *history.EpochTime `json:"redriveDate,omitempty"`
	RedriveCount  int                `json:"redriveCount,omitempty"`
}

// ListOperatorActionsOutput is the operator log of an execution, oldest
// first.
type ListOperatorActionsOutput struct {
	Actions []OperatorAction `json:"actions"`
}

// stepwiseOperations maps Stepwise's operations to the service's.
func stepwiseOperations(svc *service.Service) map[string]operation {
	return map[string]operation{
		"HoldState": op(func(ctx context.Context, in *StateControlInput) (*service.HoldStateOutput, error) {
			return svc.HoldState(ctx, &service.HoldStateInput{Arn: in.arn(), State: in.State, By: actor(ctx)})
		}),
		"ReleaseState": op(func(ctx context.Context, in *StateControlInput) (*service.HoldStateOutput, error) {
			return svc.ReleaseState(ctx, &service.HoldStateInput{Arn: in.arn(), State: in.State, By: actor(ctx)})
		}),
		"SuspendExecution": op(func(ctx context.Context, in *ExecutionControlInput) (*service.ExecutionControlOutput, error) {
			return svc.SuspendExecution(ctx, &service.ExecutionControlInput{ExecutionArn: in.ExecutionArn, By: actor(ctx)})
		}),
		"ResumeExecution": op(func(ctx context.Context, in *ExecutionControlInput) (*service.ExecutionControlOutput, error) {
			return svc.ResumeExecution(ctx, &service.ExecutionControlInput{ExecutionArn: in.ExecutionArn, By: actor(ctx)})
		}),
		"SkipState": op(func(ctx context.Context, in *SkipStateInput) (*service.ExecutionControlOutput, error) {
			return svc.SkipState(ctx, &service.SkipStateInput{ExecutionArn: in.ExecutionArn, State: in.State, Output: in.Output, By: actor(ctx)})
		}),
		"KillState": op(func(ctx context.Context, in *KillStateInput) (*service.ExecutionControlOutput, error) {
			return svc.KillState(ctx, &service.KillStateInput{ExecutionArn: in.ExecutionArn, State: in.State,
				Error: in.Error, Cause: in.Cause, By: actor(ctx)})
		}),
		"RerunExecution": op(func(ctx context.Context, in *RerunExecutionInput) (*RerunExecutionOutput, error) {
			out, err := svc.RerunExecution(ctx, &service.RerunExecutionInput{ExecutionArn: in.ExecutionArn, From: in.from(),
				Output: in.Output, Definition: in.Definition, Revision: in.Revision, DryRun: in.DryRun, By: actor(ctx)})
			if err != nil {
				return nil, err
			}
			return &RerunExecutionOutput{Mode: out.Mode, StartState: out.From, RerunStates: out.Rerun, KeptStates: out.Keep,
				AddedStates: out.Added, RemovedStates: out.Removed, ChangedStates: out.Changed, DryRun: out.DryRun,
				RedriveDate: out.RedriveDate, RedriveCount: out.RedriveCount}, nil
		}),
		"ListOperatorActions": op(func(ctx context.Context, in *ExecutionControlInput) (*ListOperatorActionsOutput, error) {
			out, err := svc.ListOperatorActions(ctx, &service.ListOperatorActionsInput{ExecutionArn: in.ExecutionArn})
			if err != nil {
				return nil, err
			}
			acts := make([]OperatorAction, 0, len(out.Actions))
			for _, a := range out.Actions {
				acts = append(acts, OperatorAction{Date: a.Date, By: a.By, Action: a.Action, State: a.State,
					Output: a.Output, Error: a.Error, Cause: a.Cause, Mode: a.Mode, Definition: a.Definition})
			}
			return &ListOperatorActionsOutput{Actions: acts}, nil
		}),
	}
}

// redriveBy is the Step Functions API's RedriveExecution, with its caller
// named for the operator log.
func redriveBy(svc *service.Service) func(context.Context, *service.RedriveExecutionInput) (*service.RedriveExecutionOutput, error) {
	return func(ctx context.Context, in *service.RedriveExecutionInput) (*service.RedriveExecutionOutput, error) {
		in.By = actor(ctx)
		return svc.RedriveExecution(ctx, in)
	}
}

// arn is the ARN the input names, whichever member names it.
func (in *StateControlInput) arn() string {
	switch {
	case in.Arn != "":
		return in.Arn
	case in.ExecutionArn != "":
		return in.ExecutionArn
	}
	return in.StateMachineArn
}

// from is the rerun mode the input names: STATE with a state is
// STATE:<state>.
func (in *RerunExecutionInput) from() string {
	if in.State != "" && (in.From == "STATE" || in.From == "") {
		return "STATE:" + in.State
	}
	return in.From
}

// StepwiseOperations are the names of Stepwise's own operations (without
// StepwiseTargetPrefix).
func StepwiseOperations() []string {
	return slices.Sorted(maps.Keys(stepwiseOperations(nil)))
}

type actorKey struct{}

// withActor is ctx that names who makes the request.
func withActor(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, actorKey{}, who)
}

// actor is who makes the request of ctx.
func actor(ctx context.Context) string {
	who, _ := ctx.Value(actorKey{}).(string)
	return who
}

// Identifier is an Authenticator that names who made a request it let
// through (the console's session's access key id).
type Identifier interface {
	Identify(r *http.Request) string
}

// identify is who made request r that auth let through: the access key
// id of its signature, or the auth's word for it.
func identify(r *http.Request, auth Authenticator) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if a, err := sigv4auth.ParseAuthorization(h); err == nil {
			if s, err := sigv4auth.ParseCredential(a.Credential); err == nil {
				return s.AccessKeyID
			}
		}
	}
	if id, ok := auth.(Identifier); ok {
		if who := id.Identify(r); who != "" {
			return who
		}
	}
	return anonymous(r)
}

// anonymous names the client of an unsigned request by its address.
func anonymous(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if host == "" {
		return "anonymous"
	}
	return "anonymous@" + strings.Trim(host, "[]")
}
