package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/engine/activity"
	"stepwise/engine/maprun"
	"stepwise/engine/nested"
	"stepwise/engine/task"
	"stepwise/interp"
	rules "stepwise/interp/maprun"
)

// mockAll mocks every task of a test case.
type mockAll struct{}

func (mockAll) Mocked(*task.Task) (task.Result, bool) { return task.Result{Output: "mocked"}, true }

// callsRunner is a configured runner that also writes results and reads
// items, as integration.Registry does.
type callsRunner struct{ task.NoIntegrations }

func (callsRunner) WriteResults(context.Context, *task.Task, func(task.Result)) {}
func (callsRunner) ReadItems(context.Context, *task.Task, func(task.Result))    {}

// The chooser gives each kind of task to its runner, mocks first.
func TestChooserPicksOneRunner(t *testing.T) {
	e := &Engine{cfg: Config{Mocks: mockAll{}}}
	e.nested = nested.New(nil, nested.Config{})
	e.mapRuns = maprun.New(nil, maprun.Config{})
	c := newChooser(e, callsRunner{})
	chosen := func(tk *task.Task) string {
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
		task *task.Task
		want string
	}{
		"mocked activity":     {&task.Task{TestCase: "happy", Request: req(activityArn)}, "engine.mockRunner"},
		"mocked child":        {&task.Task{TestCase: "happy", Request: req(start)}, "engine.mockRunner"},
		"map run, not mocked": {&task.Task{TestCase: "happy", Request: &interp.TaskRequest{MapRun: &interp.MapRunRequest{}}}, "*maprun.Runner"},
		"result write":        {&task.Task{TestCase: "happy", Request: &interp.TaskRequest{Resource: "arn:aws:states:::s3:putObject", Write: &rules.Write{}}}, "engine.writeRunner"},
		"item read":           {&task.Task{TestCase: "happy", Request: &interp.TaskRequest{Resource: "arn:aws:states:::s3:getObject", Reader: &interp.ReaderConfig{}}}, "engine.readRunner"},
		"activity":            {&task.Task{Request: req(activityArn)}, fmt.Sprintf("%T", &activity.Runner{})},
		"child":               {&task.Task{Request: req(start)}, "*nested.Runner"},
		"a service call":      {&task.Task{Request: req("arn:aws:states:::sqs:sendMessage")}, "engine.callRunner"},
	} {
		require.Equal(t, c.want, chosen(c.task), name)
	}
}
