package deploy

import (
	"context"
	"strings"
)

// otherKind is every type not made here: the resource gets a name (its
// template's, or STACK-LogicalId) and an ARN of its service's form, so
// that Ref and Fn::GetAtt resolve, and is reported as skipped.
type otherKind struct{}

// quiet are the types skipped without a warning: nothing runs
// differently without them.
var quiet = map[string]bool{
	"AWS::CDK::Metadata": true,
}

// nameProps are the properties that name a resource of some types.
var nameProps = []string{"Name", "RoleName", "PolicyName", "LogGroupName", "FunctionName", "TableName", "BucketName", "QueueName", "TopicName", "KeyName", "SecretName", "StreamName", "ClusterName", "RuleName"}

func (otherKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	name := ""
	for _, p := range nameProps {
		if s, ok := r.Props[p].(string); ok && s != "" {
			name = s
			break
		}
	}
	if name == "" {
		name = x.name(r.ID, 64)
	}
	arn := x.guessArn(r.Type, name)
	rec := &Record{Physical: name, Attrs: map[string]any{"Arn": arn, "Name": name}, Skipped: true}
	if strings.HasPrefix(r.Type, "AWS::IAM::Role") {
		rec.Attrs["RoleId"] = "AROA" + strings.ToUpper(strings.ReplaceAll(name, "-", ""))
	}
	return rec, Skipped, nil
}

func (otherKind) remove(context.Context, *run, string, *Record) error { return nil }

// guessArn is the ARN a resource of a type not made here would have.
func (x *run) guessArn(typ, name string) string {
	parts := strings.Split(typ, "::")
	service := "unknown"
	res := "resource"
	if len(parts) == 3 {
		service = strings.ToLower(parts[1])
		res = strings.ToLower(parts[2])
	}
	p, region, account := x.partition(), x.region(), x.account()
	switch typ {
	case "AWS::IAM::Role":
		return "arn:" + p + ":iam::" + account + ":role/" + name
	case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
		return "arn:" + p + ":iam::" + account + ":policy/" + name
	case "AWS::Logs::LogGroup":
		return "arn:" + p + ":logs:" + region + ":" + account + ":log-group:" + name + ":*"
	case "AWS::Events::Rule":
		return "arn:" + p + ":events:" + region + ":" + account + ":rule/" + name
	case "AWS::KMS::Key":
		return "arn:" + p + ":kms:" + region + ":" + account + ":key/" + name
	}
	return "arn:" + p + ":" + service + ":" + region + ":" + account + ":" + res + "/" + name
}
