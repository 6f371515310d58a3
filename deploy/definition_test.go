package deploy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

func TestSubstituteDefinition(t *testing.T) {
	for _, tc := range []struct {
		text string
		subs map[string]any
		want string
	}{
		{`"${A}-${B}-${C}"`, map[string]any{"A": "a", "B": json.Number("2.5"), "C": false}, `"a-2.5-false"`},
		// A value that brings in another placeholder is replaced again.
		{`"${A}"`, map[string]any{"A": "x${B}", "B": "y"}, `"xy"`},
		// Unknown placeholders, and text that is no placeholder, stay.
		{`"${Z} $A {A} ${A"`, map[string]any{"A": "a"}, `"${Z} $A {A} ${A"`},
		{`"${A}"`, nil, `"${A}"`},
	} {
		got, err := substituteDefinition(tc.text, tc.subs)
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

// TestDefinitionS3LocationFromMoto reads a definition from S3 at the AWS
// endpoint (moto_server).
func TestDefinitionS3LocationFromMoto(t *testing.T) {
	url := integrationtest.Moto(t)
	ctx := context.Background()
	client := s3.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")},
		func(o *s3.Options) { o.BaseEndpoint = aws.String(url); o.UsePathStyle = true })
	_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("defs")})
	require.NoError(t, err)
	_, err = client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("defs"), Key: aws.String("flow.json"),
		Body: strings.NewReader(`{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"${Where}","End":true}}}`)})
	require.NoError(t, err)

	b := newTestBed(t)
	b.d.AWS = &AWSEndpoint{URL: url, Region: "us-east-1", AccessKeyID: "test", SecretAccessKey: "test"}
	tmpl := "Resources:\n  Flow:\n    Type: AWS::StepFunctions::StateMachine\n    Properties:\n      DefinitionS3Location: {Bucket: defs, Key: flow.json}\n      DefinitionSubstitutions: {Where: moto}\n"
	r, err := b.deploy(t, tmpl, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Flow created"}, actions(r))
	d := b.smDefinition(t, "arn:aws:states:us-east-1:123456789012:stateMachine:app-Flow")
	require.Equal(t, `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"moto","End":true}}}`, d.Definition)

	// A key that is not there: the resource and S3's answer.
	_, err = b.deploy(t, strings.Replace(tmpl, "flow.json", "gone.json", 1), nil)
	require.ErrorContains(t, err, "resource Flow (AWS::StepFunctions::StateMachine): Properties.DefinitionS3Location: s3://defs/gone.json:")
	require.ErrorContains(t, err, "NoSuchKey")
}
