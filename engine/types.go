package engine

import (
	"stepwise/asl"
	"stepwise/engine/activity"
	"stepwise/interp"
	"stepwise/store"
)

// The types the engine exchanges with the service above it. The service
// declares its Engine interface over them.

// ActivityTask is an activity task handed to a worker (package activity).
type ActivityTask = activity.Handout

// StartParams describe a new execution.
type StartParams struct {
	StateMachine *store.StateMachine
	Machine      *asl.StateMachine // the parsed current revision
	ExecutionArn string
	Name         string
	Input        string // JSON text as the client sent it ("{}" when absent)
	// InputValue is Input parsed, when InputParsed is set (a caller that
	// validated the input passes what it parsed); otherwise the engine
	// parses Input itself.
	InputValue  any
	InputParsed bool
	TraceHeader string
	// TestCase names the mock test case the execution runs with (started
	// as "<stateMachineArn>#<TestCase>"): the task runner answers its
	// tasks from the mock configuration. "" for a real run.
	TestCase string
	// VersionArn is the version the execution runs when it was started on
	// a version or an alias (StateMachine then holds that version's
	// revision); AliasArn the alias. Both are recorded in its row.
	VersionArn string
	AliasArn   string
	// MapRunArn is the map run that starts the execution (a child of a
	// distributed Map), recorded in its row.
	MapRunArn string
	// Policies are the failure policies of the execution's states, from
	// its state machine's tags (interp.PoliciesFromTags); recorded in its
	// row, so that it keeps them however the tags change.
	Policies interp.Policies
}

// SyncResult is the end of a synchronous (EXPRESS) execution.
type SyncResult struct {
	Execution *store.Execution // never stored; StopDate and status set
	// BilledDurationMillis and BilledMemoryMB are the billingDetails AWS
	// reports.
	BilledDurationMillis int64
	BilledMemoryMB       int64
}
