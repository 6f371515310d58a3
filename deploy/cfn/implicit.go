package cfn

import (
	"crypto/sha256"
	"encoding/hex"
)

// addImplicit adds to a SAM template the resources SAM makes on its own
// that a template may refer to by their logical ids (SAM's "generated
// resources"): <Id>Role for a function or state machine without Role;
// ServerlessRestApi, its ServerlessRestApiProdStage and
// ServerlessRestApiDeployment<sha> for Api events with no RestApiId;
// ServerlessHttpApi and ServerlessHttpApiApiGatewayDefaultStage for
// HttpApi events with no ApiId; <Api><StageName>Stage and
// <Api>Deployment<sha> for an AWS::Serverless::Api; <Id>Url for a
// function's FunctionUrlConfig; <Id><Event>Queue (or its
// QueueLogicalId) for an EventBridgeRule or CloudWatchEvent event whose
// DeadLetterConfig is {Type: SQS} without an Arn, which then gets the
// queue's Arn (and ImplicitQueue its logical id); and, named only
// (NamedOnly: the event is a wire here), what SAM makes for an event:
// <Id><Event> (an AWS::Events::Rule for an EventBridgeRule or
// CloudWatchEvent event, an AWS::Lambda::EventSourceMapping for SQS,
// Kinesis, DynamoDB, MQ, MSK and SelfManagedKafka, an
// AWS::SNS::Subscription for SNS), <Id><Event>Permission (an
// AWS::Lambda::Permission for a function's rule, topic and bucket
// events) and <Id><Event>Role (the role of a state machine's rule). A resource the template declares itself
// is left as it is. Each is marked Implicit with the id of the resource
// it comes from.
func (t *Template) addImplicit() {
	add := func(id, typ, from string, props map[string]any) {
		if _, declared := t.Resources[id]; declared {
			return
		}
		t.Resources[id] = Resource{Type: typ, Properties: props, Implicit: from}
	}
	named := func(id, typ, from string) {
		if _, declared := t.Resources[id]; declared {
			return
		}
		t.Resources[id] = Resource{Type: typ, Implicit: from, NamedOnly: true}
	}
	for _, id := range sortedKeys(t.Resources) {
		r := t.Resources[id]
		if r.Implicit != "" {
			continue
		}
		switch r.Type {
		case "AWS::Serverless::Function", "AWS::Serverless::StateMachine":
			if _, ok := r.Properties["Role"]; !ok {
				add(id+"Role", "AWS::IAM::Role", id, nil)
			}
			if _, ok := r.Properties["FunctionUrlConfig"]; ok && r.Type == "AWS::Serverless::Function" {
				add(id+"Url", "AWS::Lambda::Url", id, nil)
			}
			events, _ := r.Properties["Events"].(map[string]any)
			for _, name := range sortedKeys(events) {
				ev, _ := events[name].(map[string]any)
				props, _ := ev["Properties"].(map[string]any)
				switch ev["Type"] {
				case "Api":
					if _, ok := props["RestApiId"]; !ok {
						add("ServerlessRestApi", "AWS::ApiGateway::RestApi", id, nil)
						add("ServerlessRestApiProdStage", "AWS::ApiGateway::Stage", id, map[string]any{"StageName": "Prod"})
						add("ServerlessRestApiDeployment"+shortHash("ServerlessRestApi"), "AWS::ApiGateway::Deployment", id, nil)
					}
				case "HttpApi":
					if _, ok := props["ApiId"]; !ok {
						add("ServerlessHttpApi", "AWS::ApiGatewayV2::Api", id, nil)
						add("ServerlessHttpApiApiGatewayDefaultStage", "AWS::ApiGatewayV2::Stage", id, map[string]any{"StageName": "$default"})
					}
				case "SQS", "Kinesis", "DynamoDB", "MQ", "MSK", "SelfManagedKafka":
					if r.Type == "AWS::Serverless::Function" {
						named(id+name, "AWS::Lambda::EventSourceMapping", id)
					}
				case "SNS":
					if r.Type == "AWS::Serverless::Function" {
						named(id+name, "AWS::SNS::Subscription", id)
						named(id+name+"Permission", "AWS::Lambda::Permission", id)
					}
				case "S3":
					if r.Type == "AWS::Serverless::Function" {
						named(id+name+"Permission", "AWS::Lambda::Permission", id)
					}
				}
				switch ev["Type"] {
				case "EventBridgeRule", "CloudWatchEvent":
					named(id+name, "AWS::Events::Rule", id)
					if r.Type == "AWS::Serverless::Function" {
						named(id+name+"Permission", "AWS::Lambda::Permission", id)
					} else {
						named(id+name+"Role", "AWS::IAM::Role", id)
					}
					dlq, _ := props["DeadLetterConfig"].(map[string]any)
					if _, hasArn := dlq["Arn"]; dlq != nil && dlq["Type"] == "SQS" && !hasArn {
						queue, _ := dlq["QueueLogicalId"].(string)
						if queue == "" {
							queue = id + name + "Queue"
						}
						add(queue, "AWS::SQS::Queue", id, nil)
						dlq["Arn"] = map[string]any{"Fn::GetAtt": []any{queue, "Arn"}}
						dlq[ImplicitQueue] = queue
					}
				}
			}
		case "AWS::Serverless::Api":
			if stage, ok := r.Properties["StageName"].(string); ok && alphanumeric(stage) {
				add(id+stage+"Stage", "AWS::ApiGateway::Stage", id, map[string]any{"StageName": stage})
			}
			add(id+"Deployment"+shortHash(id), "AWS::ApiGateway::Deployment", id, nil)
		case "AWS::Serverless::HttpApi":
			add(id+"ApiGatewayDefaultStage", "AWS::ApiGatewayV2::Stage", id, map[string]any{"StageName": "$default"})
		}
	}
}

// ImplicitQueue is the member of an event's DeadLetterConfig that names
// the dead-letter queue addImplicit made for it.
const ImplicitQueue = "ImplicitQueueLogicalId"

// shortHash is the ten hex digits SAM's generated ids end with.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:5])
}
