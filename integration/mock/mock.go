// Package mock answers the Task states of executions started with a test
// case from a mock configuration in the format of AWS Step Functions
// Local's MockConfigFile:
//
//	{"StateMachines": {"<state machine name>": {"TestCases": {"<test case>": {"<state>": "<response>"}}}},
//	 "MockedResponses": {"<response>": {"0": {"Return": <output>}, "1-2": {"Throw": {"Error": "...", "Cause": "..."}}}}}
//
// An execution runs a test case when it is started as
// "<stateMachineArn>#<TestCase>". Each Task state the test case names is
// answered from its response instead of calling anything, Return as the
// task's result, Throw as its failure. The history is what the call would
// have written. States the test case does not name run for real.
//
// # Invocations
//
// A response's keys number the invocations of the mocked state in the
// execution ("0" the first, "1-2" the second and third), as Step Functions
// Local numbers them: every task the state runs counts, so a retry takes
// the next number, and so does each pass of a loop back to the state and
// each Map iteration or Parallel branch that runs it (one count per state
// name, shared by them all, in the order their tasks start: with a Map's
// MaxConcurrency above 1 that order follows the items' progress). The
// count goes on after a redrive. A distributed Map's children are
// executions of their own and count their own invocations. The number is
// the interpreter's (interp.TaskRequest.Invocation), so a replayed
// execution gets the same answers.
//
// An invocation the response has no answer for fails the execution with
// States.Runtime, which no Retry or Catch handles, naming the state and the
// invocation: Step Functions Local fails the execution when a mocked state
// runs out of responses.
package mock

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"stepwise/awsarn"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/internal/boundedfile"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// EnvFile names the environment variable Step Functions Local reads the
// mock configuration's path from.
const EnvFile = "SFN_MOCK_CONFIG"

// Config is a parsed mock configuration.
type Config struct {
	// cases maps a state machine's name and a test case to the response
	// of each mocked state.
	cases     map[string]map[string]map[string]*Response
	responses map[string]*Response
}

// Response is a mocked response: what each invocation gets.
type Response struct {
	Name    string
	entries []entry // in order of their first invocation
}

type entry struct {
	from, to int // invocations, inclusive
	output   any
	failure  *failure.Failure
}

var _ task.Mocks = (*Config)(nil)

// MaxFileSize bounds a mock configuration file: only a regular file is
// read, at most this much.
const MaxFileSize = 32 << 20

// Load reads a mock configuration file.
func Load(path string) (*Config, error) {
	data, err := boundedfile.Read(context.Background(), path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("mock configuration: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("mock configuration %s: %w", path, err)
	}
	return c, nil
}

// Parse reads a mock configuration, naming the first thing wrong in it.
func Parse(data []byte) (*Config, error) {
	v, err := jsonvalue.Parse(data)
	if err != nil {
		return nil, err
	}
	root, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, fmt.Errorf("must be a JSON object")
	}
	c := &Config{cases: map[string]map[string]map[string]*Response{}, responses: map[string]*Response{}}
	for key := range root.All() {
		if key != "StateMachines" && key != "MockedResponses" {
			return nil, fmt.Errorf("%s: unknown member (StateMachines and MockedResponses are)", key)
		}
	}
	responses, err := object(root, "MockedResponses")
	if err != nil {
		return nil, err
	}
	for name, rv := range responses.All() {
		r, err := parseResponse(name, rv)
		if err != nil {
			return nil, err
		}
		c.responses[name] = r
	}
	machines, err := object(root, "StateMachines")
	if err != nil {
		return nil, err
	}
	for sm, mv := range machines.All() {
		body, ok := mv.(*jsonvalue.Object)
		if !ok {
			return nil, fmt.Errorf("StateMachines.%s: must be an object", sm)
		}
		tcs, err := object(body, "TestCases")
		if err != nil {
			return nil, fmt.Errorf("StateMachines.%s: %w", sm, err)
		}
		c.cases[sm] = map[string]map[string]*Response{}
		for tc, tv := range tcs.All() {
			states, ok := tv.(*jsonvalue.Object)
			if !ok {
				return nil, fmt.Errorf("StateMachines.%s.TestCases.%s: must be an object", sm, tc)
			}
			c.cases[sm][tc] = map[string]*Response{}
			for state, nv := range states.All() {
				name, ok := nv.(string)
				if !ok {
					return nil, fmt.Errorf("StateMachines.%s.TestCases.%s.%s: must name a mocked response", sm, tc, state)
				}
				r := c.responses[name]
				if r == nil {
					return nil, fmt.Errorf("StateMachines.%s.TestCases.%s.%s: no mocked response %q in MockedResponses", sm, tc, state, name)
				}
				c.cases[sm][tc][state] = r
			}
		}
	}
	return c, nil
}

// object returns a member that must be an object (empty when absent).
func object(o *jsonvalue.Object, key string) (*jsonvalue.Object, error) {
	v, ok := o.Get(key)
	if !ok {
		return jsonvalue.NewObject(0), nil
	}
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, fmt.Errorf("%s: must be an object", key)
	}
	return obj, nil
}

// parseResponse reads one mocked response: invocations ("0", "1-2") to
// a Return or a Throw.
func parseResponse(name string, v any) (*Response, error) {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, fmt.Errorf("MockedResponses.%s: must be an object", name)
	}
	r := &Response{Name: name}
	for key, ev := range obj.All() {
		at := fmt.Sprintf("MockedResponses.%s.%s", name, key)
		from, to, err := invocations(key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		e := entry{from: from, to: to}
		body, ok := ev.(*jsonvalue.Object)
		if !ok || body.Len() != 1 {
			return nil, fmt.Errorf("%s: must be an object with one member, Return or Throw", at)
		}
		if out, ok := body.Get("Return"); ok {
			e.output = out
		} else if t, ok := body.Get("Throw"); ok {
			if e.failure, err = throw(t); err != nil {
				return nil, fmt.Errorf("%s.Throw: %w", at, err)
			}
		} else {
			return nil, fmt.Errorf("%s: must be an object with one member, Return or Throw", at)
		}
		for _, other := range r.entries {
			if e.from <= other.to && other.from <= e.to {
				return nil, fmt.Errorf("%s: overlaps invocations %d-%d", at, other.from, other.to)
			}
		}
		r.entries = append(r.entries, e)
	}
	sort.Slice(r.entries, func(i, j int) bool { return r.entries[i].from < r.entries[j].from })
	return r, nil
}

// invocations reads "N" or "N-M".
func invocations(key string) (int, int, error) {
	a, b, isRange := strings.Cut(key, "-")
	from, err := strconv.Atoi(a)
	if err != nil || from < 0 {
		return 0, 0, fmt.Errorf("not an invocation number or a range of them (\"0\", \"1-2\")")
	}
	if !isRange {
		return from, from, nil
	}
	to, err := strconv.Atoi(b)
	if err != nil || to < from {
		return 0, 0, fmt.Errorf("not an invocation number or a range of them (\"0\", \"1-2\")")
	}
	return from, to, nil
}

// throw reads {"Error": "...", "Cause": "..."}.
func throw(v any) (*failure.Failure, error) {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, fmt.Errorf("must be an object with Error and Cause")
	}
	fl := &failure.Failure{}
	for key, fv := range obj.All() {
		s, ok := fv.(string)
		if !ok {
			return nil, fmt.Errorf("%s: must be a string", key)
		}
		switch key {
		case "Error":
			fl.Name = s
		case "Cause":
			fl.Cause, fl.HasCause = s, true
		default:
			return nil, fmt.Errorf("%s: unknown member (Error and Cause are)", key)
		}
	}
	return fl, nil
}

// HasTestCase reports whether the configuration defines a test case for
// the state machine of that name.
func (c *Config) HasTestCase(stateMachine, testCase string) bool {
	_, ok := c.cases[stateMachine][testCase]
	return ok
}

// Mocked answers a task of an execution that runs a test case, when the
// test case mocks its state: by the task's invocation of the state.
func (c *Config) Mocked(t *task.Task) (task.Result, bool) {
	r := c.cases[machineName(t.StateMachineArn)][t.TestCase][t.Request.StateName]
	if r == nil {
		return task.Result{}, false
	}
	n := t.Request.Invocation
	for _, e := range r.entries {
		if n < e.from || n > e.to {
			continue
		}
		if e.failure != nil {
			fl := *e.failure
			return task.Result{Failure: &fl}, true
		}
		return task.Result{Output: result(t.Request.Resource, e.output)}, true
	}
	return task.Result{Failure: failure.Newf(failure.Runtime,
		"The mocked response %s has no answer for invocation %d of state '%s' in test case %s (invocations count from 0, retries included).",
		r.Name, n, t.Request.StateName, t.TestCase)}, true
}

// result is the task result a mocked Return stands for. Lambda mocks are
// written as lambda:invoke answers ({"StatusCode": 200, "Payload": ...});
// a Task whose resource is a function's ARN gets the payload alone, as it
// would from the function.
func result(resource string, output any) any {
	output = jsonvalue.DeepCopy(output)
	if obj, ok := output.(*jsonvalue.Object); ok && interp.IsLambdaFunction(resource) {
		if payload, ok := obj.Get("Payload"); ok {
			return payload
		}
	}
	return output
}

// machineName is the name in a state machine's ARN
// (arn:<partition>:states:<region>:<account>:stateMachine:<name>[:<version or alias>]).
//
// The children of a distributed Map run on <name>/<label>: they take the
// test case of their parent's state machine.
func machineName(arn string) string {
	name, _, _ := strings.Cut(awsarn.StateMachineName(arn), "/")
	return name
}
