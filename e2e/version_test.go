package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// TestAliasShift publishes two versions through the SDK, routes an alias
// 10% to the new one, then 100%: the executions started on the alias run
// the versions in those shares (within statistical bounds) and record
// them.
func TestAliasShift(t *testing.T) {
	t.Parallel()
	s := startServer(t, ":memory:")
	c := s.client(t)
	ctx := context.Background()
	def := `{"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": "v1", "End": true}}}`
	created, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("shift"), Definition: aws.String(def),
		RoleArn: aws.String(roleArn), Publish: true, VersionDescription: aws.String("one")})
	require.NoError(t, err)
	v1 := aws.ToString(created.StateMachineVersionArn)
	require.Equal(t, aws.ToString(created.StateMachineArn)+":1", v1)
	updated, err := c.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: created.StateMachineArn,
		Definition: aws.String(strings.Replace(def, `"v1"`, `"v2"`, 1)), Publish: true})
	require.NoError(t, err)
	v2 := aws.ToString(updated.StateMachineVersionArn)

	alias, err := c.CreateStateMachineAlias(ctx, &sfn.CreateStateMachineAliasInput{Name: aws.String("live"),
		RoutingConfiguration: []types.RoutingConfigurationListItem{
			{StateMachineVersionArn: aws.String(v1), Weight: 90}, {StateMachineVersionArn: aws.String(v2), Weight: 10}}})
	require.NoError(t, err)
	run := func(prefix string, n int) map[string]int {
		seen := map[string]int{}
		for i := range n {
			out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: alias.StateMachineAliasArn, Name: aws.String(fmt.Sprintf("%s%d", prefix, i))})
			require.NoError(t, err)
			d := waitDone(t, c, aws.ToString(out.ExecutionArn))
			require.Equal(t, aws.ToString(alias.StateMachineAliasArn), aws.ToString(d.StateMachineAliasArn))
			want := `"v1"`
			if aws.ToString(d.StateMachineVersionArn) == v2 {
				want = `"v2"`
			}
			require.Equal(t, want, aws.ToString(d.Output), "the version's own definition ran")
			seen[aws.ToString(d.StateMachineVersionArn)]++
		}
		return seen
	}
	// 10% of 300 is 30, with a standard deviation of about 5.2.
	seen := run("a", 300)
	require.InDelta(t, 30, seen[v2], 18, "%v", seen)
	require.Equal(t, 300, seen[v1]+seen[v2])

	_, err = c.UpdateStateMachineAlias(ctx, &sfn.UpdateStateMachineAliasInput{StateMachineAliasArn: alias.StateMachineAliasArn,
		RoutingConfiguration: []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(v2), Weight: 100}}})
	require.NoError(t, err)
	require.Equal(t, map[string]int{v2: 30}, run("b", 30))

	list, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(v2), MaxResults: 1000})
	require.NoError(t, err)
	require.Len(t, list.Executions, seen[v2]+30, "a version ARN lists the executions that ran it")
	_, err = c.DeleteStateMachineVersion(ctx, &sfn.DeleteStateMachineVersionInput{StateMachineVersionArn: aws.String(v2)})
	var conflict *types.ConflictException
	require.ErrorAs(t, err, &conflict)
	versions, err := c.ListStateMachineVersions(ctx, &sfn.ListStateMachineVersionsInput{StateMachineArn: created.StateMachineArn})
	require.NoError(t, err)
	require.Len(t, versions.StateMachineVersions, 2)
	require.Equal(t, v2, aws.ToString(versions.StateMachineVersions[0].StateMachineVersionArn), "newest first")
}
