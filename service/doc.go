// Package service is the Step Functions API as typed Go methods: one
// method per operation, taking the operation's request and returning its
// response, with AWS's request validation, error codes and messages. It
// knows nothing of HTTP; package awsjson puts it on the wire.
//
// # Shapes
//
// Requests and responses are Go structs named and tagged as the API model
// names them (botocore's stepfunctions/2016-11-23 service-2.json), so the
// transport decodes and encodes them as they are. Timestamps are
// history.EpochTime, which the wire writes as epoch seconds. Members
// that hold a resource name are tagged `awsjson:"name"`: the transport
// keeps an unpaired surrogate escape in them as it was sent rather than
// as U+FFFD, so the name is refused (InvalidName) as AWS refuses it.
//
// # Errors
//
// Every error meant for a client is a *sfnapi.Error built by one
// constructor in errors.go. Request members are checked first, as AWS's
// request validation does, into one ValidationException:
//
//	1 validation error detected: Value '1001' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000
//
// then the operation's own rules (InvalidArn, InvalidName,
// StateMachineDoesNotExist, ...). Any other error is an internal failure.
//
// # Reads and writes
//
// The service reads through the store; it starts, stops and redrives
// executions through the Engine, which owns every change to an execution.
// ARNs are built from the configured partition, region and account; a
// well-formed ARN of another region or account names nothing here.
// Pagination tokens are opaque: base64 of a cursor that also names the
// list it belongs to.
//
// # Engine errors
//
// The engine returns errors in its own terms (engine.ErrInvalidToken,
// engine.NotRedrivableError, ...); engineError maps them to AWS's codes and
// words, and a store that cannot write to ServiceUnavailable.
//
// # Not yet
//
// Versions, aliases and map runs are later operations. TestState is
// implemented by package teststate and plugged in through
// Service.TestState.
//
// # Shapes
//
// Each operation's request and response shapes sit beside it, in the
// file of its area (state_machine.go, execution.go, version.go,
// activity.go, tag.go, maprun.go, history.go, search.go; a state
// machine's logging, tracing and encryption in state_machine_config.go),
// named and tagged as the API model (botocore's
// stepfunctions/2016-11-23/service-2.json) names them, so that the wire
// decodes and encodes them as they are. Optional scalars are pointers
// where the API tells absent from zero; a timestamp is a
// history.EpochTime (epoch seconds with a fraction).
package service
