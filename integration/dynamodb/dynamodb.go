// Package dynamodb is the optimized Amazon DynamoDB integration:
// arn:aws:states:::dynamodb:getItem, putItem, updateItem and deleteItem,
// request-response only, at the endpoint configured for "dynamodb".
//
// # Parameters and results
//
// The Parameters are the operation's request members in PascalCase
// (TableName, Key, Item, UpdateExpression, ExpressionAttributeValues,
// ReturnValues, ...) with attribute values in DynamoDB JSON
// ({"S": "x"}, {"N": "1"}, {"M": {...}}, ...). A member the operation does
// not take, or one of the wrong type, fails the task with
// States.TaskFailed before any call is made. A required member missing
// (or null) or a table name DynamoDB cannot take is DynamoDB's own
// refusal, as AWS reports it (it sends the request): the ValidationException
// below, worded as DynamoDB words it.
//
// The result is the response's members (Attributes, ConsumedCapacity,
// Item, ItemCollectionMetrics; each only when present, the capacity and
// metrics only when asked for) in DynamoDB JSON and in alphabetical
// order, as AWS's SDK for Java writes them, then the SDK's
// SdkHttpMetadata and SdkResponseMetadata.
//
// # Errors
//
// Service errors are named as AWS names them: DynamoDB.<Exception> for
// a modeled error (DynamoDB.ConditionalCheckFailedException,
// DynamoDB.ResourceNotFoundException), DynamoDB.AmazonDynamoDBException
// for any other code (a ValidationException), with the Java SDK's wording
// of the error as the cause.
package dynamodb

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stepwise/integration"
)

// operation makes one DynamoDB call from a task's Parameters.
type operation func(ctx context.Context, client *dynamodb.Client, p *params) (any, error)

// operations maps each action of arn:aws:states:::dynamodb:<action> to
// its call.
var operations = map[string]operation{
	"getItem":    getItem,
	"putItem":    putItem,
	"updateItem": updateItem,
	"deleteItem": deleteItem,
}

func init() {
	for action, op := range operations {
		integration.Register(integration.Module{
			Resource: integration.ResourcePrefix + "dynamodb:" + action,
			New:      func(cfg *integration.Config) (integration.Integration, error) { return newOperation(cfg, op) },
		})
	}
}

func newOperation(cfg *integration.Config, op operation) (integration.Integration, error) {
	awsCfg, endpoint, err := cfg.AWSConfig(context.Background(), "dynamodb")
	if err != nil {
		return nil, err
	}
	client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return integration.Func(func(ctx context.Context, r *integration.Request) (any, error) {
		p, err := newParams(r.Parameters)
		if err != nil {
			return nil, err
		}
		return op(ctx, client, p)
	}), nil
}

func getItem(ctx context.Context, client *dynamodb.Client, p *params) (any, error) {
	in := &dynamodb.GetItemInput{
		TableName:                p.tableName(),
		Key:                      p.requiredItem("Key"),
		AttributesToGet:          p.strings("AttributesToGet"),
		ConsistentRead:           p.bool("ConsistentRead"),
		ExpressionAttributeNames: p.names("ExpressionAttributeNames"),
		ProjectionExpression:     p.string("ProjectionExpression"),
		ReturnConsumedCapacity:   types.ReturnConsumedCapacity(p.text("ReturnConsumedCapacity")),
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	res, err := client.GetItem(ctx, in)
	if err != nil {
		return nil, serviceFailure(err)
	}
	resp := &response{Item: res.Item, ConsumedCapacity: res.ConsumedCapacity, Metadata: res.ResultMetadata}
	return resp.result(in.ReturnConsumedCapacity, "")
}

func putItem(ctx context.Context, client *dynamodb.Client, p *params) (any, error) {
	in := &dynamodb.PutItemInput{
		TableName:                           p.tableName(),
		Item:                                p.requiredItem("Item"),
		ConditionExpression:                 p.string("ConditionExpression"),
		ConditionalOperator:                 types.ConditionalOperator(p.text("ConditionalOperator")),
		Expected:                            p.expected("Expected"),
		ExpressionAttributeNames:            p.names("ExpressionAttributeNames"),
		ExpressionAttributeValues:           p.item("ExpressionAttributeValues"),
		ReturnConsumedCapacity:              types.ReturnConsumedCapacity(p.text("ReturnConsumedCapacity")),
		ReturnItemCollectionMetrics:         types.ReturnItemCollectionMetrics(p.text("ReturnItemCollectionMetrics")),
		ReturnValues:                        types.ReturnValue(p.text("ReturnValues")),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailure(p.text("ReturnValuesOnConditionCheckFailure")),
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	res, err := client.PutItem(ctx, in)
	if err != nil {
		return nil, serviceFailure(err)
	}
	resp := &response{Attributes: res.Attributes, ConsumedCapacity: res.ConsumedCapacity, ItemCollectionMetrics: res.ItemCollectionMetrics, Metadata: res.ResultMetadata}
	return resp.result(in.ReturnConsumedCapacity, in.ReturnItemCollectionMetrics)
}

func updateItem(ctx context.Context, client *dynamodb.Client, p *params) (any, error) {
	in := &dynamodb.UpdateItemInput{
		TableName:                           p.tableName(),
		Key:                                 p.requiredItem("Key"),
		AttributeUpdates:                    p.attributeUpdates("AttributeUpdates"),
		ConditionExpression:                 p.string("ConditionExpression"),
		ConditionalOperator:                 types.ConditionalOperator(p.text("ConditionalOperator")),
		Expected:                            p.expected("Expected"),
		ExpressionAttributeNames:            p.names("ExpressionAttributeNames"),
		ExpressionAttributeValues:           p.item("ExpressionAttributeValues"),
		ReturnConsumedCapacity:              types.ReturnConsumedCapacity(p.text("ReturnConsumedCapacity")),
		ReturnItemCollectionMetrics:         types.ReturnItemCollectionMetrics(p.text("ReturnItemCollectionMetrics")),
		ReturnValues:                        types.ReturnValue(p.text("ReturnValues")),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailure(p.text("ReturnValuesOnConditionCheckFailure")),
		UpdateExpression:                    p.string("UpdateExpression"),
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	res, err := client.UpdateItem(ctx, in)
	if err != nil {
		return nil, serviceFailure(err)
	}
	resp := &response{Attributes: res.Attributes, ConsumedCapacity: res.ConsumedCapacity, ItemCollectionMetrics: res.ItemCollectionMetrics, Metadata: res.ResultMetadata}
	return resp.result(in.ReturnConsumedCapacity, in.ReturnItemCollectionMetrics)
}

func deleteItem(ctx context.Context, client *dynamodb.Client, p *params) (any, error) {
	in := &dynamodb.DeleteItemInput{
		TableName:                           p.tableName(),
		Key:                                 p.requiredItem("Key"),
		ConditionExpression:                 p.string("ConditionExpression"),
		ConditionalOperator:                 types.ConditionalOperator(p.text("ConditionalOperator")),
		Expected:                            p.expected("Expected"),
		ExpressionAttributeNames:            p.names("ExpressionAttributeNames"),
		ExpressionAttributeValues:           p.item("ExpressionAttributeValues"),
		ReturnConsumedCapacity:              types.ReturnConsumedCapacity(p.text("ReturnConsumedCapacity")),
		ReturnItemCollectionMetrics:         types.ReturnItemCollectionMetrics(p.text("ReturnItemCollectionMetrics")),
		ReturnValues:                        types.ReturnValue(p.text("ReturnValues")),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailure(p.text("ReturnValuesOnConditionCheckFailure")),
	}
	if err := p.done(); err != nil {
		return nil, err
	}
	res, err := client.DeleteItem(ctx, in)
	if err != nil {
		return nil, serviceFailure(err)
	}
	resp := &response{Attributes: res.Attributes, ConsumedCapacity: res.ConsumedCapacity, ItemCollectionMetrics: res.ItemCollectionMetrics, Metadata: res.ResultMetadata}
	return resp.result(in.ReturnConsumedCapacity, in.ReturnItemCollectionMetrics)
}

// serviceFailure names a DynamoDB error as AWS does. The Java SDK's
// service name (in the cause) is AmazonDynamoDBv2, but its base exception,
// the name of an unmodeled code, is AmazonDynamoDBException.
func serviceFailure(err error) error {
	f := integration.ServiceFailure("DynamoDB", "AmazonDynamoDBv2", err)
	if f.Name == "DynamoDB.AmazonDynamoDBv2Exception" {
		f.Name = "DynamoDB.AmazonDynamoDBException"
	}
	return f
}
