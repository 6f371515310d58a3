package console

import "time"

// FileTriggerView is a file-arrival trigger on the schedules page: where
// it looks, what it starts, and the last files it started.
type FileTriggerView struct {
	Name string
	// Watched is the folder, or s3://bucket/prefix.
	Watched         string
	Pattern         string
	StateMachineArn string
	State           string // ENABLED or DISABLED
	Started         []FileStartView
}

// FileStartView is a file a trigger started an execution for.
type FileStartView struct {
	// File is the file as the trigger knows it: its path, size and
	// modification time, or its s3://bucket/key, ETag and size.
	File         string
	ExecutionArn string
	StartedAt    time.Time
}
