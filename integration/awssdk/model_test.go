package awssdk

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration/awssdk/awsmodel"
)

func TestModels_embedded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		service, prefix, protocol, operation string
	}{
		{"batch", "Batch", "rest-json", "SubmitJob"},
		{"cloudwatchlogs", "CloudWatchLogs", "json", "PutLogEvents"},
		{"cognitoidentityprovider", "CognitoIdentityProvider", "json", "AdminCreateUser"},
		{"config", "Config", "json", "PutEvaluations"},
		{"ec2", "Ec2", "ec2", "DescribeInstances"},
		{"elasticloadbalancingv2", "ElasticLoadBalancingV2", "query", "DescribeTargetHealth"},
		{"iam", "Iam", "query", "GetRole"},
		{"rekognition", "Rekognition", "json", "DetectLabels"},
		{"redshiftdata", "RedshiftData", "json", "ExecuteStatement"},
		{"route53", "Route53", "rest-xml", "ChangeResourceRecordSets"},
		{"textract", "Textract", "json", "AnalyzeDocument"},
		{"xray", "XRay", "rest-json", "PutTraceSegments"},
		{"dynamodb", "DynamoDb", "json", "GetItem"},
		{"ecs", "Ecs", "json", "RunTask"},
		{"eventbridge", "EventBridge", "json", "PutEvents"},
		{"glue", "Glue", "json", "StartJobRun"},
		{"kms", "Kms", "json", "Encrypt"},
		{"lambda", "Lambda", "rest-json", "Invoke"},
		{"s3", "S3", "rest-xml", "GetObject"},
		{"secretsmanager", "SecretsManager", "json", "GetSecretValue"},
		{"sfn", "Sfn", "json", "StartExecution"},
		{"sns", "Sns", "query", "Publish"},
		{"sqs", "Sqs", "json", "SendMessage"},
		{"ssm", "Ssm", "json", "GetParameter"},
	}
	for _, tt := range tests {
		t.Run(tt.service, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			m, err := b.models.Get(tt.service)
			require.NoError(t, err)
			require.Equal(t, tt.prefix, m.ErrorPrefix())
			require.Equal(t, tt.protocol, m.Protocol())
			op, ok := m.Operation(lowerFirst(tt.operation))
			require.True(t, ok)
			require.Equal(t, tt.operation, op.Name)
		})
	}
}

func lowerFirst(s string) string { return string(s[0]|0x20) + s[1:] }

func TestModel_errorPrefix(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"DynamoDB": "DynamoDb", "Secrets Manager": "SecretsManager", "API Gateway": "ApiGateway",
		"CloudWatch Logs": "CloudWatchLogs", "EC2": "Ec2", "SSM Contacts": "SsmContacts", "ACM PCA": "AcmPca", "Route 53": "Route53",
		"Config Service": "Config", "Database Migration Service": "DatabaseMigration", "SESv2": "SesV2",
	} {
		m := &awsmodel.Model{Metadata: awsmodel.Metadata{ServiceID: id}}
		require.Equal(t, want, m.ErrorPrefix(), id)
	}
}

func TestModels_directory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := `{"metadata": {"endpointPrefix": "acm-pca", "protocol": "json", "jsonVersion": "1.1", "serviceId": "ACM PCA", "targetPrefix": "ACMPrivateCA"},
		"operations": {"GetPolicy": {"name": "GetPolicy", "http": {"method": "POST", "requestUri": "/"}, "input": {"shape": "In"}}},
		"shapes": {"In": {"type": "structure", "members": {"ResourceArn": {"shape": "S"}}}, "S": {"type": "string"}}}`
	f, err := os.Create(filepath.Join(dir, "acm-pca.json.gz"))
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	_, err = zw.Write([]byte(model))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sqs.json"), []byte(model), 0o644))

	ms := &awsmodel.Models{Dir: dir}
	m, err := ms.Get("acmpca")
	require.NoError(t, err)
	require.Equal(t, "AcmPca", m.ErrorPrefix())
	_, ok := m.Operation("getPolicy")
	require.True(t, ok)

	m, err = ms.Get("sqs")
	require.NoError(t, err)
	require.Equal(t, "acm-pca", m.Metadata.EndpointPrefix, "a model in the directory replaces the embedded one")

	m, err = ms.Get("dynamodb")
	require.NoError(t, err)
	require.Equal(t, "dynamodb", m.Metadata.EndpointPrefix, "the embedded models remain")

	_, err = ms.Get("nosuchservice")
	require.ErrorIs(t, err, awsmodel.ErrUnknownService)
}

// An AWS SDK resource naming an action its service's model lacks is
// refused at create time, as AWS refuses it; a service with no model here
// is given the benefit of the doubt.
func TestKnowsResource(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		resource string
		known    bool
	}{
		{"arn:aws:states:::aws-sdk:s3:getObject", true},
		{"arn:aws:states:::aws-sdk:dynamodb:query.waitForTaskToken", true},
		{"arn:aws:states:::aws-sdk:eventbridge:putEvents", true},
		{"arn:aws:states:::aws-sdk:sfn:describeExecution", true},
		{"arn:aws:states:::aws-sdk:s3:getObjekt", false},
		{"arn:aws:states:::aws-sdk:ssm:sendCommandz", false},
		{"arn:aws:states:::aws-sdk:rds:describeDBInstances", true},
		{"arn:aws:states:::aws-sdk:ec2:describeInstancez", false},
		{"arn:aws:states:::aws-sdk:lightsail:getInstancez", true},
		{"arn:aws:states:::sqs:sendMessage", true},
		{"arn:aws:lambda:us-east-1:123456789012:function:f", true},
	} {
		require.Equal(t, tt.known, KnowsResource(tt.resource), tt.resource)
	}
}
