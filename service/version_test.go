package service_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/service"
)

func TestVersions(t *testing.T) {
	b := setup(t)
	smArn := b.create(t, "sm", passDefinition, func(in *service.CreateStateMachineInput) {
		in.Publish, in.VersionDescription = true, "first"
	})
	v1 := smArn + ":1"

	d, err := b.svc.DescribeStateMachine(b.ctx, &service.DescribeStateMachineInput{StateMachineArn: v1})
	require.NoError(t, err)
	require.Equal(t, v1, d.StateMachineArn)
	require.Equal(t, "first", d.Description)
	require.Equal(t, passDefinition, d.Definition)
	require.Empty(t, d.RevisionID, "the first revision is not shown")

	// An update that changes nothing publishes nothing new; the first
	// revision's id is not shown.
	first, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: smArn, Definition: ptr(passDefinition), Publish: true})
	require.NoError(t, err)
	require.Equal(t, v1, first.StateMachineVersionArn)
	require.Empty(t, first.RevisionID)
	// One that publishes a new revision is version 2.
	r2 := strings.Replace(passDefinition, "BASE_PASS_RESULT", "R2", 1)
	up, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: smArn, Definition: &r2, Publish: true})
	require.NoError(t, err)
	require.Equal(t, smArn+":2", up.StateMachineVersionArn)
	require.NotEmpty(t, up.RevisionID)
	same, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: smArn, Definition: &r2, Publish: true})
	require.NoError(t, err)
	require.Equal(t, smArn+":2", same.StateMachineVersionArn)
	require.Equal(t, up.RevisionID, same.RevisionID, "no new revision")
	pub, err := b.svc.PublishStateMachineVersion(b.ctx, &service.PublishStateMachineVersionInput{StateMachineArn: smArn})
	require.NoError(t, err)
	require.Equal(t, smArn+":2", pub.StateMachineVersionArn, "publishing a published revision returns its version")
	_, err = b.svc.PublishStateMachineVersion(b.ctx, &service.PublishStateMachineVersionInput{StateMachineArn: smArn, RevisionID: ptr("stale")})
	requireAPIError(t, err, "ConflictException", "")
	_, err = b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: smArn + ":2", Definition: &r2})
	requireAPIError(t, err, "StateMachineDoesNotExist", "State Machine Does Not Exist: '"+smArn+":2'")

	// Executions on a version run its revision and record it.
	x := b.start(t, v1, "on-v1", `{}`)
	desc, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: x})
	require.NoError(t, err)
	require.Equal(t, smArn, desc.StateMachineArn)
	require.Equal(t, v1, desc.StateMachineVersionArn)
	forX, err := b.svc.DescribeStateMachineForExecution(b.ctx, &service.DescribeStateMachineForExecutionInput{ExecutionArn: x})
	require.NoError(t, err)
	require.Equal(t, passDefinition, forX.Definition, "version 1's definition, not the current one")
	list, err := b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: smArn + ":2"})
	require.NoError(t, err)
	require.Empty(t, list.Executions)
	list, err = b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: v1})
	require.NoError(t, err)
	require.Len(t, list.Executions, 1)

	// Listed newest first, a page at a time; numbers are never reused.
	vs, err := b.svc.ListStateMachineVersions(b.ctx, &service.ListStateMachineVersionsInput{StateMachineArn: smArn, MaxResults: ptr(1)})
	require.NoError(t, err)
	require.Equal(t, smArn+":2", vs.StateMachineVersions[0].StateMachineVersionArn)
	require.NotEmpty(t, vs.NextToken)
	vs, err = b.svc.ListStateMachineVersions(b.ctx, &service.ListStateMachineVersionsInput{StateMachineArn: smArn, NextToken: &vs.NextToken})
	require.NoError(t, err)
	require.Equal(t, v1, vs.StateMachineVersions[0].StateMachineVersionArn)
	require.Empty(t, vs.NextToken)
	_, err = b.svc.DeleteStateMachineVersion(b.ctx, &service.DeleteStateMachineVersionInput{StateMachineVersionArn: smArn + ":2"})
	require.NoError(t, err)
	r3 := strings.Replace(passDefinition, "BASE_PASS_RESULT", "R3", 1)
	up, err = b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: smArn, Definition: &r3, Publish: true})
	require.NoError(t, err)
	require.Equal(t, smArn+":3", up.StateMachineVersionArn)
	_, err = b.svc.DescribeStateMachine(b.ctx, &service.DescribeStateMachineInput{StateMachineArn: smArn + ":2"})
	requireAPIError(t, err, "StateMachineDoesNotExist", "")
}

func TestAliases(t *testing.T) {
	b := setup(t)
	smArn := b.create(t, "sm", passDefinition, func(in *service.CreateStateMachineInput) { in.Publish = true })
	r2 := strings.Replace(passDefinition, "BASE_PASS_RESULT", "R2", 1)
	_, err := b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: smArn, Definition: &r2, Publish: true})
	require.NoError(t, err)
	v1, v2 := smArn+":1", smArn+":2"
	route := func(arn string, w int) service.RoutingConfigurationListItem {
		return service.RoutingConfigurationListItem{StateMachineVersionArn: arn, Weight: &w}
	}

	for _, c := range []struct {
		name    string
		routes  []service.RoutingConfigurationListItem
		code    string
		message string
	}{
		{"123", []service.RoutingConfigurationListItem{route(v1, 100)}, "ValidationException",
			`1 validation error detected: Value '123' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^(?=.*[a-zA-Z_\-\.])[a-zA-Z0-9_\-\.]+$`},
		{"a", []service.RoutingConfigurationListItem{route(v1, 70), route(v2, 29)}, "ValidationException",
			"Sum of routing configuration weights must equal 100. Received: [70, 29]"},
		{"a", []service.RoutingConfigurationListItem{route(v1, 50), route(v1, 50)}, "ValidationException",
			"Routing configuration must contain distinct state machine version ARNs. Received: [" + v1 + ", " + v1 + "]"},
		{"a", []service.RoutingConfigurationListItem{route(smArn, 100)}, "ValidationException",
			"Routing configuration must contain state machine version ARNs. Received: [" + smArn + "]"},
		{"a", []service.RoutingConfigurationListItem{route(v1, 101)}, "ValidationException",
			"1 validation error detected: Value '101' at 'routingConfiguration.1.member.weight' failed to satisfy constraint: Member must have value less than or equal to 100"},
		{"a", []service.RoutingConfigurationListItem{route(smArn+":9", 100)}, "ResourceNotFound", ""},
	} {
		_, err := b.svc.CreateStateMachineAlias(b.ctx, &service.CreateStateMachineAliasInput{Name: c.name, RoutingConfiguration: c.routes})
		requireAPIError(t, err, c.code, c.message)
	}

	out, err := b.svc.CreateStateMachineAlias(b.ctx, &service.CreateStateMachineAliasInput{Name: "live", Description: "d",
		RoutingConfiguration: []service.RoutingConfigurationListItem{route(v1, 90), route(v2, 10)}})
	require.NoError(t, err)
	alias := out.StateMachineAliasArn
	require.Equal(t, smArn+":live", alias)

	_, err = b.svc.DeleteStateMachineVersion(b.ctx, &service.DeleteStateMachineVersionInput{StateMachineVersionArn: v2})
	requireAPIError(t, err, "ConflictException",
		"Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [live]")

	// Executions on the alias split between the versions by weight:
	// 10% of 400 is 40, with a standard deviation of 6.
	on := map[string]int{}
	for i := range 400 {
		x := b.start(t, alias, fmt.Sprintf("x%d", i), `{}`)
		d, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: x})
		require.NoError(t, err)
		require.Equal(t, alias, d.StateMachineAliasArn)
		on[d.StateMachineVersionArn]++
	}
	require.InDelta(t, 40, on[v2], 25, "%v", on)
	require.Equal(t, 400, on[v1]+on[v2])
	list, err := b.svc.ListExecutions(b.ctx, &service.ListExecutionsInput{StateMachineArn: alias, MaxResults: ptr(1000)})
	require.NoError(t, err)
	require.Len(t, list.Executions, 400)

	// All to version 2.
	_, err = b.svc.UpdateStateMachineAlias(b.ctx, &service.UpdateStateMachineAliasInput{StateMachineAliasArn: alias,
		RoutingConfiguration: []service.RoutingConfigurationListItem{route(v2, 100)}})
	require.NoError(t, err)
	d, err := b.svc.DescribeStateMachineAlias(b.ctx, &service.DescribeStateMachineAliasInput{StateMachineAliasArn: alias})
	require.NoError(t, err)
	require.Equal(t, "d", d.Description)
	require.Equal(t, []service.RoutingConfigurationListItem{route(v2, 100)}, d.RoutingConfiguration)
	x := b.start(t, alias, "after", `{}`)
	xd, err := b.svc.DescribeExecution(b.ctx, &service.DescribeExecutionInput{ExecutionArn: x})
	require.NoError(t, err)
	require.Equal(t, v2, xd.StateMachineVersionArn)
	_, err = b.svc.DeleteStateMachineVersion(b.ctx, &service.DeleteStateMachineVersionInput{StateMachineVersionArn: v1})
	require.NoError(t, err, "no alias routes to version 1 any more")

	as, err := b.svc.ListStateMachineAliases(b.ctx, &service.ListStateMachineAliasesInput{StateMachineArn: smArn})
	require.NoError(t, err)
	require.Len(t, as.StateMachineAliases, 1)
	_, err = b.svc.ListStateMachineAliases(b.ctx, &service.ListStateMachineAliasesInput{StateMachineArn: smArn, NextToken: ptr("InvalidToken")})
	requireAPIError(t, err, "InvalidToken", "Invalid Token: 'Invalid token'")
	_, err = b.svc.DeleteStateMachineAlias(b.ctx, &service.DeleteStateMachineAliasInput{StateMachineAliasArn: alias})
	require.NoError(t, err)
	_, err = b.svc.DescribeStateMachineAlias(b.ctx, &service.DescribeStateMachineAliasInput{StateMachineAliasArn: alias})
	requireAPIError(t, err, "ResourceNotFound", "Resource not found: '"+alias+"'")
	// UpdateStateMachineAlias words it as AWS does, naming nothing.
	_, err = b.svc.UpdateStateMachineAlias(b.ctx, &service.UpdateStateMachineAliasInput{StateMachineAliasArn: alias, Description: ptr("gone")})
	requireAPIError(t, err, "ResourceNotFound", "Request references a resource that does not exist.")
	_, err = b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: alias})
	requireAPIError(t, err, "StateMachineDoesNotExist", "")
}
