// Package workflowtest runs test cases of workflows: `stepwise test`.
//
// A test file (JSON, *.test.json, or YAML, *.test.yaml / *.test.yml)
// names a definition and holds cases:
//
//	{
//	  "definition": "hello.asl.json",
//	  "stateMachine": "hello",
//	  "mockConfig": "mocks.json",
//	  "mocks": {"Charge": {"Return": {"StatusCode": 200, "Payload": {"ok": true}}}},
//	  "startTime": "2025-06-30T00:00:00Z",
//	  "cases": [
//	    {
//	      "name": "morning",
//	      "input": {"name": "Ada", "hour": 9},
//	      "testCase": "HappyPath",
//	      "mocks": {"Charge": [{"Throw": {"Error": "Busy", "Cause": "try again"}}, {"Return": {"Payload": 1}}]},
//	      "expect": {
//	        "status": "SUCCEEDED",
//	        "output": {"greeting": "Hello, Ada!", "hour": 9, "note": "Good morning"},
//	        "outputContains": {"note": "Good morning"},
//	        "error": "States.TaskFailed", "cause": "...", "causeContains": "...",
//	        "path": ["Greet", "TimeOfDay", "Morning"],
//	        "pathContains": ["Greet", "Morning"]
//	      }
//	    }
//	  ]
//	}
//
// File members:
//
//   - definition (required): the definition's path, relative to the test
//     file (a .yaml or .yml definition is read as YAML), or the
//     definition itself, inline (as recordings write it).
//   - stateMachine: the state machine's name, what test cases of the
//     mock configuration are looked up under and what $$.StateMachine.Name
//     says; by default the definition's file name without its extensions,
//     as `stepwise run` has it.
//   - mockConfig: a mock configuration in Step Functions Local's
//     MockConfigFile format (StateMachines, MockedResponses; package
//     integration/mock), as a path relative to the test file or inline.
//     Cases pick one of its test cases with testCase.
//   - mocks: mocked Task responses by state name, the format of
//     `stepwise run --mock`: {"State": {"Return": <output>}} or
//     {"State": {"Throw": {"Error": "...", "Cause": "..."}}}, or an array
//     of those used one per invocation of the state (the last again after
//     them); a path or inline. They answer the states for every case.
//   - startTime: the executions' start (RFC 3339); by default the time of
//     the run.
//   - cases (required): the cases, each with a name unique in the file.
//
// Case members: name (required); input (any JSON value, default {}) or
// inputFile (a path); testCase; mocks (as above, over the file's mocks
// state by state); startTime; expect. A Task state is answered from the
// case's mocks, then its test case of the mock configuration, then the
// file's mocks. A Task state none of them answers (or a Map's ItemReader)
// fails its case, naming the state: nothing outside is ever called.
//
// Mock configurations and mocks arrays number a state's responses alike,
// by its invocations in the execution as Step Functions Local does
// (interp.TaskRequest.Invocation): from 0, each retry, each loop back to
// the state and each Map iteration or Parallel branch that runs it taking
// the next number. A mock configuration's response without an answer for
// an invocation fails the execution with States.Runtime.
//
// A response in a mocks array may give "Input" (a Stepwise extension):
// the task input (its parameters, evaluated) it answers. When a state's
// responses give it, each task of the state is answered by the first
// response of its execution not yet used whose Input equals the task's
// input (a string that is the task's own token, $$.Task.Token, matches
// any string), not by its invocation number: the invocation order of
// concurrent Map iterations and Parallel branches differs from run to
// run, their inputs do not. Retries of one input take its responses in
// order. {"Input": ..., "Pending": true} is a task that does not end
// (it was still running when the recorded execution ended).
//
// Expectations, all optional; every one given must hold:
//
//   - status: SUCCEEDED, FAILED, TIMED_OUT or ABORTED; by default FAILED
//     when error, cause or causeContains is given, SUCCEEDED otherwise.
//   - output: the exact output (objects whatever their members' order,
//     numbers by value).
//   - outputContains: a part of the output: objects match member by member,
//     recursively (members not given are not looked at); arrays element by
//     element, and must be as long; other values exactly.
//   - error, cause: the failure's error and cause, exactly; causeContains
//     a part of the cause.
//   - path: the exact sequence of the top-level states entered (a loop's
//     states as often as they were entered; the states inside a Parallel
//     or Map are not listed); pathContains: states that must be entered in
//     that order, not necessarily one right after the other.
//
// State names in mocks, path and pathContains are checked against the
// definition when the file is loaded, as are unknown members, test cases
// the mock configuration lacks and the definition itself: such a file
// cannot run (a FileError).
//
// # Running
//
// Each case runs in-process on interp.Driver exactly as `stepwise run`
// runs a definition (Exec), in virtual time: timers fire in the order of
// their deadlines and the clock jumps to each, so a Wait of three days or
// a retry's back-off takes no real time, and history timestamps show the
// time that passed. A distributed Map's children run in-process too.
//
// The report reads like `go test -v`: "--- FAIL: <file>/<case> (0.00s)"
// with the first difference ("output.items[2]: expected 3, got 4",
// "path: expected [A B C], got [A B D] (...)") and what the execution
// did, "--- PASS: ..." for passing cases when verbose, and the closing
// line "N passed, N failed". WriteJUnit writes JUnit XML.
//
// # Recording and replaying
//
// Record makes a test file of an execution from what the Step Functions
// API says of it (DescribeStateMachineForExecution's definition,
// GetExecutionHistory's events, and the histories of its distributed
// Maps' child executions): the definition inline, one case named after
// the execution with its input and start, "mocks" holding every task's
// result or error with its input (from TaskScheduled's parameters,
// LambdaFunctionScheduled's and ActivityScheduled's input; a callback's
// or an activity's answer, a nested execution's result as the .sync task
// returned it), and "expect" with the status, the output or the error and
// cause, and the path. Of a redriven execution, its latest run is
// recorded, or the one Source.Run names, and the case's name says which
// ("night-1, run 2 of 2"); an execution stopped from outside is not.
//
// Replay runs a recorded case on its own definition (it must pass) and on
// an edited one, and compares the histories entry by entry: each state
// entered is matched to a recorded entry into the same state with the
// same input, then its output and the state it went on to are compared.
// The first difference is the divergence: a state's input or output, a
// Choice (or any state) that went elsewhere, a state the recording never
// entered (a Task there "has no recorded result"), a recorded state not
// entered, or the execution's end. The children of a distributed Map run
// in the replay but are compared through the Map's output.
//
// # Coverage
//
// Coverage counts, per definition over all its cases, the states entered
// (at every depth) and the Choice rules and Defaults taken, with the
// percentages and what was never entered or taken. A rule is known by the
// state its Choice went to next, so rules sharing a Next are counted
// together; the states of a distributed Map's item processor run in child
// executions whose histories are not kept, and are left out.
package workflowtest
