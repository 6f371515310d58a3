package deploy

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
	"stepwise/service"
	"stepwise/wiring"
)

// outputsOf is a report's outputs by key.
func outputsOf(r *Report) map[string]string {
	out := map[string]string{}
	for _, o := range r.Outputs {
		out[o.Key] = o.Value
	}
	return out
}

// deployFile parses and deploys a template of testdata/templates as
// stack "app", its paths read from there.
func (b *testBed) deployFile(t *testing.T, name string) (*Report, error) {
	t.Helper()
	data, err := os.ReadFile("testdata/templates/" + name)
	require.NoError(t, err)
	tp, err := cfn.Parse(data)
	require.NoError(t, err)
	return b.d.Deploy(context.Background(), tp, Options{StackName: "app", BaseDir: "testdata/templates"})
}

func TestSAMImplicitResourcesResolve(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	r, err := b.deployFile(t, "sam-implicit.yaml")
	require.NoError(t, err)
	out := outputsOf(r)
	require.Regexp(t, `^arn:aws:iam::123456789012:role/app-ActivityStateMachineRole-[A-Z0-9]{12}$`, out["MachineRole"])
	require.Regexp(t, `^arn:aws:iam::123456789012:role/app-HelloFunctionRole-[A-Z0-9]{12}$`, out["FunctionRole"])
	require.Equal(t, "arn:aws:iam::123456789012:role/"+out["FunctionRoleName"], out["FunctionRole"])
	require.Regexp(t, `^https://[a-z0-9]{10}\.execute-api\.us-east-1\.amazonaws\.com/Prod/hello$`, out["RestApi"])
	require.Regexp(t, `^[a-z0-9]{10}$`, out["Root"])
	require.Regexp(t, `^https://[a-z0-9]{10}\.execute-api\.us-east-1\.amazonaws\.com$`, out["HttpApi"])
	require.Equal(t, "$default", out["HttpStage"])
	require.Regexp(t, `^https://[a-z0-9]{32}\.lambda-url\.us-east-1\.on\.aws/$`, out["Url"])

	// The state machine runs as the role its GetAtt gives.
	arn := ""
	for _, c := range r.Changes {
		if c.LogicalID == "ActivityStateMachine" {
			arn = c.Physical
		}
	}
	d, err := b.svc.DescribeStateMachine(context.Background(), &service.DescribeStateMachineInput{StateMachineArn: arn})
	require.NoError(t, err)
	require.Equal(t, out["MachineRole"], d.RoleArn)
	// What SAM makes on its own is no warning.
	for _, w := range r.Warnings {
		require.NotRegexp(t, regexp.MustCompile(`Role|ServerlessRestApi|ServerlessHttpApi`), w)
	}

	// A second deploy changes nothing.
	r, err = b.deployFile(t, "sam-implicit.yaml")
	require.NoError(t, err)
	require.False(t, r.Changed(), actions(r))
}

func TestGetAttOfATypeNotMadeHereGivesAnyAttribute(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	r, err := b.deployFile(t, "getatt-any.yaml")
	require.NoError(t, err)
	out := outputsOf(r)
	require.Regexp(t, `^[a-z0-9]{12}\.us-east-1\.elasticloadbalancingv2\.amazonaws\.com$`, out["DNS"])
	require.Regexp(t, `^eipalloc-[a-z0-9]{17}$`, out["Allocation"])
	require.Equal(t, "arn:aws:rds:us-east-1:123456789012:dbcluster/app-Cluster", out["ClusterArn"])
	require.Regexp(t, `^[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com$`, out["ClusterHost"])
	require.Equal(t, "443", out["ClusterPort"])
	require.Regexp(t, `^[a-z0-9]{10}$`, out["Root"], "an API's root resource is known: no warning")
	require.Equal(t, "work", out["WorkName"])
	for _, w := range r.Warnings {
		require.NotContains(t, w, "Fn::GetAtt", "a documented attribute is no warning")
	}

	// A type made here has its own attributes only.
	_, err = b.deploy(t, "Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: a}}\nOutputs:\n  X: {Value: !GetAtt A.DNSName}\n", nil)
	require.ErrorContains(t, err, "Template error: resource A does not support attribute type DNSName in Fn::GetAtt")
}

// Fn::GetAtt gives every attribute the specification documents for a
// type not made here a value of its form, refuses one the type does not
// have (also when a parameter names it, and in a preview), and gives a
// type the specification does not know any attribute, with a warning.
func TestGetAttFollowsTheSpecification(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	r, err := b.deployFile(t, "getatt-spec.yaml")
	require.NoError(t, err)
	out := outputsOf(r)
	require.Regexp(t, `^eipalloc-[a-z0-9]{17}$`, out["Allocation"])
	require.Regexp(t, `^203\.0\.113\.\d+$`, out["PublicIp"])
	require.Regexp(t, `^[a-z0-9]{10}$`, out["Root"])
	require.Regexp(t, `^https://[a-z0-9]{32}\.lambda-url\.us-east-1\.on\.aws/$`, out["Url"])
	require.Regexp(t, `^[a-z0-9]{12}\.us-east-1\.elasticloadbalancingv2\.amazonaws\.com$`, out["DNS"])
	require.Equal(t, "arn:aws:rds:us-east-1:123456789012:dbcluster/app-Cluster", out["ClusterArn"])
	require.Regexp(t, `^[a-z0-9]{12}\.us-east-1\.rds\.amazonaws\.com$`, out["ClusterHost"])
	require.Regexp(t, `^app-Balancer-SecurityGroups$`, out["Groups"], "a list attribute is a list")
	require.Regexp(t, `^[a-z0-9]{12}\.us-east-1\.widget\.amazonaws\.com$`, out["Thing"])
	require.Equal(t, []string{"Thing (Acme::Widget::Thing) is not made here: Fn::GetAtt Thing.Endpoint gives a made-up " + out["Thing"]}, getAttWarnings(r.Warnings))

	// An attribute named by a parameter is checked when it is resolved.
	_, err = b.deploy(t, "Parameters:\n  A: {Type: String, Default: Bogus}\nResources:\n  Address: {Type: AWS::EC2::EIP}\nOutputs:\n  X: {Value: {'Fn::GetAtt': [Address, !Ref A]}}\n", nil)
	require.ErrorContains(t, err, "Template error: resource Address does not support attribute type Bogus in Fn::GetAtt")

	// validate --template reads the template as a preview does.
	tp, err := cfn.Parse([]byte("Resources:\n  Address: {Type: AWS::EC2::EIP}\n  M: {Type: AWS::StepFunctions::StateMachine, Properties: {DefinitionString: !Sub '{\"Comment\": \"${Address.Arn}\"}'}}\n"))
	require.NoError(t, err)
	_, err = PreviewStateMachines(context.Background(), tp, Options{})
	require.ErrorContains(t, err, "Template error: resource Address does not support attribute type Arn in Fn::GetAtt")
}

func getAttWarnings(ws []string) []string {
	var out []string
	for _, w := range ws {
		if strings.Contains(w, "Fn::GetAtt") {
			out = append(out, w)
		}
	}
	return out
}

func TestAWSIncludeSplicesLocalFiles(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	data, err := os.ReadFile("testdata/templates/include/main.yaml")
	require.NoError(t, err)
	tp, err := cfn.Parse(data)
	require.NoError(t, err, "a template with includes parses before its folder is known")
	r, err := b.d.Deploy(context.Background(), tp, Options{StackName: "app", BaseDir: "testdata/templates/include"})
	require.NoError(t, err)
	require.Equal(t, []string{"First created", "Second created"}, actions(r))
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:activity:first-second", outputsOf(r)["SecondArn"])
	tags, err := b.svc.ListTagsForResource(context.Background(), &service.ListTagsForResourceInput{ResourceArn: "arn:aws:states:us-east-1:123456789012:activity:first"})
	require.NoError(t, err)
	require.Len(t, tags.Tags, 1)
	require.Equal(t, "orders", *tags.Tags[0].Value)

	for _, c := range []struct{ tmpl, err string }{
		{"Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Fn::Transform: {Name: AWS::Include, Parameters: {Location: missing.yaml}}}}\n",
			"template: Resources.A.Properties.Fn::Transform: AWS::Include: "},
		{"Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Fn::Transform: {Name: MyMacro}}}\n",
			`template: Resources.A.Properties.Fn::Transform: transform "MyMacro" is not run here; the one that is: AWS::Include`},
		{"Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Fn::Transform: {Name: AWS::Include, Parameters: {Location: s3://b/k.yaml}}}}\n",
			"only a local file is read here"},
		{"Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: a, Fn::Transform: {Name: AWS::Include, Parameters: {Location: parts/tags.json}}}}\n",
			"the included file must hold an object to go beside Name, got a list"},
	} {
		tp, err := cfn.Parse([]byte(c.tmpl))
		require.NoError(t, err)
		_, err = b.d.Deploy(context.Background(), tp, Options{StackName: "bad", BaseDir: "testdata/templates/include"})
		require.ErrorContains(t, err, c.err)
	}
}

func TestDuplicateKeyIsADeployWarning(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	r, err := b.deploy(t, "Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: old, Name: new}}\n", nil)
	require.NoError(t, err)
	require.Equal(t, []string{"A created"}, actions(r))
	require.Equal(t, "new", r.Changes[0].Physical[len(r.Changes[0].Physical)-3:])
	require.Equal(t, []string{`template: line 2: duplicate key "Name": this one is taken, the one before is ignored`}, r.Warnings)
}

// What SAM makes for a function's or a state machine's events (a rule,
// an event source mapping, a subscription, their permissions and roles)
// may be named by DependsOn, Ref and Fn::GetAtt; here they are named
// only, the events being wires on the resources that declare them.
func TestSAMEventResourcesAreNamed(t *testing.T) { // not parallel: codeFolder sets the environment
	b := newTestBed(t)
	b.d.Wiring = &recWiring{wires: map[string][]wiring.Wire{}}
	r, err := b.deployAt(t, `
Transform: AWS::Serverless-2016-10-31
Resources:
  InitializeDatabase:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: src
      Handler: app.handler
      Runtime: python3.12
      Events:
        EBTrigger:
          Type: EventBridgeRule
          Properties: {Pattern: {source: [app]}}
        Jobs:
          Type: SQS
          Properties: {Queue: arn:aws:sqs:us-east-1:123456789012:jobs}
  Machine:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}
      Events:
        OnOrder:
          Type: EventBridgeRule
          Properties: {Pattern: {source: [shop]}}
  Seed:
    Type: AWS::SNS::Topic
    DependsOn: [InitializeDatabaseEBTrigger, InitializeDatabaseJobs]
Outputs:
  Rule: {Value: !GetAtt InitializeDatabaseEBTrigger.Arn}
  Mapping: {Value: !Ref InitializeDatabaseJobs}
  Role: {Value: !GetAtt MachineOnOrderRole.Arn}
`, codeFolder(t), nil)
	require.NoError(t, err)
	out := outputsOf(r)
	require.Equal(t, "arn:aws:events:us-east-1:123456789012:rule/app-InitializeDatabaseEBTrigger", out["Rule"])
	require.NotEmpty(t, out["Mapping"])
	require.Contains(t, out["Role"], ":role/app-MachineOnOrderRole")
	for _, c := range r.Changes {
		require.NotContains(t, c.LogicalID, "EBTrigger", "named only: not in the report")
	}
}
