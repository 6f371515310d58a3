package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/cdkapp"
)

// TestDeployCDKApp synthesizes the TypeScript CDK app of
// testdata/cdkapp offline (aws-cdk-lib from npm, no cdk CLI, no AWS),
// serves its cdk.out with `serve --template`, and runs its state machine:
// the Python function from its asset, the DynamoDB table on moto, the
// function's exception caught by name. Then `deploy cdk.out` again
// changes nothing, and `--delete` removes it.
func TestDeployCDKApp(t *testing.T) {
	assembly := cdkapp.Synth(t)
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"), "--aws-endpoint", moto, "--template", assembly)
	c := s.client(t)

	list, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	require.NoError(t, err)
	require.Len(t, list.StateMachines, 1)
	flow := aws.ToString(list.StateMachines[0].StateMachineArn)
	require.Contains(t, flow, "StepwiseCdkApp")

	done := runOrder(t, c, flow, `{"orderId": "o-1", "items": [{"price": 2.5, "quantity": 4}]}`)
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(done.Output)), &out))
	require.Equal(t, map[string]any{"orderId": "o-1", "status": "SAVED", "total": 10.0}, out)

	// The item is in the table the template made on moto, found by the
	// name the state machine was given.
	tables, err := dynamodb.NewFromConfig(awsConfig(t), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(moto) }).
		ListTables(ctx, &dynamodb.ListTablesInput{})
	require.NoError(t, err)
	require.Len(t, tables.TableNames, 1)
	ddb := dynamodb.NewFromConfig(awsConfig(t), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(moto) })
	item, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tables.TableNames[0]),
		Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "o-1"}}})
	require.NoError(t, err)
	require.Equal(t, &ddbtypes.AttributeValueMemberN{Value: "10.0"}, item.Item["total"])

	done = runOrder(t, c, flow, `{"orderId": "o-2", "items": []}`)
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	require.Contains(t, aws.ToString(done.Output), `"error":"OrderRejected"`)
	require.Contains(t, aws.ToString(done.Output), `"status":"REJECTED"`)

	outText, code := stepwiseCLI(t, "deploy", assembly, "--endpoint", s.url())
	require.Equal(t, 0, code, outText)
	require.Contains(t, outText, "stack StepwiseCdkApp")
	require.Contains(t, outText, "no changes")
	require.Contains(t, outText, "StateMachineArn = "+flow)

	outText, code = stepwiseCLI(t, "deploy", assembly, "--endpoint", s.url(), "--delete")
	require.Equal(t, 0, code, outText)
	require.True(t, strings.Contains(outText, "deleted") && strings.Contains(outText, "(AWS::StepFunctions::StateMachine)"), outText)
	list, err = c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	require.NoError(t, err)
	require.Empty(t, list.StateMachines)
}
