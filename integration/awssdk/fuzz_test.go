package awssdk

import (
	"testing"

	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

// FuzzConvertParams feeds any JSON as the Parameters of a few operations
// of every protocol: conversion and marshalling must fail cleanly, never
// panic.
func FuzzConvertParams(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `[1]`, `"x"`,
		`{"TableName": "t", "Item": {"id": {"S": "1"}, "b": {"B": "aGk="}, "l": {"L": [{"N": "1"}]}}}`,
		`{"Bucket": "b", "Key": "k/v", "Body": {"a": [1, true, null]}, "Metadata": {"a": "b"}, "Expires": "2024-01-01T00:00:00Z"}`,
		`{"TopicArn": "t", "Message": 5, "MessageAttributes": {"k": {"DataType": "Binary", "BinaryValue": "AA=="}}}`,
		`{"FunctionName": "f", "Payload": "x", "ClientContext": 1}`,
		`{"Entries": [{"Time": 1700000000.5, "Detail": {}}]}`,
		`{"Delete": {"Objects": [{"Key": "a"}, null]}, "Bucket": "b"}`,
	} {
		f.Add(seed)
	}
	models := &awsmodel.Models{}
	ops := [][2]string{
		{"dynamodb", "putItem"}, {"s3", "putObject"}, {"s3", "deleteObjects"}, {"sns", "publish"},
		{"lambda", "invoke"}, {"eventbridge", "putEvents"}, {"sqs", "sendMessageBatch"}, {"ecs", "runTask"},
	}
	f.Fuzz(func(t *testing.T, params string) {
		v, err := jsonvalue.ParseString(params)
		if err != nil {
			return
		}
		for _, so := range ops {
			m, err := models.Get(so[0])
			if err != nil {
				t.Fatal(err)
			}
			op, _ := m.Operation(so[1])
			in, err := convertParams(v, op.Input)
			if err != nil {
				continue
			}
			_, _ = marshal(m, op, in)
		}
	})
}
