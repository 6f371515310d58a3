package optimized_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/integration/standard"
	"stepwise/jsonvalue"
)

// motoRegistry is the built-in integrations calling one moto_server.
func motoRegistry(t *testing.T) *integration.Registry {
	t.Helper()
	reg, err := standard.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoint: integrationtest.Moto(t)})
	require.NoError(t, err)
	return reg
}

const res = integration.ResourcePrefix

// ok runs a task that must succeed and returns its result object.
func ok(t *testing.T, reg *integration.Registry, resource, params string) *jsonvalue.Object {
	t.Helper()
	r := integrationtest.Call(t, reg, resource, params)
	require.Nil(t, r.Failure, "%s", resource)
	out, isObj := r.Output.(*jsonvalue.Object)
	require.True(t, isObj, "%s: %s", resource, jsonvalue.String(r.Output))
	return out
}

func TestMoto_Athena(t *testing.T) {
	t.Parallel()
	reg := motoRegistry(t)
	params := `{"QueryString": "SELECT 1", "WorkGroup": "primary", "ResultConfiguration": {"OutputLocation": "s3://results/"}}`
	started := ok(t, reg, res+"athena:startQueryExecution", params)
	id, _ := started.Get("QueryExecutionId")
	require.NotEmpty(t, id)

	got := ok(t, reg, res+"athena:getQueryExecution", `{"QueryExecutionId": "`+id.(string)+`"}`)
	require.Equal(t, "SELECT 1", integrationtest.Member(t, got, "QueryExecution", "Query"))

	done := ok(t, reg, res+"athena:startQueryExecution.sync", params)
	require.Equal(t, "SUCCEEDED", integrationtest.Member(t, done, "QueryExecution", "Status", "State"))

	ok(t, reg, res+"athena:getQueryResults", `{"QueryExecutionId": "`+id.(string)+`"}`)
	ok(t, reg, res+"athena:stopQueryExecution", `{"QueryExecutionId": "`+id.(string)+`"}`)

	r := integrationtest.Call(t, reg, res+"athena:getQueryExecution", `{"QueryExecutionId": 5}`)
	require.NotNil(t, r.Failure)
	require.Regexp(t, `^Athena\.`, r.Failure.Name, "the service's error, named as AWS names it")
}

func TestMoto_EMR(t *testing.T) {
	t.Parallel()
	reg := motoRegistry(t)
	cluster := ok(t, reg, res+"elasticmapreduce:createCluster.sync", `{"Name": "c1", "ReleaseLabel": "emr-6.15.0",
		"Instances": {"KeepJobFlowAliveWhenNoSteps": true, "InstanceCount": 1, "MasterInstanceType": "m5.xlarge"},
		"JobFlowRole": "EMR_EC2_DefaultRole", "ServiceRole": "EMR_DefaultRole"}`)
	// createCluster.sync answers as createCluster does, once the cluster
	// is up: {"ClusterArn", "ClusterId"}, which the next states read.
	require.Equal(t, []string{"ClusterArn", "ClusterId"}, cluster.Keys())
	id := integrationtest.Member(t, cluster, "ClusterId").(string)
	require.Regexp(t, `^j-`, id)
	described := ok(t, reg, res+"aws-sdk:emr:describeCluster", `{"ClusterId": "`+id+`"}`)
	require.Contains(t, []any{"WAITING", "RUNNING"}, integrationtest.Member(t, described, "Cluster", "Status", "State"))

	step := ok(t, reg, res+"elasticmapreduce:addStep", `{"ClusterId": "`+id+`", "Step": {"Name": "s1",
		"ActionOnFailure": "CONTINUE", "HadoopJarStep": {"Jar": "command-runner.jar", "Args": ["echo", "hi"]}}}`)
	stepID, _ := step.Get("StepId")
	require.Regexp(t, `^s-`, stepID)

	ok(t, reg, res+"elasticmapreduce:setClusterTerminationProtection", `{"ClusterId": "`+id+`", "TerminationProtected": false}`)
	done := ok(t, reg, res+"elasticmapreduce:terminateCluster.sync", `{"ClusterId": "`+id+`"}`)
	require.Equal(t, "TERMINATED", integrationtest.Member(t, done, "Cluster", "Status", "State"))
}

func TestMoto_SageMaker(t *testing.T) {
	t.Parallel()
	reg := motoRegistry(t)
	ok(t, reg, res+"sagemaker:createModel", `{"ModelName": "m1", "ExecutionRoleArn": "arn:aws:iam::123456789012:role/r",
		"PrimaryContainer": {"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/img:latest"}}`)
	job := ok(t, reg, res+"sagemaker:createTrainingJob.sync", `{"TrainingJobName": "tj1",
		"AlgorithmSpecification": {"TrainingImage": "123456789012.dkr.ecr.us-east-1.amazonaws.com/img:latest", "TrainingInputMode": "File"},
		"RoleArn": "arn:aws:iam::123456789012:role/r", "OutputDataConfig": {"S3OutputPath": "s3://out/"},
		"ResourceConfig": {"InstanceType": "ml.m5.large", "InstanceCount": 1, "VolumeSizeInGB": 10},
		"StoppingCondition": {"MaxRuntimeInSeconds": 3600}}`)
	require.Equal(t, "tj1", integrationtest.Member(t, job, "TrainingJobName"))
	require.Equal(t, "Completed", integrationtest.Member(t, job, "TrainingJobStatus"))
}
