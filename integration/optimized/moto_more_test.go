package optimized_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/failure"
	"stepwise/integration/integrationtest"
	"stepwise/jsonvalue"
	"stepwise/server/servertest"
)

// emrServerlessJob is a job run's request on an application.
func emrServerlessJob(app string) string {
	return `{"ApplicationId": "` + app + `", "ExecutionRoleArn": "arn:aws:iam::123456789012:role/r",
		"JobDriver": {"SparkSubmit": {"EntryPoint": "s3://code/job.py"}}}`
}

// An EMR Serverless application is created, runs a job, stops and is
// deleted, each .sync waiting for the state it asks for; a job on a
// deleted application fails with the service's error.
func TestMoto_EMRServerless(t *testing.T) {
	t.Parallel()
	reg := motoRegistry(t)
	created := ok(t, reg, res+"emr-serverless:createApplication.sync", `{"Name": "a1", "ReleaseLabel": "emr-6.15.0", "Type": "SPARK"}`)
	require.Contains(t, []any{"CREATED", "STARTED"}, integrationtest.Member(t, created, "Application", "State"))
	app := integrationtest.Member(t, created, "Application", "ApplicationId").(string)

	ok(t, reg, res+"emr-serverless:startApplication.sync", `{"ApplicationId": "`+app+`"}`)
	run := ok(t, reg, res+"emr-serverless:startJobRun.sync", emrServerlessJob(app))
	require.Equal(t, "SUCCESS", integrationtest.Member(t, run, "JobRun", "State"))

	stopped := ok(t, reg, res+"emr-serverless:stopApplication.sync", `{"ApplicationId": "`+app+`"}`)
	require.Equal(t, "STOPPED", integrationtest.Member(t, stopped, "Application", "State"))
	deleted := ok(t, reg, res+"emr-serverless:deleteApplication.sync", `{"ApplicationId": "`+app+`"}`)
	require.Equal(t, "TERMINATED", integrationtest.Member(t, deleted, "Application", "State"))

	r := integrationtest.Call(t, reg, res+"emr-serverless:startJobRun.sync", emrServerlessJob(app))
	require.NotNil(t, r.Failure)
	require.Regexp(t, `^EmrServerless\.`, r.Failure.Name, "%s", r.Failure.Cause)
}

// An EMR on EKS job run that is cancelled while its .sync waits fails the
// task with States.TaskFailed and the job's description; a virtual
// cluster's deletion is waited for.
func TestMoto_EMRContainers(t *testing.T) {
	t.Parallel()
	reg := motoRegistry(t)
	vc := ok(t, reg, res+"emr-containers:createVirtualCluster", `{"Name": "vc1",
		"ContainerProvider": {"Id": "eks1", "Type": "EKS", "Info": {"EksInfo": {"Namespace": "default"}}}}`)
	id := integrationtest.Member(t, vc, "Id").(string)

	waiting := integrationtest.Start(t, reg, res+"emr-containers:startJobRun.sync", `{"Name": "j1", "VirtualClusterId": "`+id+`",
		"ExecutionRoleArn": "arn:aws:iam::123456789012:role/r", "ReleaseLabel": "emr-6.15.0-latest",
		"JobDriver": {"SparkSubmitJobDriver": {"EntryPoint": "s3://code/job.py"}}}`)
	var runID string
	require.Eventually(t, func() bool {
		runs := ok(t, reg, res+"aws-sdk:emrcontainers:listJobRuns", `{"VirtualClusterId": "`+id+`"}`)
		list, _ := runs.Get("JobRuns")
		if l, isList := list.([]any); isList && len(l) == 1 {
			runID = integrationtest.Member(t, l[0], "Id").(string)
			return true
		}
		return false
	}, 10*time.Second, 20*time.Millisecond)
	select {
	case r := <-waiting:
		t.Fatalf("the .sync ended while its job runs: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
	ok(t, reg, res+"aws-sdk:emrcontainers:cancelJobRun", `{"VirtualClusterId": "`+id+`", "Id": "`+runID+`"}`)
	select {
	case r := <-waiting:
		require.NotNil(t, r.Failure)
		require.Equal(t, failure.TaskFailed, r.Failure.Name)
		cause, err := jsonvalue.ParseString(r.Failure.Cause)
		require.NoError(t, err)
		require.Equal(t, "CANCELLED", integrationtest.Member(t, cause, "JobRun", "State"))
	case <-time.After(30 * time.Second):
		t.Fatal("the .sync did not end when its job was cancelled")
	}

	done := ok(t, reg, res+"emr-containers:deleteVirtualCluster.sync", `{"Id": "`+id+`"}`)
	require.Equal(t, "TERMINATED", integrationtest.Member(t, done, "VirtualCluster", "State"))
}

// A CodeBuild build is started and waited for; the task's result is the
// build's description as {"Build": ...}.
func TestMoto_CodeBuild(t *testing.T) {
	t.Parallel()
	reg := motoRegistry(t)
	ok(t, reg, res+"aws-sdk:codebuild:createProject", `{"Name": "p1", "Source": {"Type": "S3", "Location": "bucket/src.zip"},
		"Artifacts": {"Type": "NO_ARTIFACTS"}, "Environment": {"Type": "LINUX_CONTAINER", "Image": "aws/codebuild/standard:7.0",
		"ComputeType": "BUILD_GENERAL1_SMALL"}, "ServiceRole": "arn:aws:iam::123456789012:role/r"}`)
	build := ok(t, reg, res+"codebuild:startBuild.sync", `{"ProjectName": "p1"}`)
	require.Equal(t, "SUCCEEDED", integrationtest.Member(t, build, "Build", "BuildStatus"))
	require.Equal(t, "p1", integrationtest.Member(t, build, "Build", "ProjectName"))

	r := integrationtest.Call(t, reg, res+"codebuild:startBuild.sync", `{"ProjectName": "none"}`)
	require.NotNil(t, r.Failure)
	require.Regexp(t, `^CodeBuild\.`, r.Failure.Name, "%s", r.Failure.Cause)
}

// An EKS cluster, its node group and Fargate profile are created and
// deleted, each .sync waiting until it is ACTIVE or gone.
func TestMoto_EKS(t *testing.T) {
	t.Parallel()
	reg := motoRegistry(t)
	cluster := ok(t, reg, res+"eks:createCluster.sync", `{"Name": "c1", "RoleArn": "arn:aws:iam::123456789012:role/r",
		"ResourcesVpcConfig": {"SubnetIds": ["subnet-1", "subnet-2"]}}`)
	require.Equal(t, "ACTIVE", integrationtest.Member(t, cluster, "Cluster", "Status"))

	ng := ok(t, reg, res+"eks:createNodegroup.sync", `{"ClusterName": "c1", "NodegroupName": "n1",
		"NodeRole": "arn:aws:iam::123456789012:role/n", "Subnets": ["subnet-1"]}`)
	require.Equal(t, "ACTIVE", integrationtest.Member(t, ng, "Nodegroup", "Status"))
	fp := ok(t, reg, res+"eks:createFargateProfile.sync", `{"ClusterName": "c1", "FargateProfileName": "f1",
		"PodExecutionRoleArn": "arn:aws:iam::123456789012:role/p", "Selectors": [{"Namespace": "default"}]}`)
	require.Equal(t, "ACTIVE", integrationtest.Member(t, fp, "FargateProfile", "Status"))

	ok(t, reg, res+"eks:deleteFargateProfile.sync", `{"ClusterName": "c1", "FargateProfileName": "f1"}`)
	ok(t, reg, res+"eks:deleteNodegroup.sync", `{"ClusterName": "c1", "NodegroupName": "n1"}`)
	ok(t, reg, res+"eks:deleteCluster.sync", `{"Name": "c1"}`)
	r := integrationtest.Call(t, reg, res+"aws-sdk:eks:describeCluster", `{"Name": "c1"}`)
	require.NotNil(t, r.Failure, "the cluster is gone")
	require.Contains(t, r.Failure.Name, "ResourceNotFound")
}

// A Bedrock model customization job stopped while its .sync waits fails
// the task with the job's description.
func TestMoto_BedrockCustomization(t *testing.T) {
	t.Parallel()
	reg := motoRegistry(t)
	waiting := integrationtest.Start(t, reg, res+"bedrock:createModelCustomizationJob.sync", `{"JobName": "j1",
		"CustomModelName": "m1", "RoleArn": "arn:aws:iam::123456789012:role/r", "BaseModelIdentifier": "amazon.titan-text-express-v1",
		"TrainingDataConfig": {"S3Uri": "s3://data/train.jsonl"}, "OutputDataConfig": {"S3Uri": "s3://data/out/"},
		"HyperParameters": {"epochCount": "1"}}`)
	require.Eventually(t, func() bool {
		r := integrationtest.Call(t, reg, res+"aws-sdk:bedrock:getModelCustomizationJob", `{"JobIdentifier": "j1"}`)
		return r.Failure == nil
	}, 10*time.Second, 20*time.Millisecond)
	ok(t, reg, res+"aws-sdk:bedrock:stopModelCustomizationJob", `{"JobIdentifier": "j1"}`)
	select {
	case r := <-waiting:
		require.NotNil(t, r.Failure)
		require.Equal(t, failure.TaskFailed, r.Failure.Name)
		cause, err := jsonvalue.ParseString(r.Failure.Cause)
		require.NoError(t, err)
		require.Equal(t, "Stopped", integrationtest.Member(t, cause, "Status"))
	case <-time.After(30 * time.Second):
		t.Fatal("the .sync did not end when its job was stopped")
	}
}

// A state machine on a server whose AWS endpoint is moto runs an EMR
// Serverless application's life, each .sync waiting for its state.
func TestMoto_EMRServerlessOnServer(t *testing.T) {
	t.Parallel()
	endpoint := integrationtest.Moto(t)
	s := servertest.New(t, servertest.WithConfig(func(c *config.Serve) { c.Integrations.AWSEndpoint = endpoint }))
	ctx := context.Background()
	sm, err := s.SFN.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("spark"),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/r"), Definition: aws.String(`{"StartAt": "Create", "States": {
		"Create": {"Type": "Task", "Resource": "arn:aws:states:::emr-serverless:createApplication.sync",
			"Parameters": {"Name": "a1", "ReleaseLabel": "emr-6.15.0", "Type": "SPARK"},
			"ResultSelector": {"id.$": "$.Application.ApplicationId"}, "ResultPath": "$.app", "Next": "Run"},
		"Run": {"Type": "Task", "Resource": "arn:aws:states:::emr-serverless:startJobRun.sync",
			"Parameters": {"ApplicationId.$": "$.app.id", "ExecutionRoleArn": "arn:aws:iam::123456789012:role/r",
				"JobDriver": {"SparkSubmit": {"EntryPoint": "s3://code/job.py"}}},
			"ResultSelector": {"state.$": "$.JobRun.State"}, "ResultPath": "$.run", "Next": "Stop"},
		"Stop": {"Type": "Task", "Resource": "arn:aws:states:::emr-serverless:stopApplication.sync",
			"Parameters": {"ApplicationId.$": "$.app.id"}, "ResultPath": null, "Next": "Delete"},
		"Delete": {"Type": "Task", "Resource": "arn:aws:states:::emr-serverless:deleteApplication.sync",
			"Parameters": {"ApplicationId.$": "$.app.id"}, "ResultSelector": {"state.$": "$.Application.State"}, "ResultPath": "$.deleted", "End": true}}}`)})
	require.NoError(t, err)
	started, err := s.SFN.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{}`)})
	require.NoError(t, err)
	var out *sfn.DescribeExecutionOutput
	require.Eventually(t, func() bool {
		out, err = s.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: started.ExecutionArn})
		require.NoError(t, err)
		return out.Status != "RUNNING"
	}, 60*time.Second, 20*time.Millisecond)
	require.Equal(t, "SUCCEEDED", string(out.Status), "%s: %s", aws.ToString(out.Error), aws.ToString(out.Cause))
	got, err := jsonvalue.ParseString(aws.ToString(out.Output))
	require.NoError(t, err)
	require.Equal(t, "SUCCESS", integrationtest.Member(t, got, "run", "state"))
	require.Equal(t, "TERMINATED", integrationtest.Member(t, got, "deleted", "state"))
}
