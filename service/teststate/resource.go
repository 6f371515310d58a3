package teststate

import (
	"strings"

	"stepwise/service/teststate/apishape"
)

// resource is a Task state's Resource, taken apart.
type resource struct {
	arn string
	// service and action of a Step Functions integration
	// ("arn:aws:states:::dynamodb:putItem", "arn:aws:states:::aws-sdk:kms:encrypt");
	// empty for Lambda function and activity ARNs.
	service string
	action  string
	sdk     bool // an aws-sdk integration
	// pattern is "", ".sync", ".sync:2" or ".waitForTaskToken".
	pattern  string
	activity bool
}

func parseResource(arn string) resource {
	r := resource{arn: arn}
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 || parts[0] != "arn" || parts[2] != "states" {
		return r
	}
	rest := parts[5]
	if parts[3] != "" || parts[4] != "" {
		r.activity = strings.HasPrefix(rest, "activity:")
		return r
	}
	for _, p := range []string{".waitForTaskToken", ".sync:2", ".sync"} {
		if i := strings.Index(rest, p); i >= 0 && rest[i:] == p {
			r.pattern, rest = p, rest[:i]
			break
		}
	}
	if after, ok := strings.CutPrefix(rest, "aws-sdk:"); ok {
		r.sdk, rest = true, after
	}
	r.service, r.action, _ = strings.Cut(rest, ":")
	return r
}

// needsMock reports whether TestState runs the resource only mocked.
func (r resource) needsMock() bool {
	return r.activity || r.pattern != ""
}

// optimisedServices maps the service names of optimised integrations to
// botocore's where they differ.
var optimisedServices = map[string]string{
	"states":           "stepfunctions",
	"elasticmapreduce": "emr",
}

// sdkServices maps the service names of aws-sdk integrations (the AWS SDK
// for Java's) to botocore's where they differ other than by dashes.
var sdkServices = map[string]string{
	"sfn":                     "stepfunctions",
	"cloudwatchlogs":          "logs",
	"eventbridge":             "events",
	"elasticloadbalancingv2":  "elbv2",
	"elasticloadbalancing":    "elb",
	"cognitoidentityprovider": "cognito-idp",
}

// anyJSONMembers lists, per optimised integration, the members of the
// result that hold the service's decoded JSON payload rather than the API
// model's blob.
var anyJSONMembers = map[string][]string{
	"lambda:invoke":       {"Payload"},
	"bedrock:invokeModel": {"Body"},
}

// outputShape finds the API operation whose output a mocked result of the
// resource is checked against. ok is false when there is none to check:
// HTTP and API Gateway tasks, Lambda function and activity ARNs, callback
// and ".sync" patterns (their result is not the operation's output), and
// services whose model is not embedded.
func (r resource) outputShape() (op *apishape.Operation, anyJSON []string, ok bool) {
	if r.service == "" || r.pattern != "" {
		return nil, nil, false
	}
	svc := r.service
	if r.sdk {
		svc = sdkService(svc)
	} else {
		switch svc {
		case "http", "apigateway":
			return nil, nil, false
		case "bedrock":
			if strings.EqualFold(r.action, "invokeModel") {
				svc = "bedrock-runtime"
			}
		}
		if s, ok := optimisedServices[svc]; ok {
			svc = s
		}
		anyJSON = anyJSONMembers[r.service+":"+r.action]
	}
	op, ok = apishape.Lookup(svc, r.action)
	return op, anyJSON, ok
}

// sdkService maps an aws-sdk integration's service name to botocore's.
func sdkService(name string) string {
	if s, ok := sdkServices[name]; ok {
		return s
	}
	for _, s := range apishape.Services() {
		if strings.ReplaceAll(s, "-", "") == name {
			return s
		}
	}
	return name
}
