// Package execlog writes executions' logs as Step Functions does when a
// state machine has a logging configuration: for each history event its
// level selects, one record in AWS's shape, to a CloudWatch Logs log group
// or to JSON-lines files standing in for one.
//
// # Records
//
// A record is one JSON object per history event (AWS's developer guide,
// "Logging in CloudWatch Logs", and AWS's recordings of it):
//
//	{"id":"3","type":"ExecutionFailed","details":{"error":"E","cause":"C"},
//	 "previous_event_id":"2","event_timestamp":"1700000000123",
//	 "execution_arn":"arn:aws:states:…:execution:sm:x","redrive_count":"0"}
//
// The numbers are strings, the timestamp is in milliseconds, and details
// holds the members of the event's details as GetExecutionHistory shows
// them ({} for an event without any). When the configuration's
// includeExecutionData is false, the execution's data is left out of
// details: input, output, their inputDetails and outputDetails, a task's
// parameters and a state's assigned variables. An input or output whose
// JSON text passes 248 KiB is cut there, with truncated set, as AWS does
// for CloudWatch Logs' quotas.
//
// # Levels
//
// ALL logs every event; FATAL the execution's own failures
// (ExecutionFailed, ExecutionAborted, ExecutionTimedOut); ERROR those and
// the failure events of AWS's table of log levels (FailStateEntered,
// TaskFailed, LambdaFunctionFailed, MapIterationAborted, …), with the
// failures of activities and Map Runs and EvaluationFailed, which the
// table predates; OFF nothing. Settings are kept per state machine
// revision (a new logging configuration makes a new revision): the service
// hands each revision's over as it stores it (Writer.Prime), so an
// execution logs as its state machine was configured when it started. A
// revision not handed over (after a restart) is read from the store when
// first needed.
//
// # Flow
//
// The Writer is the engine's Observer. Told of a committed step (with the
// execution's lock held) it only copies the JSON of the events its level
// selects and queues them; when it does not know the state machine's
// configuration yet, it copies them all and lets its goroutine read the
// configuration and select. A full queue drops records and counts them:
// logging never holds an execution up.
//
//	StepCommitted ──► queue (bounded) ──► worker: records, batches by
//	                                      log group and stream
//	                                        │ every FlushInterval, or a
//	                                        │ batch at CloudWatch's limits
//	                                        ▼
//	                                      Sink.Put (retried, then dropped)
//	                                      CloudWatchSink | FileSink
//
// Streams are named as AWS names them, states/<state machine
// name>/<YYYY-MM-DD-HH-MM>/<id>: a stream a minute per state machine and
// server, id being the server's. Close drains the queue and writes what is
// left.
package execlog
