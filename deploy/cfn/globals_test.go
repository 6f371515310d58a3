package cfn

import (
	"strings"
	"testing"
)

const samGlobals = `
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Timeout: 30
    Environment:
      Variables: {TABLE: orders, STAGE: dev}
    Layers: [global-layer]
    Tags: !Ref TagMap
  StateMachine:
    PropagateTags: true
Resources:
  One:
    Type: AWS::Serverless::Function
    Properties:
      Timeout: 60
      Environment:
        Variables: {STAGE: prod, EXTRA: "1"}
      Layers: [own-layer]
      Tags: {own: tag}
  Two:
    Type: AWS::Serverless::Function
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Tags: {owner: me}
  Alone:
    Type: AWS::Serverless::Function
    IgnoreGlobals: "*"
  Some:
    Type: AWS::Serverless::Function
    IgnoreGlobals: [Layers, Tags]
    Properties: {Timeout: 5}
  Plain:
    Type: AWS::StepFunctions::Activity
    Properties: {Name: a}
`

func TestGlobalsMergeBySAMRules(t *testing.T) {
	tpl, err := Parse([]byte(samGlobals))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		// The resource's own value wins; objects merge key by key; lists
		// join, the global items first; an intrinsic function is a single
		// value, so the resource's object replaces it.
		"One": "map[Environment:map[Variables:map[EXTRA:1 STAGE:prod TABLE:orders]] Layers:[global-layer own-layer] Runtime:python3.12 Tags:map[own:tag] Timeout:60]",
		// A resource with no Properties gets the globals.
		"Two":   "map[Environment:map[Variables:map[STAGE:dev TABLE:orders]] Layers:[global-layer] Runtime:python3.12 Tags:map[Ref:TagMap] Timeout:30]",
		"Flow":  "map[PropagateTags:true Tags:map[owner:me]]",
		"Plain": "map[Name:a]",
		// IgnoreGlobals: all of them, or those named.
		"Alone": "map[]",
		"Some":  "map[Environment:map[Variables:map[STAGE:dev TABLE:orders]] Runtime:python3.12 Timeout:5]",
	} {
		if got := sprint(tpl.Resources[id].Properties); got != want {
			t.Errorf("%s's properties\n %s\nwant\n %s", id, got, want)
		}
	}
	// Each resource has its own copy of a global value.
	tpl.Resources["Two"].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)["TABLE"] = "changed"
	if got := sprint(tpl.Resources["One"].Properties["Environment"]); !strings.Contains(got, "TABLE:orders") {
		t.Errorf("One's environment changed with Two's: %s", got)
	}
	if tpl.Globals["StateMachine"]["PropagateTags"] != true {
		t.Errorf("Globals kept: %v", tpl.Globals)
	}
}

func TestGlobalsOnlyForSAM(t *testing.T) {
	tpl, err := Parse([]byte("Globals:\n  Function: {Timeout: 3}\nResources:\n  F: {Type: AWS::Serverless::Function}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Resources["F"].Properties != nil {
		t.Errorf("globals merged into a template without SAM's transform: %v", tpl.Resources["F"].Properties)
	}
}

func TestGlobalsErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"Globals:\n  Functions: {Timeout: 3}\nResources:\n  F: {Type: X}\n",
			"'Globals' section is invalid. 'Functions' is not supported. Must be one of the following values - ['Api', 'Function', 'HttpApi', 'LayerVersion', 'SimpleTable', 'StateMachine']"},
		{"Globals:\n  Function: [a]\nResources:\n  F: {Type: X}\n", "Value of Function must be a dictionary"},
		{"Globals: [a]\nResources:\n  F: {Type: X}\n", "'Globals' section is invalid. It must be a non-empty dictionary"},
		{"Globals:\n  StateMachine: {Type: EXPRESS}\nResources:\n  F: {Type: X}\n",
			"'Globals' section is invalid. 'Type' is not a supported property of 'StateMachine'. Must be one of the following values - ['PropagateTags']"},
		{"Transform: AWS::Serverless-2016-10-31\nGlobals:\n  Function: {Timeout: 3}\nResources:\n  F: {Type: AWS::Serverless::Function, IgnoreGlobals: [Runtime]}\n",
			"Resource F has invalid resource attribute 'IgnoreGlobals' on item 'Runtime'."},
		{"Transform: AWS::Serverless-2016-10-31\nGlobals:\n  Function: {Timeout: 3}\nResources:\n  F: {Type: AWS::Serverless::Function, IgnoreGlobals: all}\n",
			"Resource F has invalid resource attribute 'IgnoreGlobals'."},
	} {
		_, err := Parse([]byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}

func TestSSMParameterTypes(t *testing.T) {
	tpl, err := Parse([]byte(`
Parameters:
  BootstrapVersion: {Type: "AWS::SSM::Parameter::Value<String>", Default: /cdk-bootstrap/hnb659fds/version, AllowedPattern: "[0-9]+"}
  Subnets: {Type: "AWS::SSM::Parameter::Value<List<String>>", Default: "a,b"}
Rules:
  CheckBootstrapVersion:
    Assertions:
      - Assert: {"Fn::Not": [{"Fn::Contains": [["1", "2"], {Ref: BootstrapVersion}]}]}
        AssertDescription: CDK bootstrap stack version 6 required.
Resources:
  R: {Type: X, Properties: {V: !Ref BootstrapVersion, S: !Ref Subnets}}
`))
	if err != nil {
		t.Fatal(err)
	}
	// The value is the Default as it is (the SSM parameter's name): its
	// AllowedPattern, which AWS applies to the SSM value, is not checked.
	r, err := Resolve(tpl, nil, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if got := sprint(r.Resources["R"].Properties); got != "map[S:[a b] V:/cdk-bootstrap/hnb659fds/version]" {
		t.Errorf("properties %s", got)
	}
	// A value given is taken.
	r, err = Resolve(tpl, map[string]string{"BootstrapVersion": "21"}, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Resources["R"].Properties["V"]; got != "21" {
		t.Errorf("V = %v", got)
	}
}

func TestUpdateReplacePolicyKept(t *testing.T) {
	tpl, err := Parse([]byte("Resources:\n  V: {Type: AWS::StepFunctions::StateMachineVersion, UpdateReplacePolicy: Retain, DeletionPolicy: Retain}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := tpl.Resources["V"]; r.UpdateReplacePolicy != "Retain" || r.DeletionPolicy != "Retain" {
		t.Errorf("policies %+v", r)
	}
}
