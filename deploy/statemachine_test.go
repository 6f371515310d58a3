package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
	"stepwise/service"
)

// smDefinition is a state machine's definition as the service has it.
func (b *testBed) smDefinition(t *testing.T, arn string) *service.DescribeStateMachineOutput {
	t.Helper()
	out, err := b.svc.DescribeStateMachine(context.Background(), &service.DescribeStateMachineInput{StateMachineArn: arn})
	require.NoError(t, err)
	return out
}

// smVersions lists a state machine's version ARNs, newest first.
func (b *testBed) smVersions(t *testing.T, arn string) []string {
	t.Helper()
	out, err := b.svc.ListStateMachineVersions(context.Background(), &service.ListStateMachineVersionsInput{StateMachineArn: arn})
	require.NoError(t, err)
	var arns []string
	for _, v := range out.StateMachineVersions {
		arns = append(arns, v.StateMachineVersionArn)
	}
	return arns
}

func (b *testBed) smNames(t *testing.T) []string {
	t.Helper()
	out, err := b.svc.ListStateMachines(context.Background(), &service.ListStateMachinesInput{})
	require.NoError(t, err)
	var names []string
	for _, m := range out.StateMachines {
		names = append(names, m.Name)
	}
	return names
}

func (b *testBed) aliasRoutes(t *testing.T, arn string) []string {
	t.Helper()
	out, err := b.svc.DescribeStateMachineAlias(context.Background(), &service.DescribeStateMachineAliasInput{StateMachineAliasArn: arn})
	require.NoError(t, err)
	var routes []string
	for _, r := range out.RoutingConfiguration {
		routes = append(routes, r.StateMachineVersionArn)
	}
	return routes
}

const smTemplate = `
Parameters:
  Greeting: {Type: String, Default: hello}
  MachineName: {Type: String, Default: nightly}
  Kind: {Type: String, Default: STANDARD}
Resources:
  Machine:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      StateMachineName: !Ref MachineName
      StateMachineType: !Ref Kind
      Definition:
        StartAt: Say
        States:
          Say:
            Type: Pass
            Result: {text: "${Greeting} & ${Count} ${Flag} ${Unknown}"}
            End: true
      DefinitionSubstitutions:
        Greeting: !Ref Greeting
        Count: 3
        Flag: true
      TracingConfiguration: {Enabled: true}
      Tags: [{Key: team, Value: night}]
  Version:
    Type: AWS::StepFunctions::StateMachineVersion
    Properties:
      StateMachineArn: !Ref Machine
      StateMachineRevisionId: !GetAtt Machine.StateMachineRevisionId
  Live:
    Type: AWS::StepFunctions::StateMachineAlias
    Properties:
      Name: live
      RoutingConfiguration: [{StateMachineVersionArn: !Ref Version, Weight: 100}]
Outputs:
  Arn: {Value: !GetAtt Machine.Arn}
  Name: {Value: !GetAtt Machine.Name}
  Revision: {Value: !GetAtt Machine.StateMachineRevisionId}
  VersionArn: {Value: !GetAtt Version.Arn}
  AliasArn: {Value: !Ref Live}
`

func smOutput(r *Report, key string) string {
	for _, o := range r.Outputs {
		if o.Key == key {
			return o.Value
		}
	}
	return ""
}

func TestStateMachineVersionAliasLifecycle(t *testing.T) {
	b := newTestBed(t)
	ctx := context.Background()
	const arn = "arn:aws:states:us-east-1:123456789012:stateMachine:nightly"

	r, err := b.deploy(t, smTemplate, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Machine created", "Version created", "Live created"}, actions(r))
	require.Equal(t, arn, smOutput(r, "Arn"))
	require.Equal(t, "nightly", smOutput(r, "Name"))
	require.Equal(t, "INITIAL", smOutput(r, "Revision"))
	require.Equal(t, arn+":1", smOutput(r, "VersionArn"))
	require.Equal(t, arn+":live", smOutput(r, "AliasArn"))
	d := b.smDefinition(t, arn)
	// Substitutions: a number and a boolean by their text, an unknown
	// placeholder left as it is, '&' not escaped.
	require.Contains(t, d.Definition, `"text": "hello & 3 true ${Unknown}"`)
	require.True(t, *d.TracingConfiguration.Enabled)
	require.Equal(t, "arn:aws:iam::123456789012:role/app-MachineRole", d.RoleArn)
	require.Equal(t, []string{arn + ":1"}, b.smVersions(t, arn))
	require.Equal(t, []string{arn + ":1"}, b.aliasRoutes(t, arn+":live"))

	// The same template again: nothing written, no new revision or
	// version.
	puts := b.records.puts
	r, err = b.deploy(t, smTemplate, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Machine unchanged", "Version unchanged", "Live unchanged"}, actions(r))
	require.Equal(t, puts, b.records.puts)
	require.Empty(t, b.smDefinition(t, arn).RevisionID)
	require.Len(t, b.smVersions(t, arn), 1)

	// A new definition: a new revision, a new version, the alias moved
	// to it, and the replaced version deleted once the alias left it.
	r, err = b.deploy(t, smTemplate, map[string]string{"Greeting": "bonjour"})
	require.NoError(t, err)
	require.Equal(t, []string{"Machine updated", "Version replaced", "Live updated"}, actions(r))
	d = b.smDefinition(t, arn)
	require.Contains(t, d.Definition, "bonjour & 3")
	require.NotEmpty(t, d.RevisionID)
	require.Equal(t, d.RevisionID, smOutput(r, "Revision"))
	require.Equal(t, []string{arn + ":2"}, b.smVersions(t, arn))
	require.Equal(t, []string{arn + ":2"}, b.aliasRoutes(t, arn+":live"))
	require.Empty(t, r.Warnings)

	// New tags only: updated in place, the same revision, no version.
	rev := d.RevisionID
	r, err = b.deploy(t, strings.Replace(smTemplate, "Value: night", "Value: day", 1), map[string]string{"Greeting": "bonjour"})
	require.NoError(t, err)
	require.Equal(t, []string{"Machine updated", "Version unchanged", "Live unchanged"}, actions(r))
	require.Equal(t, rev, b.smDefinition(t, arn).RevisionID)
	tags, err := b.svc.ListTagsForResource(ctx, &service.ListTagsForResourceInput{ResourceArn: arn})
	require.NoError(t, err)
	require.Equal(t, "day", *tags.Tags[0].Value)

	// A new name: a new state machine with its own version and alias;
	// the old one deleted, with its versions and aliases.
	r, err = b.deploy(t, smTemplate, map[string]string{"MachineName": "daily"})
	require.NoError(t, err)
	require.Equal(t, []string{"Machine replaced", "Version created", "Live created"}, actions(r))
	require.Equal(t, []string{"daily"}, b.smNames(t))
	daily := "arn:aws:states:us-east-1:123456789012:stateMachine:daily"
	require.Equal(t, []string{daily + ":1"}, b.aliasRoutes(t, daily+":live"))

	// A new type under the same name: replaced.
	r, err = b.deploy(t, smTemplate, map[string]string{"MachineName": "daily", "Kind": "EXPRESS"})
	require.NoError(t, err)
	require.Equal(t, "Machine replaced", actions(r)[0])
	require.Equal(t, "EXPRESS", b.smDefinition(t, daily).Type)

	// Deleted by hand: made again, with its version and alias.
	_, err = b.svc.DeleteStateMachine(ctx, &service.DeleteStateMachineInput{StateMachineArn: daily})
	require.NoError(t, err)
	r, err = b.deploy(t, smTemplate, map[string]string{"MachineName": "daily", "Kind": "EXPRESS"})
	require.NoError(t, err)
	require.Equal(t, []string{"Machine created", "Version created", "Live created"}, actions(r))

	// The stack deleted: the alias, then the version, then the state
	// machine (the alias routes to the version: deleting the version
	// first would be refused).
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Equal(t, []string{"Live deleted", "Version deleted", "Machine deleted"}, actions(r))
	require.Empty(t, b.smNames(t))
}

func TestReplacedVersionRetained(t *testing.T) {
	b := newTestBed(t)
	tmpl := strings.Replace(smTemplate, "    Type: AWS::StepFunctions::StateMachineVersion\n", "    Type: AWS::StepFunctions::StateMachineVersion\n    UpdateReplacePolicy: Retain\n", 1)
	_, err := b.deploy(t, tmpl, nil)
	require.NoError(t, err)
	r, err := b.deploy(t, tmpl, map[string]string{"Greeting": "hi"})
	require.NoError(t, err)
	require.Equal(t, []string{"Machine updated", "Version replaced", "Live updated"}, actions(r))
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:nightly"
	require.Equal(t, []string{arn + ":2", arn + ":1"}, b.smVersions(t, arn))
}

func TestVersionWithoutRevisionIdIsPublishedOnce(t *testing.T) {
	b := newTestBed(t)
	tmpl := strings.Replace(smTemplate, "      StateMachineRevisionId: !GetAtt Machine.StateMachineRevisionId\n", "      Description: first\n", 1)
	_, err := b.deploy(t, tmpl, nil)
	require.NoError(t, err)
	// As on CloudFormation: none of the version's properties changed, so
	// the version stays.
	r, err := b.deploy(t, tmpl, map[string]string{"Greeting": "hi"})
	require.NoError(t, err)
	require.Equal(t, []string{"Machine updated", "Version unchanged", "Live unchanged"}, actions(r))
	// A version deleted by hand is published again.
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:nightly"
	_, err = b.svc.DeleteStateMachineAlias(context.Background(), &service.DeleteStateMachineAliasInput{StateMachineAliasArn: arn + ":live"})
	require.NoError(t, err)
	_, err = b.svc.DeleteStateMachineVersion(context.Background(), &service.DeleteStateMachineVersionInput{StateMachineVersionArn: arn + ":1"})
	require.NoError(t, err)
	r, err = b.deploy(t, tmpl, map[string]string{"Greeting": "hi"})
	require.NoError(t, err)
	require.Equal(t, []string{"Machine unchanged", "Version created", "Live created"}, actions(r))
	require.Equal(t, []string{arn + ":2"}, b.aliasRoutes(t, arn+":live"))
}

func TestDefinitionStringLoggingAndDeploymentPreference(t *testing.T) {
	b := newTestBed(t)
	tmpl := `
Resources:
  Logs: {Type: AWS::Logs::LogGroup, Properties: {LogGroupName: flow-logs}}
  Flow:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      RoleArn: arn:aws:iam::123456789012:role/flow
      DefinitionString: !Sub '{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"${AWS::Region}","End":true}}}'
      LoggingConfiguration:
        Level: ALL
        IncludeExecutionData: "true"
        Destinations: [{CloudWatchLogsLogGroup: {LogGroupArn: !GetAtt Logs.Arn}}]
      EncryptionConfiguration: {Type: CUSTOMER_MANAGED_KMS_KEY, KmsKeyId: k}
  V: {Type: AWS::StepFunctions::StateMachineVersion, Properties: {StateMachineArn: !Ref Flow}}
  A:
    Type: AWS::StepFunctions::StateMachineAlias
    Properties:
      DeploymentPreference: {StateMachineVersionArn: !Ref V, Type: LINEAR, Percentage: 10, Interval: 1}
`
	r, err := b.deploy(t, tmpl, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Logs skipped", "Flow created", "V created", "A created"}, actions(r))
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:app-Flow"
	d := b.smDefinition(t, arn)
	require.Equal(t, `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"us-east-1","End":true}}}`, d.Definition)
	require.Equal(t, "ALL", *d.LoggingConfiguration.Level)
	require.True(t, *d.LoggingConfiguration.IncludeExecutionData)
	require.Equal(t, "arn:aws:iam::123456789012:role/flow", d.RoleArn)
	require.Equal(t, []string{arn + ":1"}, b.aliasRoutes(t, arn+":app-A"))
	joined := strings.Join(r.Warnings, "\n")
	require.Contains(t, joined, "Flow: EncryptionConfiguration with a customer managed KMS key is not supported here")
	require.Contains(t, joined, "A: DeploymentPreference LINEAR is done all at once here")

	// Logging off: an update, a new revision.
	r, err = b.deploy(t, strings.Replace(tmpl, "Level: ALL", "Level: \"OFF\"", 1), nil)
	require.NoError(t, err)
	require.Equal(t, "Flow updated", actions(r)[1])
	d = b.smDefinition(t, arn)
	require.Equal(t, "OFF", *d.LoggingConfiguration.Level)
	require.NotEmpty(t, d.RevisionID)
}

func TestDefinitionFromLocalAsset(t *testing.T) {
	b := newTestBed(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "asset.abc.json"), []byte("# a YAML definition\nStartAt: W\nStates:\n  W: {Type: Wait, Seconds: 1, Next: D}\n  D: {Type: Pass, Result: \"${Where}\", End: true}\n"), 0o644))
	tmpl := `
Resources:
  Flow:
    Type: AWS::StepFunctions::StateMachine
    Metadata: {"aws:asset:path": asset.abc.json, "aws:asset:property": DefinitionS3Location}
    Properties:
      DefinitionS3Location: {Bucket: cdk-assets, Key: abc.json}
      DefinitionSubstitutions: {Where: local}
`
	tp, err := cfn.Parse([]byte(tmpl))
	require.NoError(t, err)
	_, err = b.d.Deploy(context.Background(), tp, Options{StackName: "app", BaseDir: dir})
	require.NoError(t, err)
	d := b.smDefinition(t, "arn:aws:states:us-east-1:123456789012:stateMachine:app-Flow")
	require.Contains(t, d.Definition, `"Result": "local"`)
	require.Contains(t, d.Definition, `"Seconds": 1`)

	// The asset gone: an error naming the resource and the file.
	require.NoError(t, os.Remove(filepath.Join(dir, "asset.abc.json")))
	_, err = b.d.Deploy(context.Background(), tp, Options{StackName: "app", BaseDir: dir})
	require.ErrorContains(t, err, "resource Flow (AWS::StepFunctions::StateMachine): Properties.DefinitionS3Location: the definition file "+filepath.Join(dir, "asset.abc.json")+" does not exist")
}

func TestStateMachineErrorsNameTheResource(t *testing.T) {
	b := newTestBed(t)
	for _, tc := range []struct{ name, props, want string }{
		{"bad definition", `{Definition: {StartAt: Nope, States: {A: {Type: Pass, End: true}}}}`,
			"resource M (AWS::StepFunctions::StateMachine): InvalidDefinition: Invalid State Machine Definition"},
		{"no definition", `{StateMachineName: x}`,
			"resource M (AWS::StepFunctions::StateMachine): Property validation failed. Required key [DefinitionS3Location], [Definition] or [DefinitionString] not found."},
		{"two definitions", `{Definition: {}, DefinitionString: "{}"}`,
			"Please use either [DefinitionS3Location], [Definition] or [DefinitionString] but not both."},
		{"substitution of a list", `{DefinitionString: "{}", DefinitionSubstitutions: {L: [a]}}`,
			"resource M (AWS::StepFunctions::StateMachine): Properties.DefinitionSubstitutions.L: a value is a string, a number or a boolean, got a list"},
		{"endless substitutions", `{DefinitionString: "${A}", DefinitionSubstitutions: {A: "${B}", B: "${A}"}}`,
			"Properties.DefinitionSubstitutions: the substitutions bring in one another's placeholders without end"},
		{"S3 without an endpoint", `{DefinitionS3Location: {Bucket: defs, Key: flow.json}}`,
			"resource M (AWS::StepFunctions::StateMachine): Properties.DefinitionS3Location: s3://defs/flow.json: the definition is in S3 and no AWS endpoint is configured"},
		{"S3 location without a key", `{DefinitionS3Location: {Bucket: defs}}`, "Properties.DefinitionS3Location: needs a Bucket and a Key"},
		{"bad tracing", `{DefinitionString: "{}", TracingConfiguration: {Enabled: maybe}}`, "Properties.TracingConfiguration.Enabled: true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.deploy(t, "Resources:\n  M:\n    Type: AWS::StepFunctions::StateMachine\n    Properties: "+tc.props+"\n", nil)
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err := b.deploy(t, "Resources:\n  V: {Type: AWS::StepFunctions::StateMachineVersion, Properties: {StateMachineArn: arn:aws:states:us-east-1:123456789012:stateMachine:none}}\n", nil)
	require.ErrorContains(t, err, "resource V (AWS::StepFunctions::StateMachineVersion): StateMachineDoesNotExist")
	_, err = b.deploy(t, "Resources:\n  A: {Type: AWS::StepFunctions::StateMachineAlias, Properties: {Name: a}}\n", nil)
	require.ErrorContains(t, err, "resource A (AWS::StepFunctions::StateMachineAlias): Properties: an alias needs a RoutingConfiguration or a DeploymentPreference")
}

// A stack as cdk synth writes it: the bootstrap version parameter of an
// SSM type, Rules, a DefinitionString joined from parts, a role made by
// the template.
const cdkStack = `{
 "Parameters": {"BootstrapVersion": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/cdk-bootstrap/hnb659fds/version"}},
 "Rules": {"CheckBootstrapVersion": {"Assertions": [{"Assert": {"Fn::Not": [{"Fn::Contains": [["1", "2", "3", "4", "5"], {"Ref": "BootstrapVersion"}]}]}, "AssertDescription": "CDK bootstrap stack version 6 required."}]}},
 "Resources": {
  "FlowRole5B2A": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {}}},
  "Flow3E5D": {
   "Type": "AWS::StepFunctions::StateMachine",
   "Properties": {
    "RoleArn": {"Fn::GetAtt": ["FlowRole5B2A", "Arn"]},
    "DefinitionString": {"Fn::Join": ["", ["{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"Result\":\"", {"Ref": "AWS::Partition"}, "\",\"End\":true}}}"]]}
   },
   "DependsOn": ["FlowRole5B2A"],
   "UpdateReplacePolicy": "Delete",
   "DeletionPolicy": "Delete"
  }
 },
 "Outputs": {"FlowArn": {"Value": {"Ref": "Flow3E5D"}}}
}`

func TestCDKStackStateMachine(t *testing.T) {
	b := newTestBed(t)
	r, err := b.deploy(t, cdkStack, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"FlowRole5B2A skipped", "Flow3E5D created"}, actions(r))
	d := b.smDefinition(t, smOutput(r, "FlowArn"))
	require.Equal(t, "arn:aws:iam::123456789012:role/app-FlowRole5B2A", d.RoleArn)
	require.Equal(t, `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":"aws","End":true}}}`, d.Definition)
}
