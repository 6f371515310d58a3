package sfnapi

// Operations are the Step Functions API's operations (all 37), the names
// that follow "AWSStepFunctions." in X-Amz-Target.
var Operations = []string{
	"CreateActivity", "CreateStateMachine", "CreateStateMachineAlias", "DeleteActivity",
	"DeleteStateMachine", "DeleteStateMachineAlias", "DeleteStateMachineVersion", "DescribeActivity",
	"DescribeExecution", "DescribeMapRun", "DescribeStateMachine", "DescribeStateMachineAlias",
	"DescribeStateMachineForExecution", "GetActivityTask", "GetExecutionHistory", "ListActivities",
	"ListExecutions", "ListMapRuns", "ListStateMachineAliases", "ListStateMachineVersions",
	"ListStateMachines", "ListTagsForResource", "PublishStateMachineVersion", "RedriveExecution",
	"SendTaskFailure", "SendTaskHeartbeat", "SendTaskSuccess", "StartExecution",
	"StartSyncExecution", "StopExecution", "TagResource", "TestState",
	"UntagResource", "UpdateMapRun", "UpdateStateMachine", "UpdateStateMachineAlias",
	"ValidateStateMachineDefinition",
}

var operationSet = func() map[string]bool {
	m := make(map[string]bool, len(Operations))
	for _, op := range Operations {
		m[op] = true
	}
	return m
}()

// IsOperation says whether name is an operation of the Step Functions API.
func IsOperation(name string) bool { return operationSet[name] }
