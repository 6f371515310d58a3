package deploy

import (
	"context"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/deploy/cfn"
	"stepwise/service"
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
	require.Contains(t, r.Warnings, "Balancer (AWS::ElasticLoadBalancingV2::LoadBalancer) is not made here: Fn::GetAtt Balancer.DNSName gives a made-up "+out["DNS"])
	for _, w := range r.Warnings {
		require.NotContains(t, w, "RootResourceId")
	}

	// A type made here has its own attributes only.
	_, err = b.deploy(t, "Resources:\n  A: {Type: AWS::StepFunctions::Activity, Properties: {Name: a}}\nOutputs:\n  X: {Value: !GetAtt A.DNSName}\n", nil)
	require.ErrorContains(t, err, "has no attribute DNSName")
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
