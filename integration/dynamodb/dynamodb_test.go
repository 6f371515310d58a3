package dynamodb_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/integration"
	_ "stepwise/integration/dynamodb"
	"stepwise/integration/integrationtest"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

type testBundle struct {
	reg   *integration.Registry
	table string
}

// setup starts moto with a table "things" keyed by the string "id".
func setup(t *testing.T) *testBundle {
	t.Helper()
	moto := integrationtest.Moto(t)
	cfg := integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"dynamodb": moto}}
	reg, err := integration.New(cfg)
	require.NoError(t, err)
	awsCfg, _, err := cfg.AWSConfig(context.Background(), "dynamodb")
	require.NoError(t, err)
	client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(moto) })
	_, err = client.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            aws.String("things"),
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	require.NoError(t, err)
	return &testBundle{reg: reg, table: "things"}
}

// call runs arn:aws:states:::dynamodb:<action> with params.
func (b *testBundle) call(t *testing.T, action, params string) task.Result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	ch := make(chan task.Result, 1)
	b.reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "t1", Request: &interp.TaskRequest{
		Resource: "arn:aws:states:::dynamodb:" + action, Parameters: p,
	}}, func(r task.Result) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result")
		return task.Result{}
	}
}

// succeed runs a call that must succeed and returns its result.
func (b *testBundle) succeed(t *testing.T, action, params string) *jsonvalue.Object {
	t.Helper()
	res := b.call(t, action, params)
	require.Nil(t, res.Failure)
	return res.Output.(*jsonvalue.Object)
}

func member(t *testing.T, obj *jsonvalue.Object, name string) any {
	t.Helper()
	v, ok := obj.Get(name)
	require.True(t, ok, "no member %s in %s", name, jsonvalue.String(obj))
	return v
}

const item = `{"id": {"S": "a1"}, "count": {"N": "1"}, "tags": {"SS": ["x", "y"]},
	"doc": {"M": {"list": {"L": [{"S": "s"}, {"BOOL": true}, {"NULL": true}]}, "bin": {"B": "AAEC"}}}}`

func TestItemLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t)

	out := b.succeed(t, "putItem", `{"TableName": "things", "Item": `+item+`}`)
	require.Equal(t, []string{"SdkHttpMetadata", "SdkResponseMetadata"}, out.Keys(), "a put without ReturnValues returns no attributes")
	status := member(t, member(t, out, "SdkHttpMetadata").(*jsonvalue.Object), "HttpStatusCode")
	require.Equal(t, jsonvalue.Number("200"), status)

	out = b.succeed(t, "getItem", `{"TableName": "things", "Key": {"id": {"S": "a1"}}, "ConsistentRead": true}`)
	require.Equal(t, []string{"Item", "SdkHttpMetadata", "SdkResponseMetadata"}, out.Keys())
	require.True(t, jsonvalue.Equal(parse(t, item), member(t, out, "Item")), "got %s", jsonvalue.String(member(t, out, "Item")))

	out = b.succeed(t, "updateItem", `{"TableName": "things", "Key": {"id": {"S": "a1"}},
		"UpdateExpression": "SET #c = #c + :one", "ConditionExpression": "#c = :one",
		"ExpressionAttributeNames": {"#c": "count"}, "ExpressionAttributeValues": {":one": {"N": "1"}},
		"ReturnValues": "UPDATED_NEW"}`)
	require.Equal(t, `{"count":{"N":"2"}}`, jsonvalue.String(member(t, out, "Attributes")))

	out = b.succeed(t, "getItem", `{"TableName": "things", "Key": {"id": {"S": "a1"}}, "ProjectionExpression": "#c", "ExpressionAttributeNames": {"#c": "count"}}`)
	require.Equal(t, `{"count":{"N":"2"}}`, jsonvalue.String(member(t, out, "Item")))

	out = b.succeed(t, "deleteItem", `{"TableName": "things", "Key": {"id": {"S": "a1"}}, "ReturnValues": "ALL_OLD"}`)
	old := member(t, out, "Attributes").(*jsonvalue.Object)
	require.Equal(t, `{"N":"2"}`, jsonvalue.String(member(t, old, "count")))

	out = b.succeed(t, "getItem", `{"TableName": "things", "Key": {"id": {"S": "a1"}}}`)
	require.Equal(t, []string{"SdkHttpMetadata", "SdkResponseMetadata"}, out.Keys(), "a missing item has no Item member")
}

func TestConsumedCapacityWhenAsked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	out := b.succeed(t, "putItem", `{"TableName": "things", "Item": {"id": {"S": "c"}}}`)
	require.False(t, out.Has("ConsumedCapacity"))
	out = b.succeed(t, "putItem", `{"TableName": "things", "Item": {"id": {"S": "c"}}, "ReturnConsumedCapacity": "TOTAL"}`)
	cc := member(t, out, "ConsumedCapacity").(*jsonvalue.Object)
	require.Equal(t, "things", member(t, cc, "TableName"))
	require.IsType(t, jsonvalue.Number(""), member(t, cc, "CapacityUnits"))
}

func TestServiceErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.succeed(t, "putItem", `{"TableName": "things", "Item": {"id": {"S": "a1"}}}`)

	res := b.call(t, "putItem", `{"TableName": "things", "Item": {"id": {"S": "a1"}}, "ConditionExpression": "attribute_not_exists(id)"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "DynamoDB.ConditionalCheckFailedException", res.Failure.Name)
	require.Regexp(t, `^The conditional request failed \(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ConditionalCheckFailedException; Request ID: \S+; Proxy: null\)$`, res.Failure.Cause)

	res = b.call(t, "getItem", `{"TableName": "nope", "Key": {"id": {"S": "a1"}}}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "DynamoDB.ResourceNotFoundException", res.Failure.Name)
	require.Regexp(t, `^Requested resource not found(: Table: nope not found)? \(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ResourceNotFoundException; Request ID: \S+; Proxy: null\)$`, res.Failure.Cause)

	// A code the SDK does not model is the service's base exception.
	res = b.call(t, "updateItem", `{"TableName": "things", "Key": {"id": {"S": "a1"}}, "UpdateExpression": "SET"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "DynamoDB.AmazonDynamoDBException", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ValidationException; Request ID: ")
}

// Parameters that cannot be sent fail the task before any call.
func TestBadParameters(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"dynamodb": "http://127.0.0.1:1"}})
	require.NoError(t, err)
	b := &testBundle{reg: reg}
	tests := []struct {
		action, params, cause string
	}{
		{"deleteItem", `{"TableName": 5, "Key": {"id": {"S": "a"}}}`, "The field 'TableName' must be a string, not number"},
		{"getItem", `{"TableName": "t", "Key": {"id": "a"}}`, "The field 'Key.id' must be a DynamoDB attribute value: an object with one member naming its type (S, N, B, SS, NS, BS, M, L, BOOL, NULL)"},
		{"putItem", `{"TableName": "t", "Item": {"n": {"N": 1}}}`, "The field 'Item.n.N' must be a string, not number"},
		{"getItem", `{"TableName": "t", "Key": {"id": {"S": "a"}}, "ConsistentRead": "yes"}`, "The field 'ConsistentRead' must be a boolean, not string"},
		{"getItem", `{"TableName": "t", "Key": {"id": {"S": "a"}}, "Item": {}}`, "The field 'Item' is not supported by Step Functions"},
		{"updateItem", `{"TableName": "t", "Key": {"id": {"S": "a"}}, "ExpressionAttributeNames": {"#a": 1}}`, "The field 'ExpressionAttributeNames.#a' must be a string, not number"},
		{"updateItem", `{"TableName": "t", "Key": {"id": {"S": "a"}}, "AttributeUpdates": {"x": {"Action": "PUT", "Valu": {"S": "v"}}}}`, "The field 'AttributeUpdates.x.Valu' is not supported by Step Functions"},
		{"putItem", `{"TableName": "t", "Item": {"id": {"S": "a"}}, "Expected": {"id": {"Exists": "no"}}}`, "The field 'Expected.id.Exists' must be a boolean, not string"},
	}
	for _, tt := range tests {
		t.Run(tt.params, func(t *testing.T) {
			t.Parallel()
			res := b.call(t, tt.action, tt.params)
			require.NotNil(t, res.Failure)
			require.Equal(t, "States.TaskFailed", res.Failure.Name)
			require.Equal(t, tt.cause, res.Failure.Cause)
		})
	}
}

// What DynamoDB itself refuses (a required member null or missing, a
// table name it cannot take) fails as AWS records it: the service's
// ValidationException, an unmodeled code, under the base exception's name.
func TestValidationException(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"dynamodb": "http://127.0.0.1:1"}})
	require.NoError(t, err)
	b := &testBundle{reg: reg}
	tests := []struct {
		action, params, message string
	}{
		{"putItem", `{"TableName": "t", "Item": null}`, "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null"},
		{"getItem", `{"Key": {"id": {"S": "a"}}}`, "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null"},
		{"deleteItem", `{}`, "2 validation errors detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null; Value null at 'key' failed to satisfy constraint: Member must not be null"},
		{"putItem", `{"TableName": "/things", "Item": {"id": {"S": "a"}}}`, "1 validation error detected: Value '/things' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"},
	}
	for _, tt := range tests {
		t.Run(tt.params, func(t *testing.T) {
			t.Parallel()
			res := b.call(t, tt.action, tt.params)
			require.NotNil(t, res.Failure)
			require.Equal(t, "DynamoDB.AmazonDynamoDBException", res.Failure.Name)
			require.Regexp(t, `^`+regexp.QuoteMeta(tt.message)+` \(Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ValidationException; Request ID: [A-Z0-9]{52}; Proxy: null\)$`, res.Failure.Cause)
		})
	}
}

// The legacy Expected and AttributeUpdates members are sent.
func TestLegacyConditions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.succeed(t, "putItem", `{"TableName": "things", "Item": {"id": {"S": "l"}}, "Expected": {"id": {"Exists": false}}}`)
	res := b.call(t, "putItem", `{"TableName": "things", "Item": {"id": {"S": "l"}}, "Expected": {"id": {"Exists": false}}}`)
	require.Equal(t, "DynamoDB.ConditionalCheckFailedException", res.Failure.Name)

	out := b.succeed(t, "updateItem", `{"TableName": "things", "Key": {"id": {"S": "l"}},
		"AttributeUpdates": {"v": {"Action": "PUT", "Value": {"S": "new"}}}, "ReturnValues": "ALL_NEW"}`)
	require.Equal(t, `{"id":{"S":"l"},"v":{"S":"new"}}`, jsonvalue.String(member(t, out, "Attributes")))
}

func parse(t *testing.T, text string) any {
	t.Helper()
	v, err := jsonvalue.ParseString(text)
	require.NoError(t, err)
	return v
}
