package asl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
)

// Credentials take the role to assume as RoleArn, or in JSONPath as
// RoleArn.$; anything else is refused at its location.
func TestValidateCredentials(t *testing.T) {
	t.Parallel()
	task := func(lang, creds string) string {
		return `{"QueryLanguage": "` + lang + `", "StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Credentials": ` + creds + `, "End": true}}}`
	}
	const loc = "/States/A/Credentials"
	for _, tt := range []struct {
		name, def string
		want      []asl.Diagnostic
	}{
		{"Literal", task("JSONPath", `{"RoleArn": "arn:aws:iam::111111111111:role/r"}`), nil},
		{"Path", task("JSONPath", `{"RoleArn.$": "$.role"}`), nil},
		{"Intrinsic", task("JSONPath", `{"RoleArn.$": "States.Format('arn:aws:iam::{}:role/r', $.a)"}`), nil},
		{"Variable", task("JSONPath", `{"RoleArn.$": "$role"}`), nil},
		{"JSONataExpr", task("JSONata", `{"RoleArn": "{% $states.input.role %}"}`), nil},
		{"NotAnObject", task("JSONPath", `"arn:aws:iam::111111111111:role/r"`), []asl.Diagnostic{schemaDiag("Expected value of type [OBJECT]", loc)}},
		{"Empty", task("JSONPath", `{}`), []asl.Diagnostic{schemaDiag("These fields are required: [RoleArn]", loc)}},
		{"UnknownField", task("JSONPath", `{"RoleArn": "arn:aws:iam::111111111111:role/r", "ExternalId": "x"}`),
			[]asl.Diagnostic{schemaDiag("Field 'ExternalId' is not supported", loc)}},
		{"NotAString", task("JSONPath", `{"RoleArn": 12}`), []asl.Diagnostic{schemaDiag("Expected value of type [STRING]", loc+"/RoleArn")}},
		{"EmptyString", task("JSONPath", `{"RoleArn": ""}`), []asl.Diagnostic{schemaDiag("The field 'RoleArn' must not be empty", loc+"/RoleArn")}},
		{"BadPath", task("JSONPath", `{"RoleArn.$": "role"}`),
			[]asl.Diagnostic{schemaDiag("The value for the field 'RoleArn.$' must be a valid JSONPath or a valid intrinsic function call", loc)}},
		{"Both", task("JSONPath", `{"RoleArn": "arn:aws:iam::111111111111:role/r", "RoleArn.$": "$.role"}`),
			[]asl.Diagnostic{schemaDiag("The fields 'RoleArn' and 'RoleArn.$' cannot both be specified", loc)}},
		{"PathInJSONata", task("JSONata", `{"RoleArn.$": "$.role"}`),
			[]asl.Diagnostic{schemaDiag("The QueryLanguage is set to 'JSONata', but field 'RoleArn.$' is only supported for the 'JSONPath' QueryLanguage", loc)}},
		{"JSONataSyntax", task("JSONata", `{"RoleArn": "{% $states.input. %}"}`), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := asl.Validate([]byte(tt.def), asl.Options{})
			if tt.name == "JSONataSyntax" {
				require.Len(t, got, 1)
				require.Equal(t, loc+"/RoleArn", got[0].Location)
				return
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// A resource in Step Functions' own namespace must be an integration AWS
// offers: an optimized integration's action with a pattern it supports, or
// an AWS SDK integration.
func TestValidateIntegrationResources(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		resource string
		ok       bool
	}{
		{"arn:aws:states:::lambda:invoke", true},
		{"arn:aws:states:::lambda:invoke.waitForTaskToken", true},
		{"arn:aws:states:::dynamodb:getItem", true},
		{"arn:aws:states:::dynamodb:deleteItem", true},
		{"arn:aws:states:::states:startExecution.sync:2", true},
		{"arn:aws:states:::ecs:runTask.sync", true},
		{"arn:aws:states:::events:putEvents.waitForTaskToken", true},
		{"arn:aws-cn:states:::sqs:sendMessage", true},
		{"arn:aws:states:::aws-sdk:dynamodb:query", true},
		{"arn:aws:states:::aws-sdk:s3:listBuckets.waitForTaskToken", true},
		{"arn:aws:states:us-east-1:111111111111:activity:work", true},
		{"arn:aws:lambda:us-east-1:111111111111:function:f", true},
		{"arn:aws:states:::dynamodb:query", false},
		{"arn:aws:states:::dynamodb:getItem.waitForTaskToken", false},
		{"arn:aws:states:::sns:publish.sync", false},
		{"arn:aws:states:::lambda:invoke.sync", false},
		{"arn:aws:states:::sqs:receiveMessage", false},
		{"arn:aws:states:::states:startExecution.sync:3", false},
		{"arn:aws:states:::nosuchservice:doIt", false},
		{"arn:aws:states:::aws-sdk:s3:getObject.sync", false},
		{"arn:aws:states:::aws-sdk:s3", false},
	} {
		def := `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "` + tt.resource + `", "End": true}}}`
		got := asl.Validate([]byte(def), asl.Options{})
		if tt.ok {
			require.Empty(t, got, tt.resource)
			continue
		}
		require.Equal(t, []asl.Diagnostic{schemaDiag("The resource provided "+tt.resource+" is not recognized. The value is not a valid resource ARN, or the resource is not available in this region.", "/States/A/Resource")}, got, tt.resource)
	}
}

func TestValidateExpressRefusesActivities(t *testing.T) {
	t.Parallel()
	def := `{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:us-east-1:111111111111:activity:work", "End": true}}}`
	require.Empty(t, asl.Validate([]byte(def), asl.Options{}))
	require.Equal(t, []asl.Diagnostic{schemaDiag("Express state machine does not support Activity ARN", "/States/A/Resource")},
		asl.Validate([]byte(def), asl.Options{Type: asl.TypeExpress}))
}
