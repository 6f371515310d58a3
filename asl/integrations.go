package asl

import "strings"

// Optimized integrations
//
// A Task resource in Step Functions' own namespace,
// arn:<partition>:states:::<service>:<action>[<pattern>], names one of the
// optimized integrations AWS offers, or an AWS SDK integration
// (aws-sdk:<service>:<action>). AWS refuses at create time any other: an
// action an optimized integration does not offer (dynamodb:query is only
// reached through aws-sdk:dynamodb:query), or a pattern it does not
// support (sns:publish.sync). The table below is AWS's list of optimized
// integrations with the patterns of each action.

// Integration patterns, as bits.
const (
	patternRequest  = 1 << iota // no suffix: request and response
	patternSync                 // .sync: run a job
	patternSync2                // .sync:2: run a job, JSON output
	patternCallback             // .waitForTaskToken: wait for a callback
)

const (
	rr  = patternRequest
	rrS = patternRequest | patternSync
	rrW = patternRequest | patternCallback
)

// optimized maps each optimized integration's service and action to the
// patterns it supports.
var optimized = map[string]map[string]int{
	"lambda":   {"invoke": rrW},
	"dynamodb": {"getItem": rr, "putItem": rr, "updateItem": rr, "deleteItem": rr},
	"sns":      {"publish": rrW},
	"sqs":      {"sendMessage": rrW},
	"events":   {"putEvents": rrW},
	"states":   {"startExecution": rrS | patternSync2 | patternCallback},
	"ecs":      {"runTask": rrS | patternCallback},
	"batch":    {"submitJob": rrS | patternCallback},
	"glue":     {"startJobRun": rrS},
	"databrew": {"startJobRun": rrS},
	"athena": {
		"startQueryExecution": rrS, "stopQueryExecution": rr, "getQueryExecution": rr, "getQueryResults": rr,
	},
	"codebuild": {
		"startBuild": rrS, "stopBuild": rr, "batchDeleteBuilds": rr, "batchGetReports": rr,
		"startBuildBatch": rrS, "stopBuildBatch": rr, "retryBuildBatch": rrS, "deleteBuildBatch": rr,
	},
	"elasticmapreduce": {
		"createCluster": rrS, "terminateCluster": rrS, "addStep": rrS, "cancelStep": rr,
		"setClusterTerminationProtection": rr, "modifyInstanceFleetByName": rr, "modifyInstanceGroupByName": rr,
	},
	"emr-containers": {"createVirtualCluster": rr, "deleteVirtualCluster": rrS, "startJobRun": rrS},
	"emr-serverless": {
		"createApplication": rrS, "startApplication": rrS, "stopApplication": rrS, "deleteApplication": rrS,
		"startJobRun": rrS, "cancelJobRun": rrS,
	},
	"eks": {
		"runJob": rrS | patternCallback, "call": rrW,
		"createCluster": rrS, "deleteCluster": rrS, "createFargateProfile": rrS, "deleteFargateProfile": rrS,
		"createNodegroup": rrS, "deleteNodegroup": rrS,
	},
	"sagemaker": {
		"createEndpoint": rr, "createEndpointConfig": rr, "createHyperParameterTuningJob": rrS, "createLabelingJob": rrS,
		"createModel": rr, "createProcessingJob": rrS, "createTrainingJob": rrS, "createTransformJob": rrS, "updateEndpoint": rr,
	},
	"apigateway":   {"invoke": rrW},
	"mediaconvert": {"createJob": rrS},
	"bedrock":      {"invokeModel": rrW, "createModelCustomizationJob": rrS | patternCallback},
	"http":         {"invoke": rrW},
}

// splitPattern splits an integration's action from its pattern suffix.
func splitPattern(action string) (string, int) {
	switch {
	case strings.HasSuffix(action, ".sync:2"):
		return strings.TrimSuffix(action, ".sync:2"), patternSync2
	case strings.HasSuffix(action, ".sync"):
		return strings.TrimSuffix(action, ".sync"), patternSync
	case strings.HasSuffix(action, ".waitForTaskToken"):
		return strings.TrimSuffix(action, ".waitForTaskToken"), patternCallback
	}
	return action, patternRequest
}

// knownIntegration reports whether a resource in Step Functions' own
// namespace (what follows "arn:<partition>:states:::") is an integration
// AWS offers.
func knownIntegration(rest string) bool {
	service, action, ok := strings.Cut(rest, ":")
	if !ok || action == "" {
		return false
	}
	if service == "aws-sdk" {
		// aws-sdk:<service>:<action>, request-response or callback.
		svc, act, ok := strings.Cut(action, ":")
		act, pattern := splitPattern(act)
		return ok && svc != "" && act != "" && !strings.Contains(act, ":") && pattern&rrW != 0
	}
	action, pattern := splitPattern(action)
	return optimized[service][action]&pattern != 0
}

// integrationResource returns what follows "arn:<partition>:states:::" in
// a resource of Step Functions' own namespace.
func integrationResource(resource string) (string, bool) {
	parts := strings.SplitN(resource, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" || parts[2] != "states" || parts[3] != "" || parts[4] != "" {
		return "", false
	}
	return parts[5], true
}

// isActivityArn reports whether resource is an activity's ARN:
// arn:<partition>:states:<region>:<account>:activity:<name>.
func isActivityArn(resource string) bool {
	parts := strings.SplitN(resource, ":", 7)
	return len(parts) == 7 && parts[0] == "arn" && parts[2] == "states" && parts[5] == "activity"
}

// TaskState is a Task state of a machine, or of a machine inside it.
type TaskState struct {
	Location string // /States/Name/Resource
	Resource string
}

// Tasks lists the Task states of m and of the machines inside its
// Parallel and Map states, in the order of the definition.
func (m *StateMachine) Tasks() []TaskState {
	var out []TaskState
	var walk func(m *StateMachine, loc string)
	walk = func(m *StateMachine, loc string) {
		if m == nil {
			return
		}
		for _, name := range m.Order {
			st := m.States[name]
			sloc := loc + "/States/" + name
			if st.Type == TypeTask {
				out = append(out, TaskState{Location: sloc + "/Resource", Resource: st.Resource})
			}
			for i, b := range st.Branches {
				walk(b, index(sloc+"/Branches", i))
			}
			walk(st.ItemProcessor, sloc+"/ItemProcessor")
		}
	}
	walk(m, "")
	return out
}

// Find returns the state named name in m or in a machine inside its
// Parallel and Map states (the first in definition order), or nil.
func (m *StateMachine) Find(name string) *State {
	if m == nil {
		return nil
	}
	if st, ok := m.States[name]; ok {
		return st
	}
	for _, n := range m.Order {
		st := m.States[n]
		for _, b := range st.Branches {
			if found := b.Find(name); found != nil {
				return found
			}
		}
		if found := st.ItemProcessor.Find(name); found != nil {
			return found
		}
	}
	return nil
}

// ErrResourceNotRecognized is the diagnostic AWS gives a Task resource it
// does not know, at its location.
func ErrResourceNotRecognized(loc, resource string) Diagnostic { return errResource(loc, resource) }
