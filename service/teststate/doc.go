// Package teststate implements the TestState operation of the Step
// Functions API: it runs one state, once, and reports what each step of
// its data flow produced, without creating a state machine or an
// execution. Runner.TestState has the signature of service.Service's
// TestState hook.
//
// # The request
//
// The definition is one state, or a whole machine when stateName names
// the state to test (at any depth: inside a Parallel branch or a Map's
// item processor). A single state is validated as the only state of a
// machine, with a stand-in terminal state for each state it can move to,
// and runs under the name "StateName". Requests are checked in the order
// AWS checks them; refusals are *sfnapi.Error values with AWS's
// codes and, where recorded, AWS's words:
//
//	definition ──► parse ─────────────────────────► InvalidDefinition
//	     │ stateName? ─► find the state ──────────► "State not found in definition"
//	     ▼
//	no mock: stateConfiguration or context given ─► ValidationException
//	         Map or Parallel ─────────────────────► InvalidDefinition
//	         Task without roleArn ────────────────► ValidationException
//	mock:    not a Task, Map or Parallel state ───► ValidationException
//	         revealSecrets, result and errorOutput, context fields,
//	         result not JSON / not the Map's or Parallel's shape,
//	         result not the API's output shape (fieldValidationMode)
//	     ▼
//	input, variables ─────────────────────────────► InvalidExecutionInput, ValidationException
//
// # The run
//
// The state runs on the interpreter (package interp), as the first state
// of a machine of its own, under an interp.Inspection: the package has no
// state semantics of its own. What differs from an execution is what the
// Inspection gives: a Task calls nothing (its mock stands for the call;
// without a mock Config.Invoke is asked, or the request refused), a Map
// or Parallel runs no iterations or branches (the mocked result stands for
// theirs), a Wait state's time passes at once, and the context object and
// variables are the request's. The outcome is a status:
//
//	             ┌──► SUCCEEDED     output, nextState (unless End)
//	run state ───┤
//	             └──► error ──► first matching retrier with attempts left?
//	                              yes ──► RETRIABLE     retryIndex, back-off
//	                              no ───► first matching catcher?
//	                                        yes ──► CAUGHT_ERROR  output, nextState, catchIndex
//	                                        no ───► FAILED        error, cause
//
// stateConfiguration.retrierRetryCount is the number of retries already
// made, mapIterationFailureCount the number of Map iterations that failed
// (checked against ToleratedFailureCount and ToleratedFailurePercentage).
// States.Runtime errors are never retried or caught.
//
// # Inspection data
//
// At DEBUG and TRACE the response carries the JSON text each step
// produced, as AWS reports it per state type: input, afterInputPath,
// afterParameters, result, afterResultSelector, afterResultPath (a Pass
// state with Result reports no afterInputPath and afterParameters, a
// Parallel state neither, and only a Task reports its result), and for a
// Map afterItemsPath, afterItemSelector, maxConcurrency and the tolerated
// failure count or percentage; errorDetails says which retrier or catcher
// handled an error, and variables the variables after the state. INFO
// reports none of it.
//
// A JSONata state runs with the interpreter's JSONata semantics; AWS
// reports less for it: the input, a Task's afterArguments and result, a
// Map's afterItemSelector (when it has one), maxConcurrency and tolerated
// failures, errorDetails and variables.
//
// Mocked results of service integrations are checked by package apishape
// against the API output shapes of the embedded models the aws-sdk
// integration calls with (package awsmodel).
//
// The package is pure: no I/O but Config.Invoke, no logging, the clock
// and ids injected through Config.
package teststate
