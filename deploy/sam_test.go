package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
	"stepwise/internal/testkit/testwait"
	"stepwise/service"
	"stepwise/wiring"
)

const samMachine = `
Transform: AWS::Serverless-2016-10-31
Parameters:
  Table: {Type: String, Default: orders}
Globals:
  StateMachine:
    PropagateTags: true
Resources:
  Nightly:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: nightly
      DefinitionUri: statemachine/nightly.asl.yaml
      DefinitionSubstitutions:
        TableName: !Ref Table
      AutoPublishAlias: live
      Policies: [AWSLambdaRole]
      PermissionsBoundary: arn:aws:iam::123456789012:policy/boundary
      Events:
        Nightly: {Type: Schedule, Properties: {Schedule: rate(1 day)}}
      Tags: {stage: dev, team: night}
      Tracing: {Enabled: true}
  Inline:
    Type: AWS::Serverless::StateMachine
    Properties:
      Type: EXPRESS
      Role: arn:aws:iam::123456789012:role/inline
      Logging:
        Level: ERROR
        Destinations: [{CloudWatchLogsLogGroup: {LogGroupArn: "arn:aws:logs:us-east-1:123456789012:log-group:inline:*"}}]
      Definition:
        StartAt: P
        States: {P: {Type: Pass, End: true}}
Outputs:
  Arn: {Value: !Ref Nightly}
  Name: {Value: !GetAtt Nightly.Name}
`

// deploySAM writes the definition file and deploys samMachine from its
// folder.
func (b *testBed) deploySAM(t *testing.T, dir, definition string, params map[string]string) (*Report, error) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "statemachine"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "statemachine", "nightly.asl.yaml"), []byte(definition), 0o644))
	tp, err := cfn.Parse([]byte(samMachine))
	require.NoError(t, err)
	return b.d.Deploy(context.Background(), tp, Options{StackName: "app", BaseDir: dir, Parameters: params})
}

const nightlyASL = `StartAt: Load
States:
  Load:
    Type: Pass
    Result: {table: "${TableName}"}
    End: true
`

func TestSAMStateMachine(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	dir := t.TempDir()
	const arn = "arn:aws:states:us-east-1:123456789012:stateMachine:nightly"

	r, err := b.deploySAM(t, dir, nightlyASL, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Inline created", "Nightly created", "NightlyNightly created"}, actions(r))
	require.Equal(t, arn, smOutput(r, "Arn"))
	require.Equal(t, "nightly", smOutput(r, "Name"))
	d := b.smDefinition(t, arn)
	require.Contains(t, d.Definition, `"table": "orders"`)
	require.True(t, *d.TracingConfiguration.Enabled)
	require.Equal(t, "arn:aws:iam::123456789012:role/app-NightlyRole-OEY5KNSAHU9S", d.RoleArn)
	tags, err := b.svc.ListTagsForResource(ctx, &service.ListTagsForResourceInput{ResourceArn: arn})
	require.NoError(t, err)
	var tagText []string
	for _, tg := range tags.Tags {
		tagText = append(tagText, *tg.Key+"="+*tg.Value)
	}
	require.ElementsMatch(t, []string{"stage=dev", "team=night", "stateMachine:createdBy=SAM"}, tagText)
	// AutoPublishAlias: version 1 and the alias on it.
	require.Equal(t, []string{arn + ":1"}, b.smVersions(t, arn))
	require.Equal(t, []string{arn + ":1"}, b.aliasRoutes(t, arn+":live"))
	// Its Schedule event: a schedule that starts it.
	require.Equal(t, arn, b.schedule(t, "default", "app-NightlyNightly").Target.Arn)
	inline := b.smDefinition(t, "arn:aws:states:us-east-1:123456789012:stateMachine:app-Inline")
	require.Equal(t, "EXPRESS", inline.Type)
	require.Equal(t, "ERROR", *inline.LoggingConfiguration.Level)
	require.Equal(t, "arn:aws:iam::123456789012:role/inline", inline.RoleArn)

	// Unchanged: no new revision, no version.
	puts := b.records.puts
	r, err = b.deploySAM(t, dir, nightlyASL, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Inline unchanged", "Nightly unchanged", "NightlyNightly unchanged"}, actions(r))
	require.Equal(t, puts, b.records.puts)
	require.Len(t, b.smVersions(t, arn), 1)

	// A new definition file: a new revision, version 2, the alias on it,
	// version 1 kept.
	r, err = b.deploySAM(t, dir, strings.Replace(nightlyASL, "Type: Pass", "Type: Pass\n    Comment: changed", 1), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Inline unchanged", "Nightly updated", "NightlyNightly unchanged"}, actions(r))
	require.Contains(t, b.smDefinition(t, arn).Definition, "changed")
	require.Equal(t, []string{arn + ":2", arn + ":1"}, b.smVersions(t, arn))
	require.Equal(t, []string{arn + ":2"}, b.aliasRoutes(t, arn+":live"))

	// The alias deleted by hand: made again on the current version.
	_, err = b.svc.DeleteStateMachineAlias(ctx, &service.DeleteStateMachineAliasInput{StateMachineAliasArn: arn + ":live"})
	require.NoError(t, err)
	r, err = b.deploySAM(t, dir, strings.Replace(nightlyASL, "Type: Pass", "Type: Pass\n    Comment: changed", 1), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Inline unchanged", "Nightly updated", "NightlyNightly unchanged"}, actions(r))
	require.Equal(t, []string{arn + ":2"}, b.aliasRoutes(t, arn+":live"))

	// AutoPublishAlias gone: the alias is deleted, the versions stay.
	tp, err := cfn.Parse([]byte(strings.Replace(samMachine, "      AutoPublishAlias: live\n", "", 1)))
	require.NoError(t, err)
	r, err = b.d.Deploy(ctx, tp, Options{StackName: "app", BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, []string{"Inline unchanged", "Nightly updated", "NightlyNightly unchanged"}, actions(r))
	_, err = b.svc.DescribeStateMachineAlias(ctx, &service.DescribeStateMachineAliasInput{StateMachineAliasArn: arn + ":live"})
	require.ErrorContains(t, err, "ResourceNotFound")
	require.Len(t, b.smVersions(t, arn), 2)

	// Deleted: both state smTemplate, their versions and aliases.
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"Inline deleted", "Nightly deleted", "NightlyNightly deleted"}, actions(r))
	require.Empty(t, b.smNames(t))
}

func TestSAMEventsHook(t *testing.T) {
	saved, savedRemove := samEvents, samEventsRemove
	t.Cleanup(func() { samEvents, samEventsRemove = saved, savedRemove })
	var made, removed []string
	samEvents = func(_ context.Context, _ *run, r *resource, smArn string, prev *Record) ([]wiring.Wire, error) {
		events, _ := r.Props["Events"].(map[string]any) // called for every SAM state machine, with Events or not
		for name := range events {
			made = append(made, r.ID+"/"+name+" "+smArn+" "+map[bool]string{true: "new", false: "again"}[prev == nil])
		}
		return nil, nil
	}
	samEventsRemove = func(_ context.Context, _ *run, id string, rec *Record) error {
		removed = append(removed, id+" "+rec.Physical)
		return nil
	}
	b := newTestBed(t)
	dir := t.TempDir()
	const arn = "arn:aws:states:us-east-1:123456789012:stateMachine:nightly"
	r, err := b.deploySAM(t, dir, nightlyASL, nil)
	require.NoError(t, err)
	require.NotContains(t, strings.Join(r.Warnings, "\n"), "Events")

	// UseAliasAsEventTarget: the events start the alias.
	tp, err := cfn.Parse([]byte(strings.Replace(samMachine, "      AutoPublishAlias: live\n", "      AutoPublishAlias: live\n      UseAliasAsEventTarget: true\n", 1)))
	require.NoError(t, err)
	_, err = b.d.Deploy(context.Background(), tp, Options{StackName: "app", BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, "Nightly/Nightly "+arn+":live again", made[1])
	made = made[:1]
	_, err = b.deploySAM(t, dir, nightlyASL, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Nightly/Nightly " + arn + " new", "Nightly/Nightly " + arn + " again"}, made)
	_, err = b.d.Delete(context.Background(), "app")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"Nightly " + arn, "Inline arn:aws:states:us-east-1:123456789012:stateMachine:app-Inline"}, removed)
}

func TestSAMStateMachineErrors(t *testing.T) {
	b := newTestBed(t)
	dir := t.TempDir()
	for _, tc := range []struct{ name, props, want string }{
		{"missing file", `{DefinitionUri: missing.json}`,
			"resource M (AWS::Serverless::StateMachine): Properties.DefinitionUri: the definition file " + filepath.Join(dir, "missing.json") + " does not exist"},
		{"neither", `{Name: x}`, "resource M (AWS::Serverless::StateMachine): Either 'Definition' or 'DefinitionUri' property must be specified."},
		{"both", `{Definition: {}, DefinitionUri: x.json}`, "Specify either 'Definition' or 'DefinitionUri' property and not both."},
		{"S3 URI without an endpoint", `{DefinitionUri: "s3://defs/flow.json"}`, "Properties.DefinitionUri: s3://defs/flow.json: the definition is in S3 and no AWS endpoint is configured"},
		{"a definition file that is not one", `{DefinitionUri: bad.json}`, "Properties.DefinitionUri: " + filepath.Join(dir, "bad.json") + ": Invalid StateMachine definition file."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{not json"), 0o644))
			tp, err := cfn.Parse([]byte("Transform: AWS::Serverless-2016-10-31\nResources:\n  M:\n    Type: AWS::Serverless::StateMachine\n    Properties: " + tc.props + "\n"))
			require.NoError(t, err)
			_, err = b.d.Deploy(context.Background(), tp, Options{StackName: "app", BaseDir: dir})
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestSAMStateMachineRuns starts the deployed workflow through its alias.
func TestSAMStateMachineRuns(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	_, err := b.deploySAM(t, t.TempDir(), nightlyASL, map[string]string{"Table": "orders-prod"})
	require.NoError(t, err)
	start, err := b.svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:nightly:live"})
	require.NoError(t, err)
	var out *service.DescribeExecutionOutput
	testwait.Until(t, func() bool {
		out, err = b.svc.DescribeExecution(ctx, &service.DescribeExecutionInput{ExecutionArn: start.ExecutionArn})
		require.NoError(t, err)
		return out.Status != "RUNNING"
	}, 10*time.Second, 10*time.Millisecond, "the execution ends")
	require.Equal(t, "SUCCEEDED", out.Status)
	require.JSONEq(t, `{"table": "orders-prod"}`, *out.Output)
}
