package cfn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeResolver knows the resources as the deploy command would after
// creating them: a name for Ref, an ARN for GetAtt's Arn.
type fakeResolver struct{ exports map[string]string }

func (fakeResolver) Ref(id string) (string, error) { return "ref-" + id, nil }

func (fakeResolver) GetAtt(id, attr string) (any, error) {
	switch attr {
	case "Arn":
		return "arn:aws:fake:us-east-1:123456789012:" + id, nil
	case "StreamArn":
		return "arn:aws:dynamodb:us-east-1:123456789012:table/" + id + "/stream/1", nil
	}
	return nil, fmt.Errorf("resource %s has no attribute %s", id, attr)
}

func (f fakeResolver) ImportValue(name string) (string, error) {
	if v, ok := f.exports[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("no export named %s", name)
}

const samApp = `
AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Description: Nightly orders
Parameters:
  Stage:
    Type: String
    Default: dev
    AllowedValues: [dev, prod]
    AllowedPattern: "[a-z]+"
    MinLength: 3
  Retries:
    Type: Number
    Default: 2
    MinValue: 0
    MaxValue: 5
  Zones:
    Type: CommaDelimitedList
    Default: "a, b"
Mappings:
  Sizes:
    dev: {Memory: 128}
    prod: {Memory: 1024}
Conditions:
  IsProd: !Equals [!Ref Stage, prod]
  NotProd: !Not [!Condition IsProd]
  Always: !Or [!Condition IsProd, !Condition NotProd]
Resources:
  OrdersTable:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "orders-${Stage}"
  LoadFunction:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      CodeUri: src/
      MemorySize: !FindInMap [Sizes, !Ref Stage, Memory]
      Tracing: !If [IsProd, Active, !Ref AWS::NoValue]
      Environment:
        Variables:
          TABLE: !Ref OrdersTable
          STREAM: !GetAtt OrdersTable.StreamArn
          REGION: !Ref AWS::Region
          FIRST_ZONE: !Select [0, !Ref Zones]
  Alarms:
    Type: AWS::SNS::Topic
    Condition: IsProd
  NightlyMachine:
    Type: AWS::Serverless::StateMachine
    DependsOn: OrdersTable
    Properties:
      DefinitionUri: statemachine/nightly.asl.json
      DefinitionSubstitutions:
        LoadFunctionArn: !GetAtt [LoadFunction, Arn]
        TableName: !Ref OrdersTable
        Label: !Sub
          - "${Name}-${AWS::AccountId}-${Retries}-${!Literal}"
          - Name: !Join ["-", [nightly, !Ref Stage]]
        Encoded: !Base64 hi
        Zone: !Select [1, !GetAZs ""]
        Parts: !Split [",", "x,y"]
Outputs:
  MachineArn:
    Value: !GetAtt NightlyMachine.Arn
    Export:
      Name: !Sub "${AWS::StackName}-machine"
  AlarmTopic:
    Condition: IsProd
    Value: !Ref Alarms
`

func resolveSAM(t *testing.T, params map[string]string) *Resolved {
	t.Helper()
	tpl, err := Parse([]byte(samApp))
	if err != nil {
		t.Fatal(err)
	}
	if !tpl.IsSAM() {
		t.Fatal("IsSAM is false for a SAM template")
	}
	r, err := Resolve(tpl, params, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResolveSAMApp(t *testing.T) {
	r := resolveSAM(t, map[string]string{"AWS::StackName": "orders"})
	if want := []string{"LoadFunctionRole", "NightlyMachineRole", "OrdersTable", "LoadFunction", "NightlyMachine"}; !slices.Equal(r.Order, want) {
		t.Errorf("order %v, want %v (Alarms left out by its condition; the roles SAM makes in)", r.Order, want)
	}
	if got, want := asJSON(t, r.Resources["LoadFunction"].Properties), `{"CodeUri":"src/","Environment":{"Variables":{"FIRST_ZONE":"a","REGION":"us-east-1","STREAM":"arn:aws:dynamodb:us-east-1:123456789012:table/OrdersTable/stream/1","TABLE":"ref-OrdersTable"}},"Handler":"app.handler","MemorySize":128,"Runtime":"python3.12"}`; got != want {
		t.Errorf("function's properties\n got %s\nwant %s", got, want)
	}
	if got, want := asJSON(t, r.Resources["NightlyMachine"].Properties["DefinitionSubstitutions"]), `{"Encoded":"aGk=","Label":"nightly-dev-123456789012-2-${Literal}","LoadFunctionArn":"arn:aws:fake:us-east-1:123456789012:LoadFunction","Parts":["x","y"],"TableName":"ref-OrdersTable","Zone":"us-east-1b"}`; got != want {
		t.Errorf("substitutions\n got %s\nwant %s", got, want)
	}
	if got := r.Resources["NightlyMachine"].DependsOn; !slices.Equal(got, []string{"LoadFunction", "OrdersTable"}) {
		t.Errorf("machine depends on %v", got)
	}
	if got, want := asJSON(t, r.Outputs), `{"MachineArn":{"Value":"arn:aws:fake:us-east-1:123456789012:NightlyMachine","Description":"","Export":"orders-machine"}}`; got != want {
		t.Errorf("outputs\n got %s\nwant %s", got, want)
	}
	if !r.Conditions["NotProd"] || r.Conditions["IsProd"] || !r.Conditions["Always"] {
		t.Errorf("conditions %v", r.Conditions)
	}
}

func TestConditionsFollowParameters(t *testing.T) {
	r := resolveSAM(t, map[string]string{"Stage": "prod", "AWS::Region": "eu-west-1"})
	props := r.Resources["LoadFunction"].Properties
	if props["Tracing"] != "Active" || fmt.Sprint(props["MemorySize"]) != "1024" {
		t.Errorf("prod function: Tracing %v, MemorySize %v", props["Tracing"], props["MemorySize"])
	}
	if !slices.Contains(r.Order, "Alarms") {
		t.Errorf("order %v lacks Alarms, whose condition holds", r.Order)
	}
	if r.Outputs["AlarmTopic"].Value != "ref-Alarms" {
		t.Errorf("AlarmTopic output %v", r.Outputs["AlarmTopic"])
	}
	if got := props["Environment"].(map[string]any)["Variables"].(map[string]any)["REGION"]; got != "eu-west-1" {
		t.Errorf("AWS::Region %v, want the one given", got)
	}
}

func TestSub(t *testing.T) {
	tpl, err := Parse([]byte(`
Parameters:
  Env: {Type: String, Default: test}
Resources:
  Queue: {Type: AWS::SQS::Queue}
  User:
    Type: X
    Properties:
      A: !Sub "${Env}/${Queue.Arn}/${AWS::Region}/${!Escaped}/${Queue}/${AWS::Partition}${AWS::URLSuffix}"
      B: !Sub ["${X}${ Env }", {X: !GetAtt Queue.Arn}]
      C: {"Fn::Sub": "no variables"}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(tpl, nil, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Resources["User"].Properties
	for k, want := range map[string]string{
		"A": "test/arn:aws:fake:us-east-1:123456789012:Queue/us-east-1/${Escaped}/ref-Queue/awsamazonaws.com",
		"B": "arn:aws:fake:us-east-1:123456789012:Queuetest",
		"C": "no variables",
	} {
		if p[k] != want {
			t.Errorf("%s = %q, want %q", k, p[k], want)
		}
	}
	if !slices.Equal(r.Order, []string{"Queue", "User"}) {
		t.Errorf("order %v: a ${Res.Attr} in Fn::Sub is a dependency", r.Order)
	}
}

func TestNoValueRemovesAProperty(t *testing.T) {
	tpl, err := Parse([]byte(`
Parameters:
  Debug: {Type: String, Default: "false"}
Conditions:
  Debugging: !Equals [!Ref Debug, "true"]
Resources:
  F:
    Type: AWS::Lambda::Function
    Properties:
      Name: f
      Level: !If [Debugging, DEBUG, !Ref AWS::NoValue]
      Layers: [one, !If [Debugging, two, !Ref AWS::NoValue]]
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(tpl, nil, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, r.Resources["F"].Properties); got != `{"Layers":["one"],"Name":"f"}` {
		t.Errorf("properties %s: AWS::NoValue must remove Level and the list's item", got)
	}
	r, err = Resolve(tpl, map[string]string{"Debug": "true"}, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, r.Resources["F"].Properties); got != `{"Layers":["one","two"],"Level":"DEBUG","Name":"f"}` {
		t.Errorf("properties %s with Debugging", got)
	}
}

func TestNoResolver(t *testing.T) {
	tpl, err := Parse([]byte("Resources:\n  A: {Type: X}\n  B: {Type: X, Properties: {P: !Ref A}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Prepare(tpl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Properties("B", nil); err == nil || !strings.Contains(err.Error(), "Ref to resource A, but no Resolver knows the resources") {
		t.Fatalf("error %v", err)
	}
}

func TestImportValue(t *testing.T) {
	tpl, err := Parse([]byte(`{"Resources": {"A": {"Type": "X", "Properties": {"V": {"Fn::ImportValue": "shared-bus"}, "G": {"Fn::GetAtt": "B.Arn"}}}, "B": {"Type": "Y"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(tpl, nil, fakeResolver{exports: map[string]string{"shared-bus": "arn:bus"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Resources["A"].Properties["V"] != "arn:bus" || !slices.Equal(r.Order, []string{"B", "A"}) {
		t.Errorf("A %v, order %v", r.Resources["A"].Properties, r.Order)
	}
}

func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		params    map[string]string
		want      string
	}{
		{"unknown intrinsic", "Resources:\n  Fn:\n    Type: X\n    Properties:\n      Env: {A: {\"Fn::Bogus\": x}}\n", nil,
			"template: resource Fn, Properties.Env.A.Fn::Bogus: unknown intrinsic function Fn::Bogus"},
		{"unknown ref", "Resources:\n  Fn:\n    Type: X\n    Properties: {Table: !Ref Missing}\n", nil,
			`template: resource Fn, Properties.Table.Ref: Ref to unknown parameter or resource "Missing"`},
		{"unknown getatt", "Resources:\n  Fn:\n    Type: X\n    Properties: {Table: !GetAtt Missing.Arn}\n", nil,
			`template: resource Fn, Properties.Table.Fn::GetAtt: Fn::GetAtt to unknown resource "Missing"`},
		{"unknown sub variable", "Resources:\n  Fn:\n    Type: X\n    Properties: {Table: !Sub \"${Nope}\"}\n", nil,
			`template: resource Fn, Properties.Table.Fn::Sub: Ref to unknown parameter or resource "Nope"`},
		{"unknown pseudo", "Resources:\n  Fn:\n    Type: X\n    Properties: {R: !Ref AWS::Regio}\n", nil,
			"unknown pseudo parameter AWS::Regio"},
		{"missing parameter", "Parameters:\n  Stage: {Type: String}\n  Env: {Type: String}\nResources:\n  Fn: {Type: X}\n", nil,
			"template: parameters: Parameters: [Env, Stage] must have values"},
		{"unknown parameter given", "Resources:\n  Fn: {Type: X}\n", map[string]string{"Stag": "x"},
			"Parameters: [Stag] do not exist in the template"},
		{"not allowed", "Parameters:\n  Stage: {Type: String, AllowedValues: [dev, prod]}\nResources:\n  Fn: {Type: X}\n", map[string]string{"Stage": "qa"},
			"template: parameter Stage: Parameter 'Stage' must be one of AllowedValues"},
		{"not a number", "Parameters:\n  N: {Type: Number}\nResources:\n  Fn: {Type: X}\n", map[string]string{"N": "two"},
			"Parameter 'N' must be a number"},
		{"pattern", "Parameters:\n  P: {Type: String, AllowedPattern: \"[a-z]+\"}\nResources:\n  Fn: {Type: X}\n", map[string]string{"P": "abc1"},
			"Parameter 'P' must match pattern [a-z]+"},
		{"too short", "Parameters:\n  P: {Type: String, MinLength: 3}\nResources:\n  Fn: {Type: X}\n", map[string]string{"P": "ab"},
			"Parameter 'P' must contain at least 3 characters"},
		{"too long", "Parameters:\n  P: {Type: String, MaxLength: 2}\nResources:\n  Fn: {Type: X}\n", map[string]string{"P": "abc"},
			"Parameter 'P' must contain at most 2 characters"},
		{"too small", "Parameters:\n  P: {Type: Number, MinValue: 1}\nResources:\n  Fn: {Type: X}\n", map[string]string{"P": "0"},
			"Parameter 'P' must be a number not less than 1"},
		{"too big", "Parameters:\n  P: {Type: Number, MaxValue: 5.5}\nResources:\n  Fn: {Type: X}\n", map[string]string{"P": "6"},
			"Parameter 'P' must be a number not greater than 5.5"},
		{"cycle", "Resources:\n  A: {Type: X, Properties: {P: !GetAtt B.Arn}}\n  B: {Type: X, Properties: {P: !Sub \"${C}\"}}\n  C: {Type: X, DependsOn: A}\n  D: {Type: X, Properties: {P: !Ref A}}\n", nil,
			"template: resources: Circular dependency between resources: [A, B, C]"},
		{"self reference", "Resources:\n  A: {Type: X, Properties: {P: !GetAtt A.Arn}}\n", nil,
			"Circular dependency between resources: [A]"},
		{"NoValue in Sub", "Resources:\n  A: {Type: X, Properties: {P: !Sub \"${AWS::NoValue}\"}}\n", nil,
			"Fn::Sub variable ${AWS::NoValue} is AWS::NoValue, not a string"},
		{"unknown DependsOn", "Resources:\n  A: {Type: X, DependsOn: [Nope]}\n", nil,
			`template: resource A, DependsOn: DependsOn unknown resource "Nope"`},
		{"malformed Join", "Resources:\n  Fn:\n    Type: X\n    Properties: {P: !Join [\",\"]}\n", nil,
			"template: resource Fn, Properties.P.Fn::Join: Fn::Join takes a list of 2 items, got a list of 1"},
		{"malformed Sub", "Resources:\n  Fn:\n    Type: X\n    Properties: {P: !Sub [\"${A}\"]}\n", nil,
			"Properties.P.Fn::Sub: Fn::Sub takes a string or a list of 2 items"},
		{"unclosed Sub", "Resources:\n  Fn:\n    Type: X\n    Properties: {P: !Sub \"${A\"}\n", nil,
			"unclosed ${"},
		{"Select out of range", "Resources:\n  Fn:\n    Type: X\n    Properties: {P: !Select [3, [a]]}\n", nil,
			`Fn::Select index "3" is not within the list of 1`},
		{"FindInMap missing key", "Mappings: {M: {a: {b: c}}}\nResources:\n  Fn:\n    Type: X\n    Properties: {P: !FindInMap [M, a, z]}\n", nil,
			`mapping "M", key "a" has no key "z"`},
		{"If unknown condition", "Resources:\n  Fn:\n    Type: X\n    Properties: {P: !If [Nope, a, b]}\n", nil,
			`template: resource Fn, Properties.P.Fn::If[0]: unknown condition "Nope"`},
		{"condition not boolean", "Conditions:\n  C: !Ref AWS::Region\nResources:\n  Fn: {Type: X}\n", nil,
			"template: condition C: a condition must evaluate to true or false"},
		{"condition cycle", "Conditions:\n  A: !Not [!Condition B]\n  B: !Not [!Condition A]\nResources:\n  Fn: {Type: X}\n", nil,
			"circular condition: A → B → A"},
		{"condition refers to resource", "Conditions:\n  A: !Equals [!Ref Fn, x]\nResources:\n  Fn: {Type: X}\n", nil,
			"template: condition A, Fn::Equals[0].Ref: Ref to resource Fn, which a condition cannot refer to"},
		{"resource's unknown condition", "Resources:\n  Fn: {Type: X, Condition: Nope}\n", nil,
			`template: resource Fn, Condition: unknown condition "Nope"`},
		{"ref to excluded resource", "Conditions:\n  No: !Equals [a, b]\nResources:\n  A: {Type: X, Condition: No}\n  B: {Type: X, Properties: {P: !Ref A}}\n", nil,
			"template: resource B, Properties.P.Ref: Ref to resource A, which its Condition leaves out"},
		{"resolver error", "Resources:\n  A: {Type: X}\n  B: {Type: X, Properties: {P: !GetAtt A.Nope}}\n", nil,
			"template: resource B, Properties.P.Fn::GetAtt: Fn::GetAtt A.Nope: resource A has no attribute Nope"},
		{"output", "Resources:\n  A: {Type: X}\nOutputs:\n  O: {Value: !Ref Nope}\n", nil,
			`template: output O, Value.Ref: Ref to unknown parameter or resource "Nope"`},
		{"import without exports", "Resources:\n  A: {Type: X, Properties: {P: !ImportValue nope}}\n", nil,
			`no export named nope`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := Parse([]byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Resolve(tpl, tc.params, fakeResolver{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error\n %v\nwant one containing\n %s", err, tc.want)
			}
		})
	}
}

// A template as cdk synth writes it: JSON, a DefinitionString built with
// Fn::Join, the bootstrap version parameter of an SSM type, Rules, and the
// metadata condition's nested Fn::Or.
const cdkApp = `{
 "Resources": {
  "HandlerServiceRole": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {}}},
  "Handler886CB40B": {
   "Type": "AWS::Lambda::Function",
   "Properties": {
    "Code": {"S3Bucket": {"Fn::Sub": "cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}"}, "S3Key": "abc.zip"},
    "Role": {"Fn::GetAtt": ["HandlerServiceRole", "Arn"]},
    "Handler": "index.handler",
    "Runtime": "nodejs20.x"
   },
   "DependsOn": ["HandlerServiceRole"]
  },
  "Machine": {
   "Type": "AWS::StepFunctions::StateMachine",
   "Properties": {
    "DefinitionString": {"Fn::Join": ["", ["{\"StartAt\":\"Call\",\"States\":{\"Call\":{\"Type\":\"Task\",\"Resource\":\"arn:", {"Ref": "AWS::Partition"}, ":states:::lambda:invoke\",\"Parameters\":{\"FunctionName\":\"", {"Fn::GetAtt": ["Handler886CB40B", "Arn"]}, "\"},\"End\":true}}}"]]}
   },
   "DependsOn": ["HandlerServiceRole"]
  },
  "CDKMetadata": {"Type": "AWS::CDK::Metadata", "Properties": {"Analytics": "v2:deflate64:x"}, "Condition": "CDKMetadataAvailable"}
 },
 "Conditions": {
  "CDKMetadataAvailable": {"Fn::Or": [{"Fn::Or": [{"Fn::Equals": [{"Ref": "AWS::Region"}, "af-south-1"]}, {"Fn::Equals": [{"Ref": "AWS::Region"}, "us-east-1"]}]}, {"Fn::Equals": [{"Ref": "AWS::Region"}, "us-west-2"]}]}
 },
 "Outputs": {"MachineArn": {"Value": {"Ref": "Machine"}}},
 "Parameters": {"BootstrapVersion": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/cdk-bootstrap/hnb659fds/version"}},
 "Rules": {"CheckBootstrapVersion": {"Assertions": [{"Assert": {"Fn::Not": [{"Fn::Contains": [["1", "2"], {"Ref": "BootstrapVersion"}]}]}}]}}
}`

func TestResolveCDKSynthOutput(t *testing.T) {
	tpl, err := Parse([]byte(cdkApp))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(tpl, nil, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"CDKMetadata", "HandlerServiceRole", "Handler886CB40B", "Machine"}; !slices.Equal(r.Order, want) {
		t.Errorf("order %v, want %v", r.Order, want)
	}
	var def map[string]any
	if err := json.Unmarshal([]byte(r.Resources["Machine"].Properties["DefinitionString"].(string)), &def); err != nil {
		t.Fatalf("DefinitionString is not JSON: %v", err)
	}
	task := def["States"].(map[string]any)["Call"].(map[string]any)
	if task["Resource"] != "arn:aws:states:::lambda:invoke" || task["Parameters"].(map[string]any)["FunctionName"] != "arn:aws:fake:us-east-1:123456789012:Handler886CB40B" {
		t.Errorf("definition's task %v", task)
	}
	if got := r.Resources["Handler886CB40B"].Properties["Code"].(map[string]any)["S3Bucket"]; got != "cdk-hnb659fds-assets-123456789012-us-east-1" {
		t.Errorf("asset bucket %v", got)
	}
	if r.Outputs["MachineArn"].Value != "ref-Machine" {
		t.Errorf("outputs %v", r.Outputs)
	}
}
