package workflowtest

import (
	"fmt"
	"regexp"
	"time"

	"stepwise/asl"
	"stepwise/awsarn"
	"stepwise/history"
	"stepwise/interp"
)

// The region, account and role of in-process runs.
const (
	Region  = "us-east-1"
	Account = "123456789012"
	RoleArn = "arn:aws:iam::123456789012:role/stepwise"
)

// Exec is one execution of a definition in-process on interp.Driver, in
// virtual time: what `stepwise run` and `stepwise test` both do. Timers
// fire in the order of their deadlines and the clock jumps to each, so a
// Wait of days takes no real time unless Sleep waits for it.
type Exec struct {
	Machine          *asl.StateMachine
	StateMachineName string
	ExecutionName    string
	Input            any
	// InputText is the input as written (ExecutionStarted records it);
	// empty means the compact form of Input.
	InputText    string
	Start        time.Time
	Resolver     interp.Resolver
	PayloadLimit int
	// MaxSteps bounds the steps (a guard against endless loops); an
	// execution still running after them ends RUNNING with a
	// States.Runtime error.
	MaxSteps int
	// Sleep, when set, is called with the virtual time each timer skips.
	Sleep func(time.Duration)
	// Halt, when set, is asked after each step whether to stop there.
	Halt func() bool
	// Now, when set, is the clock of tasks that take real time (see
	// interp.Driver.Now).
	Now func() time.Time
}

// Outcome is how an Exec ended.
type Outcome struct {
	Status history.ExecutionStatus
	// Output is the execution's output when it SUCCEEDED.
	Output any
	// Error and Cause are the failure's, nil when absent.
	Error, Cause *string
	Events       []*history.Event
	Execution    *interp.Execution
	// Children are the histories of its distributed Maps' child
	// executions, in the order they ended.
	Children [][]*history.Event
}

// where is where in-process state machines and executions live.
var where = awsarn.Prefix{Partition: "aws", Region: Region, Account: Account}

// StateMachineArn is the ARN of an in-process state machine.
func StateMachineArn(name string) string {
	return where.StateMachine(name)
}

var nameCleaner = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// CleanName makes a state machine or execution name of any text.
func CleanName(s string) string {
	s = nameCleaner.ReplaceAllString(s, "-")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

// Run runs the execution to its end (or MaxSteps, or Halt).
func (e *Exec) Run() *Outcome {
	info := interp.Info{
		ExecutionArn:     where.Execution(e.StateMachineName, e.ExecutionName),
		Name:             e.ExecutionName,
		RoleArn:          RoleArn,
		StartTime:        e.Start,
		StateMachineArn:  StateMachineArn(e.StateMachineName),
		StateMachineName: e.StateMachineName,
		Region:           Region,
		Account:          Account,
	}
	x := interp.New(e.Machine, info, e.Input, interp.Options{PayloadLimit: e.PayloadLimit})
	x.InputText = e.InputText
	var children [][]*history.Event
	d := &interp.Driver{Resolver: e.Resolver, MaxSteps: e.MaxSteps, Sleep: e.Sleep, Halt: e.Halt, Now: e.Now,
		Child: func(_ *interp.Execution, events []*history.Event) { children = append(children, events) }}
	events := d.Run(x, e.Start)
	o := &Outcome{Status: x.Status, Events: events, Execution: x, Children: children}
	if x.Status == history.StatusRunning {
		o.Error = ptr("States.Runtime")
		o.Cause = ptr(fmt.Sprintf("the execution did not end within %d steps", e.MaxSteps))
	}
	if x.Status == history.StatusSucceeded {
		o.Output = x.Output
	}
	if fl := x.Failure; fl != nil {
		if fl.Name != "" {
			o.Error = ptr(fl.Name)
		}
		if fl.HasCause {
			o.Cause = ptr(fl.Cause)
		}
	}
	return o
}

func ptr[T any](v T) *T { return &v }
