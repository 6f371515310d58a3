// Package integration carries out the Task states the engine does not do
// itself: calls to other services, looked up by resource ARN.
//
// # Registry
//
// Each integration registers a Module in init() under the resource ARN it
// serves, either exact (arn:aws:states:::sqs:sendMessage) or ending in
// "*" for a whole family (arn:aws:states:::aws-sdk:sfn:*), with the
// integration patterns it supports besides request-response. A Registry
// built from a Config instantiates every registered module and is the
// engine's TaskRunner; package standard pulls in the built-in modules.
// The engine never imports this package: it sees only the TaskRunner.
//
//	Task state ──► engine ──TaskRunner──► Registry ──Resource──► Module (sqs, sns, aws-sdk:sfn, …)
//	                                         │
//	                                         └─ no module: .waitForTaskToken waits for the token,
//	                                            anything else fails with States.TaskFailed
//
// # Integration patterns
//
//	request-response    the call's result is the task's result
//	.waitForTaskToken   the call is made (the Parameters carry $$.Task.Token),
//	                    then the task waits for SendTaskSuccess/Failure with it
//
// A .waitForTaskToken resource no module serves is a pure callback: no
// call is made and the task waits for its token, which workers can read
// from the TaskScheduled event's parameters. Where a module exists, the
// call is made as on AWS.
//
// # Errors
//
// A service error fails the task the way AWS names it: "<Service>.<Code>"
// with an Exception suffix (SQS.QueueDoesNotExistException,
// Sfn.InvalidTokenException) and the AWS SDK's wording of the error as
// the cause.
package integration
