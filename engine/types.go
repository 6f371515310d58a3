package engine

import (
	"stepwise/engine/activity"
	"stepwise/engine/start"
)

// The types the engine exchanges with the service above it. The service
// declares its Engine interface over them.

// ActivityTask is an activity task handed to a worker (package activity).
type ActivityTask = activity.Handout

// StartParams describe a new execution, as the Starter (package start,
// the one way in) builds them.
type StartParams = start.Params

// SyncResult is the end of a synchronous (EXPRESS) execution.
type SyncResult = start.SyncResult
