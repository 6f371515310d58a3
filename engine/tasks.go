package engine

import "stepwise/engine/task"

// The task runners' seam is package task's, named here again for the
// engine's users.
type (
	Task           = task.Task
	TaskResult     = task.Result
	TaskRunner     = task.Runner
	KindRunner     = task.KindRunner
	Mocks          = task.Mocks
	NoIntegrations = task.NoIntegrations
	ItemStreamer   = task.ItemStreamer
	ResultWriter   = task.ResultWriter
	ItemReader     = task.ItemReader
)
