package deploy

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/wiring"
)

// cdkRestAPI is shaped as CDK's LambdaRestApi synthesizes it: a proxy
// resource and the root, each with an ANY method, a deployment and its
// stage; then a Step Functions method, and an HTTP API of
// AWS::ApiGatewayV2 resources.
const cdkRestAPI = `
Resources:
  HandlerServiceRole:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument: {Version: "2012-10-17", Statement: [{Action: sts:AssumeRole, Effect: Allow, Principal: {Service: lambda.amazonaws.com}}]}
  Handler886CB40B:
    Type: AWS::Lambda::Function
    Metadata: {aws:asset:path: asset.3f2a}
    Properties:
      Code: {S3Bucket: {"Fn::Sub": "cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}"}, S3Key: 3f2a.zip}
      Handler: index.handler
      Runtime: python3.12
      Role: {"Fn::GetAtt": [HandlerServiceRole, Arn]}
    DependsOn: [HandlerServiceRole]
  Machine:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      StateMachineName: machine
      DefinitionString: '{"StartAt": "D", "States": {"D": {"Type": "Succeed"}}}'
      RoleArn: arn:aws:iam::123456789012:role/r
  Endpoint8024A810:
    Type: AWS::ApiGateway::RestApi
    Properties: {Name: Endpoint}
  EndpointDeployment318525DA:
    Type: AWS::ApiGateway::Deployment
    Properties: {Description: Automatically created by the RestApi construct, RestApiId: {Ref: Endpoint8024A810}}
    DependsOn: [EndpointproxyANYC09721C5, EndpointANY485C938B]
  EndpointDeploymentStageprodB78BEEA0:
    Type: AWS::ApiGateway::Stage
    Properties:
      DeploymentId: {Ref: EndpointDeployment318525DA}
      RestApiId: {Ref: Endpoint8024A810}
      StageName: prod
  Endpointproxy39E2174E:
    Type: AWS::ApiGateway::Resource
    Properties:
      ParentId: {"Fn::GetAtt": [Endpoint8024A810, RootResourceId]}
      PathPart: "{proxy+}"
      RestApiId: {Ref: Endpoint8024A810}
  EndpointproxyANYC09721C5:
    Type: AWS::ApiGateway::Method
    Properties:
      AuthorizationType: NONE
      HttpMethod: ANY
      Integration:
        IntegrationHttpMethod: POST
        Type: AWS_PROXY
        Uri: {"Fn::Join": ["", ["arn:", {Ref: AWS::Partition}, ":apigateway:", {Ref: AWS::Region}, ":lambda:path/2015-03-31/functions/", {"Fn::GetAtt": [Handler886CB40B, Arn]}, "/invocations"]]}
      ResourceId: {Ref: Endpointproxy39E2174E}
      RestApiId: {Ref: Endpoint8024A810}
  EndpointANY485C938B:
    Type: AWS::ApiGateway::Method
    Properties:
      AuthorizationType: NONE
      HttpMethod: ANY
      Integration:
        IntegrationHttpMethod: POST
        Type: AWS_PROXY
        Uri: {"Fn::Join": ["", ["arn:", {Ref: AWS::Partition}, ":apigateway:", {Ref: AWS::Region}, ":lambda:path/2015-03-31/functions/", {"Fn::GetAtt": [Handler886CB40B, Arn]}, "/invocations"]]}
      ResourceId: {"Fn::GetAtt": [Endpoint8024A810, RootResourceId]}
      RestApiId: {Ref: Endpoint8024A810}
  Orders:
    Type: AWS::ApiGateway::Resource
    Properties:
      ParentId: {"Fn::GetAtt": [Endpoint8024A810, RootResourceId]}
      PathPart: orders
      RestApiId: {Ref: Endpoint8024A810}
  OrderId:
    Type: AWS::ApiGateway::Resource
    Properties: {ParentId: {Ref: Orders}, PathPart: "{id}", RestApiId: {Ref: Endpoint8024A810}}
  OrderPost:
    Type: AWS::ApiGateway::Method
    Properties:
      HttpMethod: POST
      ResourceId: {Ref: OrderId}
      RestApiId: {Ref: Endpoint8024A810}
      Integration:
        Type: AWS
        IntegrationHttpMethod: POST
        Uri: {"Fn::Sub": "arn:${AWS::Partition}:apigateway:${AWS::Region}:states:action/StartSyncExecution"}
        RequestTemplates:
          application/json: {"Fn::Sub": "{\"input\": \"$util.escapeJavaScript($input.body)\", \"stateMachineArn\": \"${Machine}\"}"}
  OrderMock:
    Type: AWS::ApiGateway::Method
    Properties:
      HttpMethod: GET
      ResourceId: {Ref: Orders}
      RestApiId: {Ref: Endpoint8024A810}
      Integration: {Type: MOCK}
  Http:
    Type: AWS::ApiGatewayV2::Api
    Properties: {Name: http, ProtocolType: HTTP}
  HttpStage:
    Type: AWS::ApiGatewayV2::Stage
    Properties: {ApiId: {Ref: Http}, StageName: $default, AutoDeploy: true}
  StartInteg:
    Type: AWS::ApiGatewayV2::Integration
    Properties:
      ApiId: {Ref: Http}
      IntegrationType: AWS_PROXY
      IntegrationSubtype: StepFunctions-StartExecution
      PayloadFormatVersion: "1.0"
      CredentialsArn: arn:aws:iam::123456789012:role/r
      RequestParameters: {Input: $request.body, StateMachineArn: {Ref: Machine}}
  StartRoute:
    Type: AWS::ApiGatewayV2::Route
    Properties:
      ApiId: {Ref: Http}
      RouteKey: POST /orders
      Target: {"Fn::Join": ["", ["integrations/", {Ref: StartInteg}]]}
  FnInteg:
    Type: AWS::ApiGatewayV2::Integration
    Properties:
      ApiId: {Ref: Http}
      IntegrationType: AWS_PROXY
      IntegrationUri: {"Fn::GetAtt": [Handler886CB40B, Arn]}
      PayloadFormatVersion: "2.0"
  FnRoute:
    Type: AWS::ApiGatewayV2::Route
    Properties: {ApiId: {Ref: Http}, RouteKey: $default, Target: {"Fn::Join": ["", ["integrations/", {Ref: FnInteg}]]}}
Outputs:
  Endpoint:
    Value: {"Fn::Join": ["", ["https://", {Ref: Endpoint8024A810}, ".execute-api.", {Ref: AWS::Region}, ".", {Ref: AWS::URLSuffix}, "/", {Ref: EndpointDeploymentStageprodB78BEEA0}, "/"]]}
`

func TestAPIRoutesOfRawCloudFormation(t *testing.T) {
	base := codeFolder(t)
	b := newTestBed(t)
	w := &memWiring{wires: map[string][]wiring.Wire{}}
	b.d.Wiring, b.d.APIAddr = w, "127.0.0.1:3000"
	r, err := b.deployAt(t, cdkRestAPI, base, nil)
	require.NoError(t, err)

	restID, httpID := idHash("app/Endpoint8024A810", 10), idHash("app/Http", 10)
	machine := "arn:aws:states:us-east-1:123456789012:stateMachine:machine"
	rest := func(method, path string) apiRoute {
		return apiRoute{API: "Endpoint8024A810", APIID: restID, Type: "rest", Stage: "prod", Method: method, Path: path, Integration: "lambda", PayloadFormat: "1.0"}
	}
	require.Equal(t, map[string]apiRoute{
		"EndpointproxyANYC09721C5": rest("ANY", "/{proxy+}"),
		"EndpointANY485C938B":      rest("ANY", "/"),
		"OrderPost": {API: "Endpoint8024A810", APIID: restID, Type: "rest", Stage: "prod", Method: "POST", Path: "/orders/{id}", Integration: "states", Action: "StartSyncExecution",
			Template: `{"input": "$util.escapeJavaScript($input.body)", "stateMachineArn": "` + machine + `"}`},
		"StartRoute": {API: "Http", APIID: httpID, Type: "http", Stage: "$default", Method: "POST", Path: "/orders", Integration: "states", Action: "StartExecution",
			Parameters: map[string]string{"Input": "$request.body", "StateMachineArn": machine}},
		"FnRoute": {API: "Http", APIID: httpID, Type: "http", Stage: "$default", Method: "ANY", Path: "$default", Integration: "lambda", PayloadFormat: "2.0"},
	}, w.routes(t, "app"))
	fnWire := w.wires["app"][0]
	for _, wire := range w.wires["app"] {
		if wire.ID == "FnRoute" {
			fnWire = wire
		}
	}
	require.Equal(t, wiring.ToFunction, fnWire.Target.Type)
	require.Equal(t, "app-Handler886CB40B", fnWire.Target.Name)
	require.Contains(t, r.Warnings, `OrderMock (AWS::ApiGateway::Method): GET /orders: integration of type "mock" is not served here (aws_proxy to a function, aws to Step Functions)`)
	require.Equal(t, []ServedAPI{
		{API: "Endpoint8024A810", URL: "http://127.0.0.1:3000/prod", Routes: []string{"ANY /", "ANY /{proxy+}", "POST /orders/{id}"}},
		{API: "Http", URL: "http://127.0.0.1:3000", Routes: []string{"$default", "POST /orders"}},
	}, r.APIs)
	require.Equal(t, "https://"+restID+".execute-api.us-east-1.amazonaws.com/prod/", r.Outputs[0].Value)
	for _, c := range r.Changes {
		if c.LogicalID == "EndpointproxyANYC09721C5" || c.LogicalID == "StartRoute" {
			require.Equal(t, Created, c.Action, c.LogicalID)
		}
	}

	r, err = b.deployAt(t, cdkRestAPI, base, nil)
	require.NoError(t, err)
	require.False(t, r.Changed(), actions(r))
}

func TestRawAPIRoutesRefuseWhatTheyCannotServe(t *testing.T) {
	t.Parallel()
	api := "Resources:\n  Api: {Type: AWS::ApiGateway::RestApi, Properties: {Name: a}}\n"
	for _, c := range []struct{ tmpl, err string }{
		{api + "  M: {Type: AWS::ApiGateway::Method, Properties: {HttpMethod: GET, RestApiId: !Ref Api, ResourceId: nope, Integration: {Type: MOCK}}}\n",
			"Properties.ResourceId: nope is neither the root resource of Api nor an AWS::ApiGateway::Resource of this stack"},
		{api + "  M: {Type: AWS::ApiGateway::Method, Properties: {HttpMethod: GET, RestApiId: other, ResourceId: !GetAtt Api.RootResourceId}}\n",
			"Properties.RestApiId: other is not an AWS::ApiGateway::RestApi of this stack"},
		{"Resources:\n  H: {Type: AWS::ApiGatewayV2::Api, Properties: {Name: h, ProtocolType: HTTP}}\n  R: {Type: AWS::ApiGatewayV2::Route, Properties: {ApiId: !Ref H, RouteKey: GET, Target: integrations/x}}\n",
			`Properties.RouteKey: "GET": a route key is "METHOD /path" or $default`},
		{"Resources:\n  H: {Type: AWS::ApiGatewayV2::Api, Properties: {Name: h, ProtocolType: HTTP}}\n  R: {Type: AWS::ApiGatewayV2::Route, Properties: {ApiId: !Ref H, RouteKey: GET /x, Target: integrations/x}}\n",
			"Properties.Target: x is not an AWS::ApiGatewayV2::Integration of this stack"},
	} {
		b := newTestBed(t)
		_, err := b.deployAt(t, c.tmpl, t.TempDir(), nil)
		require.Error(t, err, c.tmpl)
		require.Contains(t, err.Error(), c.err)
	}
}
