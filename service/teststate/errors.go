package teststate

import (
	"stepwise/asl"
	"stepwise/sfnapi"
)

// The errors TestState returns to its caller, one constructor per message.
// "(AWS)" marks wordings recorded from AWS; the others are ours, written in
// the same style.

func validation(format string, args ...any) error {
	return sfnapi.NewError(sfnapi.CodeValidation, format, args...)
}

// errInvalidDefinition renders the definition's diagnostics the way
// CreateStateMachine does (AWS).
func errInvalidDefinition(diags []asl.Diagnostic) error {
	return sfnapi.NewError(sfnapi.CodeInvalidDefinition, "%s", asl.InvalidDefinitionMessage(diags))
}

// errMapOrParallel is the answer to a Map or Parallel state without a
// mock (AWS; InvalidDefinition, not ValidationException).
func errMapOrParallel() error {
	return sfnapi.NewError(sfnapi.CodeInvalidDefinition,
		"TestState API does not support Map or Parallel states. Supported state types include: [Task, Wait, Pass, Succeed, Fail, Choice]")
}

// errStateNotFound (AWS).
func errStateNotFound() error { return validation("State not found in definition") }

// errNeedsMock names a request field that is only allowed with a mock
// (AWS for MapIterationFailureCount).
func errNeedsMock(field string) error {
	return validation("TestState does not support %s when a mock is not specified.", field)
}

// errMockStateType (AWS).
func errMockStateType(t asl.StateType) error {
	return validation("State type '%s' is not supported when a mock is specified", t)
}

// errRevealSecretsWithMock (AWS).
func errRevealSecretsWithMock() error {
	return validation("TestState does not support RevealSecrets when a mock is specified.")
}

// errMockBoth (AWS).
func errMockBoth() error {
	return validation("A test mock should have only one of the following fields: [result, errorOutput].")
}

// errMockNeither.
func errMockNeither() error {
	return validation("A test mock should have one of the following fields: [result, errorOutput].")
}

// errMockNotJSON.
func errMockNotJSON() error { return validation("Mocked result must be valid JSON") }

// errMockNotArray (AWS).
func errMockNotArray() error { return validation("Mocked result must be an array.") }

// errMockNotObject (AWS).
func errMockNotObject() error { return validation("Mocked result must be a JSON object.") }

// errMockBranches.
func errMockBranches() error {
	return validation("Mocked result must contain the same number of items as number of Parallel branches.")
}

// errFailureCountTooLarge (AWS).
func errFailureCountTooLarge() error {
	return validation("Map iteration failure count must be less than or equal to the number of Map iterations")
}

// errRoleArnRequired (AWS).
func errRoleArnRequired() error {
	return validation("RoleArn must be specified when testing a Task state")
}

// errInvalidContext wraps the reason a context object was refused (AWS's
// frame; the reasons "Field 'x' is not allowed" and "'Map' field is not
// supported when mocking a Context object" are AWS's too).
func errInvalidContext(reason string) error {
	return validation("Invalid Context object provided: %s", reason)
}

// errInvalidInput wraps the reason the input was refused, as
// StartExecution does (AWS).
func errInvalidInput(reason string) error {
	return sfnapi.NewError(sfnapi.CodeInvalidExecutionInput, "Invalid State Machine Execution Input: '%s'", reason)
}

// errInvalidVariables.
func errInvalidVariables(reason string) error {
	return validation("Invalid variables: '%s'", reason)
}

// errNeedsMockPattern is the answer to an activity, ".sync" or
// ".waitForTaskToken" Task tested without a mock, which TestState only
// runs mocked.
func errNeedsMockPattern(resource string) error {
	return validation("TestState supports Activity tasks and the '.sync' and '.waitForTaskToken' integration patterns only when a mock is specified: '%s'", resource)
}

// errNoIntegration is the answer to a Task tested without a mock when the
// server has no integration to call.
func errNoIntegration(resource string) error {
	return validation("TestState cannot call '%s' on this server: no integration is configured. Specify a mock to test the state.", resource)
}
