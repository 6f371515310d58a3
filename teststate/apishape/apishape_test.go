package apishape_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/jsonvalue"
	"stepwise/service/teststate/apishape"
)

func TestEveryServiceLoads(t *testing.T) {
	t.Parallel()
	services := apishape.Services()
	require.Contains(t, services, "lambda")
	require.Contains(t, services, "stepfunctions")
	for _, svc := range services {
		_, ok := apishape.Lookup(svc, "no-such-operation")
		require.False(t, ok, svc)
	}
	_, ok := apishape.Lookup("no-such-service", "Invoke")
	require.False(t, ok)
	_, ok = apishape.Lookup("dynamodb", "putitem")
	require.True(t, ok, "operation names match without regard to case")
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		service string
		op      string
		result  string
		mode    apishape.Mode
		anyJSON []string
		msg     string // "" when valid
	}{
		{name: "empty object", service: "events", op: "putEvents", result: `{}`},
		{name: "unknown fields", service: "events", op: "putEvents", result: `{"random": "json"}`},
		{name: "nulls", service: "events", op: "putEvents", result: `{"Entries": null, "FailedEntryCount": null}`},
		{name: "string", service: "events", op: "putEvents", result: `{"Entries": [{"EventId": ["x"]}]}`,
			msg: "Mock result schema validation error: Field 'EventId' must be a string"},
		{name: "array", service: "events", op: "putEvents", result: `{"Entries": "x"}`,
			msg: "Mock result schema validation error: Field 'Entries' must be an array"},
		{name: "second element", service: "events", op: "putEvents", result: `{"Entries": [{"EventId": "a"}, {"EventId": 1}]}`,
			msg: "Mock result schema validation error: Field 'EventId' must be a string"},
		{name: "integer", service: "lambda", op: "invoke", result: `{"StatusCode": 1.5}`,
			msg: "Mock result schema validation error: Field 'StatusCode' must be a number"},
		{name: "integer minimum", service: "lambda", op: "getFunction", result: `{"Configuration": {"MemorySize": 127}}`,
			msg: "Mock result schema validation error: Field 'MemorySize' is less than the minimum value"},
		{name: "integer maximum", service: "lambda", op: "getFunction", result: `{"Configuration": {"MemorySize": 10241}}`,
			msg: "Mock result schema validation error: Field 'MemorySize' exceeds the maximum value"},
		{name: "integer in range", service: "lambda", op: "getFunction", result: `{"Configuration": {"MemorySize": 10240}}`},
		{name: "double", service: "dynamodb", op: "putItem", result: `{"ConsumedCapacity": {"CapacityUnits": "1.5"}}`,
			msg: "Mock result schema validation error: Field 'CapacityUnits' must be a number"},
		{name: "blob", service: "kms", op: "encrypt", result: `{"CiphertextBlob": 123}`,
			msg: "Mock result schema validation error: Field 'CiphertextBlob' must be a string"},
		{name: "blob minimum length", service: "kms", op: "encrypt", result: `{"CiphertextBlob": ""}`,
			msg: "Mock result schema validation error: Field 'CiphertextBlob' is smaller than the minimum length"},
		{name: "enum", service: "s3", op: "getObject", result: `{"StorageClass": "Papyrus"}`,
			msg: "Mock result schema validation error: Field 'StorageClass' is not an expected value"},
		{name: "enum value", service: "s3", op: "getObject", result: `{"StorageClass": "GLACIER"}`},
		{name: "boolean", service: "s3", op: "getObject", result: `{"DeleteMarker": "true"}`,
			msg: "Mock result schema validation error: Field 'DeleteMarker' must be a boolean"},
		{name: "structure", service: "lambda", op: "getFunction", result: `{"Configuration": []}`,
			msg: "Mock result schema validation error: Field 'Configuration' must be an object"},
		{name: "map", service: "lambda", op: "getFunction", result: `{"Tags": {"a": 1}}`,
			msg: "Mock result schema validation error: Field 'Tags' must be a string"},
		{name: "required", service: "stepfunctions", op: "startExecution", result: `{"executionArn": "a"}`,
			msg: "Mock result schema validation error: Required field 'StartDate' is missing"},
		{name: "required, Step Functions casing", service: "stepfunctions", op: "startExecution", result: `{"ExecutionArn": "a", "StartDate": 1}`},
		{name: "required not checked when present", service: "stepfunctions", op: "startExecution", result: `{}`, mode: apishape.Present},
		{name: "any JSON member", service: "lambda", op: "invoke", result: `{"Payload": {"a": 1}}`, anyJSON: []string{"Payload"}},
		{name: "blob member", service: "lambda", op: "invoke", result: `{"Payload": {"a": 1}}`,
			msg: "Mock result schema validation error: Field 'Payload' must be a string"},
		{name: "not an object", service: "lambda", op: "invoke", result: `"x"`, msg: "Mocked result must be a JSON object."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			op, ok := apishape.Lookup(tt.service, tt.op)
			require.True(t, ok)
			v, err := jsonvalue.ParseString(tt.result)
			require.NoError(t, err)
			err = op.Validate(v, tt.mode, tt.anyJSON...)
			if tt.msg == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.msg)
		})
	}
}
