package deploy

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"stepwise/deploy/cfn"
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
	if name == "" && r.Def.Implicit != "" && r.Type == "AWS::IAM::Role" {
		name = x.roleName(r.ID)
	}
	if name == "" {
		name = x.name(r.ID, 64)
	}
	arn := x.guessArn(r.Type, name)
	rec := &Record{Physical: name, Attrs: map[string]any{"Arn": arn, "Name": name}, Skipped: true}
	if strings.HasPrefix(r.Type, "AWS::IAM::Role") {
		rec.Attrs["RoleId"] = "AROA" + strings.ToUpper(strings.ReplaceAll(name, "-", ""))
	}
	x.localAttrs(r, rec)
	return rec, Skipped, nil
}

// roleName is the name CloudFormation gives a role the template does
// not name: STACK-LogicalId-SUFFIX, the suffix fixed here (a hash of the
// two) where CloudFormation's is random.
func (x *run) roleName(id string) string {
	return x.name(id, 64-13) + "-" + strings.ToUpper(idHash(x.opts.StackName+"/"+id, 12))
}

// idHash is n lowercase letters and digits from s's hash: a made-up id
// that the same stack and logical id always get.
func idHash(s string, n int) string {
	const digits = "abcdefghijklmnopqrstuvwxyz0123456789"
	sum := sha256.Sum256([]byte(s))
	out := make([]byte, n)
	for i := range out {
		out[i] = digits[int(sum[i%len(sum)])%len(digits)]
	}
	return string(out)
}

// localAttrs gives the resources of some types not made here the Ref and
// attributes their service would: an API's id and root resource, a
// stage's name, a function URL.
func (x *run) localAttrs(r *resource, rec *Record) {
	key := x.opts.StackName + "/" + r.ID
	region := x.region()
	switch r.Type {
	case "AWS::ApiGateway::RestApi", samAPI:
		id := idHash(key, 10)
		rec.Physical = id
		rec.Attrs["RestApiId"] = id
		rec.Attrs["RootResourceId"] = idHash(key+"/", 10)
	case "AWS::ApiGatewayV2::Api", samHTTPAPI:
		id := idHash(key, 10)
		rec.Physical = id
		rec.Attrs["ApiId"] = id
		rec.Attrs["ApiEndpoint"] = "https://" + id + ".execute-api." + region + ".amazonaws.com"
	case "AWS::ApiGateway::Resource":
		id := idHash(key, 6)
		rec.Physical = id
		rec.Attrs["ResourceId"] = id
	case "AWS::ApiGatewayV2::Integration":
		id := idHash(key, 7)
		rec.Physical = id
		rec.Attrs["IntegrationId"] = id
	case "AWS::ApiGatewayV2::Route":
		id := idHash(key, 7)
		rec.Physical = id
		rec.Attrs["RouteId"] = id
	case "AWS::ApiGateway::Stage", "AWS::ApiGatewayV2::Stage":
		if s, ok := r.Props["StageName"].(string); ok && s != "" {
			rec.Physical = s
		}
	case "AWS::ApiGateway::Deployment":
		id := idHash(key, 6)
		rec.Physical = id
		rec.Attrs["DeploymentId"] = id
	case "AWS::Lambda::Url":
		fn := x.functionArn(x.name(r.Def.Implicit, 64))
		if target, ok := r.Props["TargetFunctionArn"].(string); ok && target != "" {
			fn = target
		}
		rec.Physical = fn
		rec.Attrs["FunctionArn"] = fn
		rec.Attrs["FunctionUrl"] = "https://" + idHash(key, 32) + ".lambda-url." + region + ".on.aws/"
	}
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

// skippedAttr is the value of attribute attr of a resource not made here
// that localAttrs did not give. Of a type CloudFormation documents, it is
// one of the form the attribute has, or CloudFormation's error when the
// type has no such attribute; of a type it does not document (a
// third-party or a new one), a value guessed from the attribute's name,
// said in a warning.
func (x *run) skippedAttr(id string, rec *Record, attr string) (any, error) {
	form, known, ok := cfn.Attribute(rec.Type, attr)
	if known && !ok {
		return nil, cfn.AttributeError(id, attr)
	}
	if known {
		return x.madeUpAttr(id, rec, attr, form), nil
	}
	v := x.madeUpAttr(id, rec, attr, nameForm(attr))
	if x.warned == nil {
		x.warned = map[string]bool{}
	}
	if key := id + "." + attr; !x.warned[key] {
		x.warned[key] = true
		x.warn("%s (%s) is not made here: Fn::GetAtt %s.%s gives a made-up %v", id, rec.Type, id, attr, v)
	}
	return v, nil
}

// nameForm is the form (as cfn.Attribute says) of an attribute of a type
// the specification does not document, guessed from its name: an ARN for
// *Arn, an id for *Id, a host name for DNSName, *Endpoint and *.Address,
// a port for *Port, a URL for *Url, else text.
func nameForm(attr string) byte {
	last := attr[strings.LastIndex(attr, ".")+1:]
	switch {
	case strings.HasSuffix(last, "Arn"):
		return 'a'
	case strings.HasSuffix(last, "Id") || strings.HasSuffix(last, "ID"):
		return 'i'
	case last == "DNSName" || strings.HasSuffix(last, "Endpoint") || last == "Address" || strings.HasSuffix(last, "Host"):
		return 'h'
	case strings.HasSuffix(last, "Port"):
		return 'p'
	case strings.HasSuffix(strings.ToLower(last), "url"):
		return 'u'
	}
	return 's'
}

// madeUpAttr is a value of the given form (as cfn.Attribute says) for
// attribute attr of a resource not made here: its ARN, an id of its
// service's form, a host name, an IP address, a port, a URL, a number,
// else STACK-LogicalId-Attribute; a list of one such for a list.
func (x *run) madeUpAttr(id string, rec *Record, attr string, form byte) any {
	if form >= 'A' && form <= 'Z' {
		return []any{x.madeUpAttr(id, rec, attr, form-'A'+'a')}
	}
	key := x.opts.StackName + "/" + id + "/" + attr
	switch form {
	case 'a':
		return x.guessArn(rec.Type, rec.Physical)
	case 'i':
		return idPrefix(rec.Type) + idHash(key, 17)
	case 'h':
		service := "local"
		if parts := strings.Split(rec.Type, "::"); len(parts) == 3 {
			service = strings.ToLower(parts[1])
		}
		return idHash(key, 12) + "." + x.region() + "." + service + ".amazonaws.com"
	case 't':
		sum := sha256.Sum256([]byte(key))
		return fmt.Sprintf("203.0.113.%d", 1+int(sum[0])%254)
	case 'p':
		return "443"
	case 'u':
		return "https://" + idHash(key, 12) + "." + x.region() + ".amazonaws.com/"
	case 'n':
		return "1"
	}
	return x.name(id, 200) + "-" + attr
}

// idPrefix is what the ids of a type's service start with (eipalloc-,
// vpc-, sg-...), for made-up ids.
func idPrefix(typ string) string {
	switch typ {
	case "AWS::EC2::EIP":
		return "eipalloc-"
	case "AWS::EC2::VPC":
		return "vpc-"
	case "AWS::EC2::Subnet":
		return "subnet-"
	case "AWS::EC2::SecurityGroup":
		return "sg-"
	case "AWS::EC2::Instance":
		return "i-"
	}
	return ""
}
