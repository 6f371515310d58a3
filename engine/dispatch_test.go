package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/engine/activity"
	"stepwise/engine/maprunner"
	"stepwise/engine/nested"
	"stepwise/interp"
	"stepwise/maprun"
)

// mockAll mocks every task of a test case.
type mockAll struct{}

func (mockAll) Mocked(*Task) (TaskResult, bool) { return TaskResult{Output: "mocked"}, true }

// callsRunner is a configured runner that also writes results and reads
// items, as integration.Registry does.
type callsRunner struct{ NoIntegrations }

func (callsRunner) WriteResults(context.Context, *Task, func(TaskResult)) {}
func (callsRunner) ReadItems(context.Context, *Task, func(TaskResult))    {}

// The chooser gives each kind of task to its runner, mocks first.
func TestChooserPicksOneRunner(t *testing.T) {
	e := &Engine{cfg: Config{Mocks: mockAll{}}}
	e.nested = nested.New(nil, nested.Config{})
	e.mapRuns = maprunner.New(nil, maprunner.Config{})
	c := newChooser(e, callsRunner{})
	chosen := func(tk *Task) string {
		for _, r := range c.runners {
			if r.Takes(tk) {
				return fmt.Sprintf("%T", r)
			}
		}
		return "none"
	}
	req := func(resource string) *interp.TaskRequest { return &interp.TaskRequest{Resource: resource} }
	activityArn := "arn:aws:states:us-east-1:123456789012:activity:work"
	start := "arn:aws:states:::states:startExecution.sync"
	for name, c := range map[string]struct {
		task *Task
		want string
	}{
		"mocked activity":     {&Task{TestCase: "happy", Request: req(activityArn)}, "engine.mockRunner"},
		"mocked child":        {&Task{TestCase: "happy", Request: req(start)}, "engine.mockRunner"},
		"map run, not mocked": {&Task{TestCase: "happy", Request: &interp.TaskRequest{MapRun: &interp.MapRunRequest{}}}, "*maprunner.Runner"},
		"result write":        {&Task{TestCase: "happy", Request: &interp.TaskRequest{Resource: "arn:aws:states:::s3:putObject", Write: &maprun.Write{}}}, "engine.writeRunner"},
		"item read":           {&Task{TestCase: "happy", Request: &interp.TaskRequest{Resource: "arn:aws:states:::s3:getObject", Reader: &interp.ReaderConfig{}}}, "engine.readRunner"},
		"activity":            {&Task{Request: req(activityArn)}, fmt.Sprintf("%T", activity.Runner{})},
		"child":               {&Task{Request: req(start)}, "*nested.Runner"},
		"a service call":      {&Task{Request: req("arn:aws:states:::sqs:sendMessage")}, "engine.callRunner"},
	} {
		require.Equal(t, c.want, chosen(c.task), name)
	}
}
