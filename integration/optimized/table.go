package optimized

import (
	"stepwise/jsonvalue"
)

// Job statuses shared by several services.
var (
	sageMakerEnded = []string{"Failed", "Stopped"}
	codeBuildEnded = []string{"FAILED", "FAULT", "TIMED_OUT", "STOPPED"}
)

// sageMakerJob is a SageMaker job (kind: Training, Transform, ...) that
// createXJob starts and .sync follows with describeXJob.
func sageMakerJob(kind string) action {
	name := kind + "JobName"
	return action{service: "sagemaker", name: "create" + kind + "Job", model: "sagemaker", op: "create" + kind + "Job", job: &job{
		describe: "describe" + kind + "Job", describeIn: ids(name, "p:"+name),
		status: []any{kind + "JobStatus"}, succeeded: []string{"Completed"}, failed: sageMakerEnded,
		stop: "stop" + kind + "Job",
	}}
}

// plain is a request-response resource calling the operation of its name.
func plain(service, model, name string) action {
	return action{service: service, name: name, model: model, op: name}
}

// emrCluster is how a .sync on an EMR cluster follows it.
func emrCluster(succeeded, failed []string, from string) *job {
	return &job{describe: "describeCluster", describeIn: ids("ClusterId", from),
		status: []any{"Cluster", "Status", "State"}, succeeded: succeeded, failed: failed}
}

// table is every resource served through a service's API model.
var table = []action{
	// Athena
	{service: "athena", name: "startQueryExecution", model: "athena", op: "startQueryExecution", job: &job{
		describe: "getQueryExecution", describeIn: ids("QueryExecutionId", "s:QueryExecutionId"),
		status: []any{"QueryExecution", "Status", "State"}, succeeded: []string{"SUCCEEDED"}, failed: []string{"FAILED", "CANCELLED"},
		stop: "stopQueryExecution",
	}},
	plain("athena", "athena", "stopQueryExecution"),
	plain("athena", "athena", "getQueryExecution"),
	plain("athena", "athena", "getQueryResults"),

	// SageMaker
	sageMakerJob("Training"),
	sageMakerJob("Transform"),
	sageMakerJob("Processing"),
	sageMakerJob("Labeling"),
	sageMakerJob("HyperParameterTuning"),
	plain("sagemaker", "sagemaker", "createModel"),
	plain("sagemaker", "sagemaker", "createEndpoint"),
	plain("sagemaker", "sagemaker", "createEndpointConfig"),
	plain("sagemaker", "sagemaker", "updateEndpoint"),

	// EMR
	{service: "elasticmapreduce", name: "createCluster", model: "emr", op: "runJobFlow",
		out: func(_, a *jsonvalue.Object) *jsonvalue.Object {
			return obj("ClusterArn", member(a, "ClusterArn"), "ClusterId", member(a, "JobFlowId"))
		},
		job: keepStarted(emrCluster([]string{"WAITING", "RUNNING"}, []string{"TERMINATED", "TERMINATED_WITH_ERRORS"}, "s:ClusterId"))},
	{service: "elasticmapreduce", name: "terminateCluster", model: "emr", op: "terminateJobFlows",
		in:  rename("ClusterId", "[JobFlowIds]"),
		job: emrCluster([]string{"TERMINATED"}, []string{"TERMINATED_WITH_ERRORS"}, "p:ClusterId")},
	{service: "elasticmapreduce", name: "addStep", model: "emr", op: "addJobFlowSteps",
		in: rename("ClusterId", "JobFlowId", "Step", "[Steps]"),
		out: func(_, a *jsonvalue.Object) *jsonvalue.Object {
			return obj("StepId", member(a, "StepIds", 0))
		},
		job: &job{describe: "describeStep", describeIn: ids("ClusterId", "p:ClusterId", "StepId", "s:StepId"),
			status: []any{"Step", "Status", "State"}, succeeded: []string{"COMPLETED"}, failed: []string{"FAILED", "CANCELLED", "INTERRUPTED"},
			stop: "cancelSteps", stopIn: ids("ClusterId", "p:ClusterId", "StepIds", "[s:StepId]")}},
	{service: "elasticmapreduce", name: "cancelStep", model: "emr", op: "cancelSteps", in: rename("StepId", "[StepIds]")},
	{service: "elasticmapreduce", name: "setClusterTerminationProtection", model: "emr", op: "setTerminationProtection",
		in: rename("ClusterId", "[JobFlowIds]")},

	// EMR Serverless
	{service: "emr-serverless", name: "createApplication", model: "emr-serverless", op: "createApplication", job: emrApplication("s:ApplicationId", "CREATED")},
	{service: "emr-serverless", name: "startApplication", model: "emr-serverless", op: "startApplication", job: emrApplication("p:ApplicationId", "STARTED")},
	{service: "emr-serverless", name: "stopApplication", model: "emr-serverless", op: "stopApplication", job: emrApplication("p:ApplicationId", "STOPPED")},
	{service: "emr-serverless", name: "deleteApplication", model: "emr-serverless", op: "deleteApplication", job: emrApplication("p:ApplicationId", "TERMINATED")},
	{service: "emr-serverless", name: "startJobRun", model: "emr-serverless", op: "startJobRun", job: &job{
		describe: "getJobRun", describeIn: ids("ApplicationId", "p:ApplicationId", "JobRunId", "s:JobRunId"),
		status: []any{"JobRun", "State"}, succeeded: []string{"SUCCESS"}, failed: []string{"FAILED", "CANCELLED"},
		stop: "cancelJobRun"}},
	{service: "emr-serverless", name: "cancelJobRun", model: "emr-serverless", op: "cancelJobRun", job: &job{
		describe: "getJobRun", describeIn: ids("ApplicationId", "p:ApplicationId", "JobRunId", "p:JobRunId"),
		status: []any{"JobRun", "State"}, succeeded: []string{"CANCELLED"}, failed: []string{"FAILED", "SUCCESS"}}},

	// EMR on EKS
	plain("emr-containers", "emr-containers", "createVirtualCluster"),
	{service: "emr-containers", name: "deleteVirtualCluster", model: "emr-containers", op: "deleteVirtualCluster", job: &job{
		describe: "describeVirtualCluster", describeIn: ids("Id", "p:Id"),
		status: []any{"VirtualCluster", "State"}, succeeded: []string{"TERMINATED"}, failed: []string{"ARRESTED"}, gone: true}},
	{service: "emr-containers", name: "startJobRun", model: "emr-containers", op: "startJobRun", job: &job{
		describe: "describeJobRun", describeIn: ids("VirtualClusterId", "p:VirtualClusterId", "Id", "s:Id"),
		status: []any{"JobRun", "State"}, succeeded: []string{"COMPLETED"}, failed: []string{"FAILED", "CANCELLED"},
		stop: "cancelJobRun"}},

	// CodeBuild
	{service: "codebuild", name: "startBuild", model: "codebuild", op: "startBuild", job: &job{
		describe: "batchGetBuilds", describeIn: ids("Ids", "[s:Build.Id]"),
		status: []any{"Builds", 0, "BuildStatus"}, succeeded: []string{"SUCCEEDED"}, failed: codeBuildEnded,
		stop: "stopBuild", stopIn: ids("Id", "s:Build.Id"),
		result: func(d *jsonvalue.Object) *jsonvalue.Object { return obj("Build", member(d, "Builds", 0)) }}},
	{service: "codebuild", name: "startBuildBatch", model: "codebuild", op: "startBuildBatch", job: &job{
		describe: "batchGetBuildBatches", describeIn: ids("Ids", "[s:BuildBatch.Id]"),
		status: []any{"BuildBatches", 0, "BuildBatchStatus"}, succeeded: []string{"SUCCEEDED"}, failed: codeBuildEnded,
		stop: "stopBuildBatch", stopIn: ids("Id", "s:BuildBatch.Id"),
		result: func(d *jsonvalue.Object) *jsonvalue.Object { return obj("BuildBatch", member(d, "BuildBatches", 0)) }}},
	plain("codebuild", "codebuild", "stopBuild"),
	plain("codebuild", "codebuild", "batchDeleteBuilds"),
	plain("codebuild", "codebuild", "batchGetReports"),
	plain("codebuild", "codebuild", "stopBuildBatch"),
	plain("codebuild", "codebuild", "retryBuildBatch"),
	plain("codebuild", "codebuild", "deleteBuildBatch"),

	// MediaConvert
	{service: "mediaconvert", name: "createJob", model: "mediaconvert", op: "createJob", job: &job{
		describe: "getJob", describeIn: ids("Id", "s:Job.Id"),
		status: []any{"Job", "Status"}, succeeded: []string{"COMPLETE"}, failed: []string{"ERROR", "CANCELED"},
		stop: "cancelJob"}},

	// Glue DataBrew
	{service: "databrew", name: "startJobRun", model: "databrew", op: "startJobRun", job: &job{
		describe: "describeJobRun", describeIn: ids("Name", "p:Name", "RunId", "s:RunId"),
		status: []any{"State"}, succeeded: []string{"SUCCEEDED"}, failed: []string{"FAILED", "STOPPED", "TIMEOUT"},
		stop: "stopJobRun"}},

	// EKS
	{service: "eks", name: "createCluster", model: "eks", op: "createCluster", job: eksJob("describeCluster", []any{"Cluster", "Status"},
		ids("Name", "p:Name"), "ACTIVE", "FAILED", false)},
	{service: "eks", name: "deleteCluster", model: "eks", op: "deleteCluster", job: eksJob("describeCluster", []any{"Cluster", "Status"},
		ids("Name", "p:Name"), "", "FAILED", true)},
	{service: "eks", name: "createNodegroup", model: "eks", op: "createNodegroup", job: eksJob("describeNodegroup", []any{"Nodegroup", "Status"},
		ids("ClusterName", "p:ClusterName", "NodegroupName", "p:NodegroupName"), "ACTIVE", "CREATE_FAILED", false)},
	{service: "eks", name: "deleteNodegroup", model: "eks", op: "deleteNodegroup", job: eksJob("describeNodegroup", []any{"Nodegroup", "Status"},
		ids("ClusterName", "p:ClusterName", "NodegroupName", "p:NodegroupName"), "", "DELETE_FAILED", true)},
	{service: "eks", name: "createFargateProfile", model: "eks", op: "createFargateProfile", job: eksJob("describeFargateProfile", []any{"FargateProfile", "Status"},
		ids("ClusterName", "p:ClusterName", "FargateProfileName", "p:FargateProfileName"), "ACTIVE", "CREATE_FAILED", false)},
	{service: "eks", name: "deleteFargateProfile", model: "eks", op: "deleteFargateProfile", job: eksJob("describeFargateProfile", []any{"FargateProfile", "Status"},
		ids("ClusterName", "p:ClusterName", "FargateProfileName", "p:FargateProfileName"), "", "DELETE_FAILED", true)},

	// Bedrock
	invokeModel,
	{service: "bedrock", name: "createModelCustomizationJob", model: "bedrock", op: "createModelCustomizationJob", job: &job{
		describe: "getModelCustomizationJob", describeIn: ids("JobIdentifier", "s:JobArn"),
		status: []any{"Status"}, succeeded: []string{"Completed"}, failed: []string{"Failed", "Stopped"},
		stop: "stopModelCustomizationJob"}},
}

// keepStarted makes a .sync answer the start's result once the job ends
// well.
func keepStarted(j *job) *job {
	j.keepStarted = true
	return j
}

// emrApplication is how a .sync on an EMR Serverless application waits
// for it to reach a state.
func emrApplication(from, state string) *job {
	failed := []string{"TERMINATED"}
	succeeded := []string{state}
	switch state {
	case "TERMINATED":
		failed = nil
	case "CREATED":
		// An application made with AutoStartConfiguration may be
		// starting, or started, by the time it is first described.
		succeeded = append(succeeded, "STARTING", "STARTED")
	}
	return &job{describe: "getApplication", describeIn: ids("ApplicationId", from),
		status: []any{"Application", "State"}, succeeded: succeeded, failed: failed}
}

// eksJob is how a .sync on an EKS resource waits for it: to be ACTIVE, or
// (gone) deleted.
func eksJob(describe string, status []any, in func(p, s *jsonvalue.Object) *jsonvalue.Object, ok, bad string, gone bool) *job {
	j := &job{describe: describe, describeIn: in, status: status, failed: []string{bad}, gone: gone}
	if ok != "" {
		j.succeeded = []string{ok}
	}
	return j
}
