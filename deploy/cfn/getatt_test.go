package cfn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The attribute table gives the attributes CloudFormation documents for
// a type, each with the form of its value, and says nothing of a type it
// does not know.
func TestAttributeTable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ, attr string
		form      byte
	}{
		{"AWS::EC2::EIP", "AllocationId", 'i'},
		{"AWS::EC2::EIP", "PublicIp", 't'},
		{"AWS::ApiGateway::RestApi", "RootResourceId", 'i'},
		{"AWS::Lambda::Url", "FunctionUrl", 'u'},
		{"AWS::ElasticLoadBalancingV2::LoadBalancer", "DNSName", 'h'},
		{"AWS::ElasticLoadBalancingV2::LoadBalancer", "SecurityGroups", 'S'},
		{"AWS::RDS::DBCluster", "DBClusterArn", 'a'},
		{"AWS::RDS::DBCluster", "Endpoint.Address", 'h'},
		{"AWS::RDS::DBCluster", "Endpoint.Port", 'p'},
		{"AWS::SQS::Queue", "QueueUrl", 'u'},
		{"AWS::CloudFormation::Stack", "Outputs.BucketName", 's'},
	} {
		form, known, ok := Attribute(c.typ, c.attr)
		require.True(t, known, c.typ)
		require.True(t, ok, "%s %s", c.typ, c.attr)
		require.Equal(t, string(c.form), string(form), "%s %s", c.typ, c.attr)
	}
	for _, c := range [][2]string{
		{"AWS::EC2::EIP", "Arn"},
		{"AWS::RDS::DBCluster", "Endpoint.Nope"},
		{"AWS::Lambda::Url", "functionurl"},
		{"AWS::CloudFormation::Stack", "Outputs."},
	} {
		_, known, ok := Attribute(c[0], c[1])
		require.True(t, known, c[0])
		require.False(t, ok, "%s %s", c[0], c[1])
	}
	for _, typ := range []string{"Acme::Widget::Thing", "Custom::Thing", "AWS::CloudFormation::CustomResource", "AWS::Serverless::Function"} {
		_, known, _ := Attribute(typ, "Anything")
		require.False(t, known, typ)
	}
	require.Regexp(t, `^aws-cloudformation/cfn-lint [0-9a-f]{40} \(v[0-9.]+, \d{4}-\d\d-\d\d\), \d+ resource types$`, attrSource)
}

// An attribute a documented type does not have refuses the template at
// Prepare, in CloudFormation's words, however it is written; one of a
// type not documented passes.
func TestPrepareRefusesAnAttributeTheTypeDoesNotHave(t *testing.T) {
	t.Parallel()
	const res = "Resources:\n  Address: {Type: AWS::EC2::EIP}\n  Thing: {Type: Acme::Widget::Thing}\n"
	const want = "Template error: resource Address does not support attribute type Bogus in Fn::GetAtt"
	for name, tc := range map[string]struct{ template, want string }{
		"dotted": {res + "Outputs:\n  O: {Value: !GetAtt Address.Bogus}\n",
			"template: output O, Value.Fn::GetAtt: " + want},
		"list": {res + "  B: {Type: T, Properties: {X: {'Fn::GetAtt': [Address, Bogus]}}}\n",
			"template: resource B, Properties.X.Fn::GetAtt: " + want},
		"sub": {res + "  B: {Type: T, Properties: {X: !Sub 'ip ${Address.Bogus}'}}\n",
			"template: resource B, Properties.X.Fn::Sub: " + want},
		"nested": {res + "  Cluster: {Type: AWS::RDS::DBCluster}\nOutputs:\n  O: {Value: !GetAtt Cluster.Endpoint.Nope}\n",
			"template: output O, Value.Fn::GetAtt: Template error: resource Cluster does not support attribute type Endpoint.Nope in Fn::GetAtt"},
	} {
		t.Run(name, func(t *testing.T) {
			tp, err := Parse([]byte(tc.template))
			require.NoError(t, err)
			_, err = Prepare(tp, nil)
			require.EqualError(t, err, tc.want)
		})
	}
	tp, err := Parse([]byte(res + "  Cluster: {Type: AWS::RDS::DBCluster}\n" +
		"Outputs:\n  A: {Value: !GetAtt Address.AllocationId}\n  B: {Value: !Sub '${Address.PublicIp} ${Cluster.Endpoint.Address}'}\n" +
		"  C: {Value: !GetAtt Thing.Whatever}\n  D: {Value: {'Fn::GetAtt': [Cluster, DBClusterArn]}}\n"))
	require.NoError(t, err)
	_, err = Prepare(tp, nil)
	require.NoError(t, err)
}
