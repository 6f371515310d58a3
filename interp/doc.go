// Package interp is the pure interpreter of the Amazon States Language.
//
// It is a reducer: given an execution and one event from the outside world
// (the start, a task's result, a timer firing, a stop request) it runs every
// state that needs nothing from outside — Pass, Choice, Succeed, Fail, the
// start and end of Parallel and Map, the bookkeeping of Retry and Catch —
// until the execution is blocked again, and returns the history events it
// wrote and the commands (run a task, arm a timer, cancel one) that the
// caller must carry out. No goroutines, no I/O, no clock: the time of the
// step is passed in.
//
// # Frames
//
// An execution is a tree of frames: the root frame runs the state machine,
// each Parallel branch and each Map iteration runs in a child frame. A frame
// is in one phase at a time:
//
//	         ┌──────────── state done, Next ─────────────┐
//	         ▼                                            │
//	     ┌───────┐   task/timer    ┌─────────┐  result    │
//	───► │ enter │ ──────────────► │ waiting │ ───────────┤
//	     └───────┘                 └─────────┘            │
//	         │  Parallel/Map        ┌──────────┐  all done │
//	         └────────────────────► │ children │ ──────────┘
//	         │                      └──────────┘
//	         │ End / Succeed / Fail / uncaught error
//	         ▼
//	     ┌──────┐
//	     │ done │ ─► parent frame (or the execution) is told
//	     └──────┘
//
// Work inside one step is driven by a stack of small actions (run a frame,
// start the next child of a Map), so a Map of many items needs no deep
// recursion and its history reads as AWS writes it: an iteration's events
// follow its MapIterationStarted.
//
// # History
//
// Events are numbered from 1. Each frame remembers the last event it wrote;
// an event's previousEventId is its frame's last event, which reproduces
// the linkage AWS records (a Map's MapIterationStarted points at the previous
// iteration's last state event, not at its MapIterationSucceeded).
//
// # Tasks
//
// A task is a RunTask command carrying a TaskRequest. Besides the state's
// retry count ($$.State.RetryCount, reset on each entry), the request
// numbers the state's tasks through the execution (Invocation): retries,
// loops back to the state, Map iterations and Parallel branches all take
// the next number, one count per state name. The count is part of the
// execution, so a replay numbers the tasks the same; mocked responses are
// chosen by it, as Step Functions Local chooses them.
//
// # Query languages
//
// JSONPath states run InputPath → Parameters → ResultSelector → ResultPath
// → OutputPath (package dataflow). JSONata states (jsonata.go) evaluate
// Arguments and then Output and Assign, against $states.input, the result
// ($states.result) or the error ($states.errorOutput, in a Catch) and the
// variables as they were before the state; both kinds share the exit,
// Retry and Catch machinery.
//
// # Inspection
//
// The TestState operation runs one state on this interpreter: under an
// Inspection (inspect.go) an Inspector is told what each step of the data
// flow produced (after InputPath, Parameters or Arguments, the result,
// after ResultSelector and ResultPath, a Map's items and counts), which
// retrier or catcher handled a failure and how the state exited, and it
// stands for the branches and iterations of Parallel and Map states. The
// context object, the variables and the retries already made are given.
//
// # Stopping
//
// When a Parallel branch or Map iteration fails, the frames still running
// beside it are cancelled: their tasks and timers are cancelled and each
// state still in progress writes its aborted event (TaskStateAborted,
// WaitStateAborted, ...; a Map iteration MapIterationAborted first), all
// linked to the event that failed the branch, as AWS records them. A Task
// state whose failure ended its branch or iteration writes
// TaskStateAborted too, right after the failure (a Map: after
// MapIterationFailed), as AWS tears the branch down. A stopped execution
// cancels everything too, but as AWS records it writes only
// ExecutionAborted, linked to no event.
package interp
