package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/wiring"
)

// memWiring keeps the wires it is given.
type memWiring struct {
	mu    sync.Mutex
	wires map[string][]wiring.Wire
}

func (m *memWiring) SetWires(_ context.Context, stack string, wires []wiring.Wire) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wires[stack] = wires
	return nil
}

// routes are the stack's api wires, by id, their sources decoded.
func (m *memWiring) routes(t *testing.T, stack string) map[string]apiRoute {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]apiRoute{}
	for _, w := range m.wires[stack] {
		if w.Kind != "api" {
			continue
		}
		var r apiRoute
		require.NoError(t, json.Unmarshal(w.Source, &r))
		out[w.ID] = r
	}
	return out
}

const apisTemplate = `
Transform: AWS::Serverless-2016-10-31
Globals:
  Function: {Runtime: python3.12, CodeUri: src/, Handler: app.handler}
Resources:
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: hello
      Events:
        Get: {Type: Api, Properties: {Path: "/hello/{name}", Method: GET}}
        Mine: {Type: Api, Properties: {Path: /mine, Method: any, RestApiId: !Ref MyApi}}
        V1: {Type: HttpApi, Properties: {Path: /v1, Method: post, PayloadFormatVersion: "1.0"}}
        All: {Type: HttpApi}
  MyApi:
    Type: AWS::Serverless::Api
    Properties:
      StageName: dev
      DefinitionUri: openapi.yaml
  Http:
    Type: AWS::Serverless::HttpApi
    Properties:
      DefinitionBody:
        openapi: "3.0.1"
        paths:
          /start:
            post:
              x-amazon-apigateway-integration:
                type: AWS_PROXY
                integrationSubtype: StepFunctions-StartExecution
                requestParameters: {Input: $request.body, StateMachineArn: !Ref Machine}
                payloadFormatVersion: "1.0"
          /fn:
            get:
              x-amazon-apigateway-integration:
                type: aws_proxy
                uri: !GetAtt Hello.Arn
                payloadFormatVersion: "2.0"
          /mock:
            get:
              x-amazon-apigateway-integration: {type: mock}
  Machine:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: machine
      Definition: {StartAt: D, States: {D: {Type: Succeed}}}
      Events:
        Post: {Type: Api, Properties: {Path: /orders, Method: post, RestApiId: !Ref MyApi, UnescapeMappingTemplate: true}}
`

const apisOpenAPI = `
openapi: "3.0.1"
paths:
  /sync/{proxy+}:
    x-amazon-apigateway-any-method:
      x-amazon-apigateway-integration:
        type: aws
        uri: arn:aws:apigateway:us-east-1:states:action/StartSyncExecution
        requestTemplates:
          application/json: '{"input": "$input.body", "stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:machine"}'
  /lambda:
    get:
      x-amazon-apigateway-integration:
        type: aws_proxy
        httpMethod: POST
        uri: arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:123456789012:function:hello/invocations
`

func TestAPIRoutesOfEventsAndOpenAPIDefinitions(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	w := &memWiring{wires: map[string][]wiring.Wire{}}
	b.d.Wiring, b.d.APIAddr = w, "127.0.0.1:3000"
	base := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(base, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "src", "app.py"), []byte("def handler(e, c):\n    return e\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(base, "openapi.yaml"), []byte(apisOpenAPI), 0o644))
	r, err := b.deployAt(t, apisTemplate, base, nil)
	require.NoError(t, err)

	routes := w.routes(t, "app")
	restID := idHash("app/ServerlessRestApi", 10)
	httpID := idHash("app/ServerlessHttpApi", 10)
	machine := "arn:aws:states:us-east-1:123456789012:stateMachine:machine"
	myAPI := r.Changes[0].Physical
	for _, c := range r.Changes {
		if c.LogicalID == "MyApi" {
			myAPI = c.Physical
			require.Equal(t, Created, c.Action)
		}
	}
	require.Equal(t, map[string]apiRoute{
		"Hello/Get":  {API: "ServerlessRestApi", APIID: restID, Type: "rest", Stage: "Prod", Method: "GET", Path: "/hello/{name}", Integration: "lambda", PayloadFormat: "1.0"},
		"Hello/Mine": {API: "MyApi", APIID: myAPI, Type: "rest", Stage: "dev", Method: "ANY", Path: "/mine", Integration: "lambda", PayloadFormat: "1.0"},
		"Hello/V1":   {API: "ServerlessHttpApi", APIID: httpID, Type: "http", Stage: "$default", Method: "POST", Path: "/v1", Integration: "lambda", PayloadFormat: "1.0"},
		"Hello/All":  {API: "ServerlessHttpApi", APIID: httpID, Type: "http", Stage: "$default", Method: "ANY", Path: "$default", Integration: "lambda", PayloadFormat: "2.0"},
		"Machine/Post": {API: "MyApi", APIID: myAPI, Type: "rest", Stage: "dev", Method: "POST", Path: "/orders", Integration: "states", Action: "StartExecution",
			Template: `{"input": "$util.escapeJavaScript($input.json('$')).replaceAll("\\'", "'")", "stateMachineArn": "` + machine + `"}`},
		"MyApi/ANY /sync/{proxy+}": {API: "MyApi", APIID: myAPI, Type: "rest", Stage: "dev", Method: "ANY", Path: "/sync/{proxy+}", Integration: "states", Action: "StartSyncExecution",
			Template: `{"input": "$input.body", "stateMachineArn": "` + machine + `"}`},
		"MyApi/GET /lambda": {API: "MyApi", APIID: myAPI, Type: "rest", Stage: "dev", Method: "GET", Path: "/lambda", Integration: "lambda", PayloadFormat: "1.0"},
		"Http/POST /start": {API: "Http", APIID: routes["Http/POST /start"].APIID, Type: "http", Stage: "$default", Method: "POST", Path: "/start", Integration: "states", Action: "StartExecution",
			Parameters: map[string]string{"Input": "$request.body", "StateMachineArn": machine}},
		"Http/GET /fn": {API: "Http", APIID: routes["Http/GET /fn"].APIID, Type: "http", Stage: "$default", Method: "GET", Path: "/fn", Integration: "lambda", PayloadFormat: "2.0"},
	}, routes)
	require.Contains(t, r.Warnings, `Http (AWS::Serverless::HttpApi): DefinitionBody GET /mock: integration of type "mock" is not served here (aws_proxy to a function, aws to Step Functions)`)

	// The report says where each API is served.
	require.Equal(t, []ServedAPI{
		{API: "Http", URL: "http://127.0.0.1:3000", Routes: []string{"GET /fn", "POST /start"}},
		{API: "MyApi", URL: "http://127.0.0.1:3000/dev", Routes: []string{"ANY /mine", "ANY /sync/{proxy+}", "GET /lambda", "POST /orders"}},
		{API: "ServerlessHttpApi", URL: "http://127.0.0.1:3000", Routes: []string{"$default", "POST /v1"}},
		{API: "ServerlessRestApi", URL: "http://127.0.0.1:3000/Prod", Routes: []string{"GET /hello/{name}"}},
	}, r.APIs)
	var text bytes.Buffer
	r.WriteText(&text)
	require.Contains(t, text.String(), "APIs served locally:\n  Http http://127.0.0.1:3000/ (GET /fn, POST /start)\n")

	// Deployed again unchanged, the APIs are unchanged.
	r, err = b.deployAt(t, apisTemplate, base, nil)
	require.NoError(t, err)
	require.False(t, r.Changed(), actions(r))
}

func TestAPIEventsRefuseWhatTheyCannotServe(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(base, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "src", "app.py"), []byte("def handler(e, c):\n    return e\n"), 0o644))
	fn := "Transform: AWS::Serverless-2016-10-31\nResources:\n  Fn: {Type: AWS::Serverless::Function, Properties: {Runtime: python3.12, CodeUri: src/, Handler: app.handler, Events: {E: %s}}}\n"
	for _, c := range []struct{ tmpl, err string }{
		{fmt.Sprintf(fn, `{Type: Api, Properties: {Path: /x}}`), "Properties.Events.E.Properties.Path: an Api event needs Path and Method"},
		{fmt.Sprintf(fn, `{Type: Api, Properties: {Path: /x, Method: get, RestApiId: nope}}`), "is not an API of this stack"},
		{"Transform: AWS::Serverless-2016-10-31\nResources:\n  A: {Type: AWS::Serverless::Api, Properties: {StageName: s, DefinitionUri: missing.yaml}}\n", "the OpenAPI file " + filepath.Join(base, "missing.yaml") + " does not exist"},
		{"Transform: AWS::Serverless-2016-10-31\nResources:\n  A: {Type: AWS::Serverless::Api, Properties: {DefinitionBody: {}}}\n", "an AWS::Serverless::Api needs a StageName"},
	} {
		b := newTestBed(t)
		_, err := b.deployAt(t, c.tmpl, base, nil)
		require.Error(t, err, c.tmpl)
		require.Contains(t, err.Error(), c.err)
	}
}
