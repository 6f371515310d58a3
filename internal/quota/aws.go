package quota

import (
	"maps"
	"stepwise/sfnapi"
)

// awsDefaults are AWS Step Functions' default throttling quotas for
// STANDARD workflows in US East (N. Virginia) (the same in US West
// (Oregon) and Europe (Ireland); the other regions' are smaller), as token
// buckets, from "Step Functions service quotas",
// https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html:
// "Quotas related to state throttling" (StateTransition) and "Quotas
// related to API action throttling" (the operations).
//
// StartSyncExecution has no quota there (AWS scales it on demand), nor
// have the operations the page does not list; they are not throttled.
// EXPRESS state transitions are unlimited, and StartExecution of an EXPRESS
// state machine has a larger quota (6,000/6,000) that a quota per
// operation cannot tell apart: the STANDARD one applies. TestState is
// 50/10 in the page's table (an earlier version said 1 TPS).
var awsDefaults = map[string]Limit{
	StateTransition: {Bucket: 5000, Refill: 5000},

	"StartExecution":    {Bucket: 1300, Refill: 300},
	"RedriveExecution":  {Bucket: 1300, Refill: 300},
	"StopExecution":     {Bucket: 1000, Refill: 200},
	"GetActivityTask":   {Bucket: 3000, Refill: 500},
	"SendTaskFailure":   {Bucket: 3000, Refill: 500},
	"SendTaskHeartbeat": {Bucket: 3000, Refill: 500},
	"SendTaskSuccess":   {Bucket: 3000, Refill: 500},

	"DescribeExecution":                {Bucket: 300, Refill: 15},
	"DescribeStateMachine":             {Bucket: 200, Refill: 20},
	"DescribeStateMachineForExecution": {Bucket: 200, Refill: 1},
	"DescribeStateMachineAlias":        {Bucket: 200, Refill: 1},
	"DescribeActivity":                 {Bucket: 200, Refill: 1},
	"DescribeMapRun":                   {Bucket: 200, Refill: 1},
	"GetExecutionHistory":              {Bucket: 400, Refill: 20},
	"ListExecutions":                   {Bucket: 200, Refill: 5},
	"ListStateMachines":                {Bucket: 100, Refill: 5},
	"ListActivities":                   {Bucket: 100, Refill: 10},
	"ListMapRuns":                      {Bucket: 100, Refill: 1},
	"ListStateMachineAliases":          {Bucket: 100, Refill: 1},
	"ListStateMachineVersions":         {Bucket: 100, Refill: 1},
	"ListTagsForResource":              {Bucket: 100, Refill: 1},

	"CreateActivity":                 {Bucket: 100, Refill: 1},
	"CreateStateMachine":             {Bucket: 100, Refill: 1},
	"CreateStateMachineAlias":        {Bucket: 100, Refill: 1},
	"DeleteActivity":                 {Bucket: 100, Refill: 1},
	"DeleteStateMachine":             {Bucket: 100, Refill: 1},
	"DeleteStateMachineAlias":        {Bucket: 100, Refill: 1},
	"DeleteStateMachineVersion":      {Bucket: 100, Refill: 1},
	"PublishStateMachineVersion":     {Bucket: 100, Refill: 1},
	"UpdateMapRun":                   {Bucket: 100, Refill: 1},
	"UpdateStateMachine":             {Bucket: 100, Refill: 1},
	"UpdateStateMachineAlias":        {Bucket: 100, Refill: 1},
	"ValidateStateMachineDefinition": {Bucket: 100, Refill: 1},
	"TagResource":                    {Bucket: 200, Refill: 1},
	"UntagResource":                  {Bucket: 200, Refill: 1},
	"TestState":                      {Bucket: 50, Refill: 10},
}

// AWS returns AWS's default quotas (see awsDefaults), a copy the caller
// may change.
func AWS() map[string]Limit {
	return maps.Clone(awsDefaults)
}

// IsOperation reports whether name is a Step Functions API operation.
func IsOperation(name string) bool { return sfnapi.IsOperation(name) }
