// Package startrule holds the checks StartExecution makes of a start and
// the messages it refuses one with, written once for every way an
// execution is started: the Starter (engine/start) applies them to the
// API's starts and to a states:startExecution Task's child, which fails
// its task with the same code and message as the API would answer; the
// nested runner checks its Parameters' members with them first.
//
// Each check returns a *sfnapi.Error with AWS's code and
// message, or nil; Resolve passes the store's other errors on as they are.
package startrule

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"stepwise/asl"
	"stepwise/awsarn"
	"stepwise/jsonvalue"
	"stepwise/sfnapi"
	"stepwise/store"
)

// MaxNameLength is the longest execution name.
const MaxNameLength = 80

// InvalidName refuses an execution name (AWS's wording).
func InvalidName(name string) *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeInvalidName, "Invalid Name: '%s'", name)
}

// InvalidInput refuses an execution input for reason (AWS's wording).
func InvalidInput(reason string) *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeInvalidExecutionInput, "Invalid State Machine Execution Input: '%s'", reason)
}

// InvalidArnPrefix refuses an ARN that does not start with "arn:" (AWS).
func InvalidArnPrefix(arn string) *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeInvalidArn, "Invalid Arn: 'Invalid ARN prefix: %s'", arn)
}

// InvalidArnResourceType refuses an ARN of another resource type (AWS).
func InvalidArnResourceType(resourceType string) *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeInvalidArn, "Invalid Arn: 'Resource type not valid in this context: %s'", strings.ToLower(resourceType))
}

// InvalidArn refuses any other malformed ARN (wording ours, in AWS's
// frame).
func InvalidArn(arn string) *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeInvalidArn, "Invalid Arn: 'Invalid ARN format: %s'", arn)
}

// ParseArn parses a Step Functions ARN (awsarn.Parse), or refuses it
// with the InvalidArn error AWS gives for it.
func ParseArn(text string) (*awsarn.ARN, *sfnapi.Error) {
	a, err := awsarn.Parse(text)
	switch {
	case errors.Is(err, awsarn.ErrPrefix):
		return nil, InvalidArnPrefix(text)
	case err != nil:
		return nil, InvalidArn(text)
	}
	return a, nil
}

// StateMachineArn parses the ARN of a state machine, possibly qualified
// by a version or an alias (a.Parts[1]), or refuses it as StartExecution
// does.
func StateMachineArn(text string) (*awsarn.ARN, *sfnapi.Error) {
	a, refused := ParseArn(text)
	switch {
	case refused != nil:
		return nil, refused
	case a.Resource != awsarn.StateMachine:
		return nil, InvalidArnResourceType(a.Resource)
	case len(a.Parts) > 2:
		return nil, InvalidArn(text)
	}
	return a, nil
}

// StateMachineDoesNotExist refuses a start on a state machine, version
// or alias that is not there (AWS).
func StateMachineDoesNotExist(arn string) *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", arn)
}

// StateMachineDeleting refuses a start on a state machine being deleted
// (wording ours).
func StateMachineDeleting(arn string) *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeStateMachineDeleting, "State Machine is being deleted: '%s'", arn)
}

// TypeNotSupported refuses a synchronous start of a STANDARD state
// machine (AWS).
func TypeNotSupported() *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeStateMachineTypeNotSupp, "This operation is not supported by this type of state machine")
}

// ExecutionAlreadyExists refuses a start whose execution ARN another
// execution holds (AWS).
func ExecutionAlreadyExists(arn string) *sfnapi.Error {
	return sfnapi.NewError(sfnapi.CodeExecutionAlreadyExists, "Execution Already Exists: '%s'", arn)
}

// Name checks an execution's name: the characters AWS forbids
// (awsarn.ValidName). Its length the API checks first, as a
// validation error; a nested start, whose name comes from a Task's
// Parameters, has no such check and refuses an empty or too long name
// here too, as AWS does (InvalidName).
func Name(name string) *sfnapi.Error {
	if name == "" || len(name) > MaxNameLength || !awsarn.ValidName(name) {
		return InvalidName(name)
	}
	return nil
}

// DefaultPayloadLimit is the largest input when none is configured.
const DefaultPayloadLimit = 256 * 1024

// Input checks an execution input's text against the payload limit
// (0: DefaultPayloadLimit) and parses it: blank text and JSON that does
// not parse are refused, worded as Step Functions words them.
func Input(text string, limit int) (any, *sfnapi.Error) {
	if limit <= 0 {
		limit = DefaultPayloadLimit
	}
	if len(text) > limit {
		return nil, InvalidInput("Input exceeds the maximum size of " + strconv.Itoa(limit) + " bytes (UTF-8).")
	}
	if strings.TrimSpace(text) == "" {
		return nil, InvalidInput("Invalid execution input.")
	}
	v, err := jsonvalue.ParseString(text)
	if err != nil {
		return nil, InvalidInput(JSONErrorMessage(text, err))
	}
	return v, nil
}

// JSONErrorMessage words a JSON syntax error the way Step Functions does
// (Jackson's words, without the location), using the definition parser's
// rendering of Jackson errors: for StartExecution's input, and TestState's
// input, variables and context.
func JSONErrorMessage(text string, err error) string {
	for _, d := range asl.Validate([]byte(text), asl.Options{MaxDiagnostics: 1}) {
		if d.Code == asl.CodeInvalidJSON {
			msg, _, _ := strings.Cut(d.Message, "\n at ")
			return msg
		}
	}
	return err.Error()
}

// Deleting is the status of a state machine being deleted: nothing
// starts on it.
const Deleting = "DELETING"

// Runnable checks that executions may start on a state machine.
func Runnable(sm *store.StateMachine) *sfnapi.Error {
	if sm.Status == Deleting {
		return StateMachineDeleting(sm.Arn)
	}
	return nil
}

// Resolve returns the state machine an ARN names; for a version or an
// alias (…:NAME:N, …:NAME:ALIAS) as that version runs (its revision),
// with the version's ARN and the alias's. An alias picks its version by
// weight with draw, uniform in [0, 100) (store.Alias.Pick). A state
// machine, version or alias that is missing is StateMachineDoesNotExist
// of arn; the store's other errors are returned as they are.
func Resolve(ctx context.Context, ex store.Executor, arn string, draw int) (sm *store.StateMachine, versionArn, aliasArn string, err error) {
	sm, versionArn, aliasArn, err = resolve(ctx, ex, arn, draw)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", "", StateMachineDoesNotExist(arn)
	}
	return sm, versionArn, aliasArn, err
}

func resolve(ctx context.Context, ex store.Executor, arn string, draw int) (*store.StateMachine, string, string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 8 {
		sm, err := ex.StateMachineGet(ctx, arn)
		return sm, "", "", err
	}
	base, qualifier := strings.Join(parts[:7], ":"), parts[7]
	sm, err := ex.StateMachineGet(ctx, base)
	if err != nil {
		return nil, "", "", err
	}
	aliasArn := ""
	n, err := strconv.ParseInt(qualifier, 10, 64)
	if err != nil || n <= 0 || qualifier[0] == '0' {
		a, err := ex.AliasGet(ctx, base, qualifier)
		if err != nil {
			return nil, "", "", err
		}
		aliasArn, n = a.Arn(), a.Pick(draw)
	}
	v, err := ex.VersionGet(ctx, base, n)
	if err != nil {
		return nil, "", "", err
	}
	rev, err := ex.RevisionGet(ctx, base, v.RevisionID)
	if err != nil {
		return nil, "", "", err
	}
	out := *sm
	out.RevisionID, out.Definition, out.RoleArn = rev.RevisionID, rev.Definition, rev.RoleArn
	return &out, v.Arn(), aliasArn, nil
}
