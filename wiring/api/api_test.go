package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/wiring"
)

func TestRouteMatchPicksTheMostSpecificRoute(t *testing.T) {
	t.Parallel()
	mk := func(method, path, stage string) *entry {
		return &entry{route: Route{Type: REST, Method: method, Path: path, Stage: stage}}
	}
	entries := []*entry{
		mk("GET", "/orders/{id}", "Prod"),
		mk("GET", "/orders/latest", "Prod"),
		mk("ANY", "/orders/{id}", "Prod"),
		mk("ANY", "/files/{proxy+}", "Prod"),
		mk("POST", "/orders", "Prod"),
		mk("GET", "/", "Prod"),
	}
	cases := []struct {
		method, path string
		want         int // index in entries, -1: none
		params       map[string]string
		rest         string
	}{
		{"GET", "/orders/42", 0, map[string]string{"id": "42"}, "/orders/42"},
		{"GET", "/Prod/orders/42", 0, map[string]string{"id": "42"}, "/orders/42"},
		{"GET", "/orders/latest", 1, nil, "/orders/latest"},
		{"DELETE", "/orders/42", 2, map[string]string{"id": "42"}, "/orders/42"},
		{"GET", "/files/a/b/c.txt", 3, map[string]string{"proxy": "a/b/c.txt"}, "/files/a/b/c.txt"},
		{"GET", "/Prod/files/x", 3, map[string]string{"proxy": "x"}, "/files/x"},
		{"GET", "/files", -1, nil, ""},
		{"POST", "/Prod/orders", 4, nil, "/orders"},
		{"GET", "/orders", -1, nil, ""},
		{"GET", "/Dev/orders/42", -1, nil, ""},
		{"GET", "/orders/42/items", -1, nil, ""},
		{"GET", "/", 5, nil, "/"},
		{"GET", "/Prod", 5, nil, "/"},
	}
	for _, c := range cases {
		f := find(entries, c.method, c.path)
		if c.want < 0 {
			require.Nil(t, f, "%s %s", c.method, c.path)
			continue
		}
		require.NotNil(t, f, "%s %s", c.method, c.path)
		require.Same(t, entries[c.want], f.entry, "%s %s", c.method, c.path)
		require.Equal(t, c.params, f.params, "%s %s", c.method, c.path)
		require.Equal(t, c.rest, f.path, "%s %s", c.method, c.path)
	}

	// An HTTP API's $default route takes what no other route does.
	def := &entry{route: Route{Type: HTTP, Path: Default, Stage: Default}}
	hello := &entry{route: Route{Type: HTTP, Method: "GET", Path: "/hello", Stage: Default}}
	require.Same(t, hello, find([]*entry{def, hello}, "GET", "/hello").entry)
	require.Same(t, def, find([]*entry{def, hello}, "POST", "/anything/else").entry)
}

func TestRouteCheckRefusesBadRoutes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		route Route
		err   string
	}{
		{Route{Type: "soap", Method: "GET", Path: "/a", Integration: Lambda, PayloadFormat: "1.0"}, `route type "soap"`},
		{Route{Type: REST, Method: "GET", Path: "a", Integration: Lambda, PayloadFormat: "1.0"}, "must start with /"},
		{Route{Type: REST, Method: "GET", Path: "/{a+}/b", Integration: Lambda, PayloadFormat: "1.0"}, "must be the last segment"},
		{Route{Type: REST, Method: "GET", Path: "/x{a}", Integration: Lambda, PayloadFormat: "1.0"}, "a parameter is a whole segment"},
		{Route{Type: REST, Method: "FETCH", Path: "/a", Integration: Lambda, PayloadFormat: "1.0"}, `method "FETCH"`},
		{Route{Type: REST, Method: "GET", Path: "/a", Integration: Lambda, PayloadFormat: "3.0"}, `payload format "3.0"`},
		{Route{Type: REST, Method: "GET", Path: "/a", Integration: States, Action: "StopExecution", Template: "{}"}, "StopExecution"},
		{Route{Type: REST, Method: "GET", Path: "/a", Integration: States, Action: "StartExecution", Template: "#set($x = 1)"}, "VTL directives"},
		{Route{Type: REST, Method: "GET", Path: "/a", Integration: "http"}, `integration "http"`},
		{Route{Type: REST, Path: Default, Integration: Lambda, PayloadFormat: "1.0"}, "only an HTTP API"},
	} {
		err := c.route.check()
		require.Error(t, err, "%+v", c.route)
		require.Contains(t, err.Error(), c.err)
	}
}

func TestTemplateRendersSAMsStartExecutionTemplate(t *testing.T) {
	t.Parallel()
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:Orders"
	req := &request{body: []byte(`{"item": "O'Brien's \"book\"", "n": 2, "path": "a/b", "name": "café"}`), context: map[string]string{"requestId": "r-1"}}

	tmpl, err := parseTemplate(`{"input": "$util.escapeJavaScript($input.json('$')).replaceAll("\\'", "'")", "stateMachineArn": "` + arn + `", "name": "$context.requestId"}`)
	require.NoError(t, err)
	out, err := tmpl.render(req)
	require.NoError(t, err)
	var start struct{ Input, StateMachineArn, Name string }
	require.NoError(t, json.Unmarshal([]byte(out), &start), out)
	require.Equal(t, arn, start.StateMachineArn)
	require.Equal(t, "r-1", start.Name)
	require.JSONEq(t, string(req.body), start.Input)

	// Without the unescaping, a quote is \' and the input no JSON, as on
	// AWS (hence SAM's UnescapeMappingTemplate).
	tmpl, err = parseTemplate(`{"input": "$util.escapeJavaScript($input.json('$'))"}`)
	require.NoError(t, err)
	out, err = tmpl.render(req)
	require.NoError(t, err)
	require.Contains(t, out, `O\'Brien`)
	require.Contains(t, out, `a\/b`)
	require.Contains(t, out, `caf\u00E9`)
	require.False(t, json.Valid([]byte(out)))

	// Other references and forms.
	tmpl, err = parseTemplate(`$input.json('$.n') ${input.body.length()}`)
	require.Error(t, err)
	require.Contains(t, err.Error(), "method length is not served here")
	tmpl, err = parseTemplate(`$input.json('$.n')|$!{context.requestId}|$input.params('id')|$util.base64Encode("hi")|$5|$other.thing`)
	require.NoError(t, err)
	req.params = map[string]string{"id": "42"}
	out, err = tmpl.render(req)
	require.NoError(t, err)
	require.Equal(t, `2|r-1|42|aGk=|$5|$other.thing`, out)

	for _, bad := range []string{`#if($x)a#end`, `#foreach($i in $input.path('$'))#end`, `$input.path('$')`, `$util.parseJson("x")`, `$context`, `$input.json('$'`} {
		_, err := parseTemplate(bad)
		require.Error(t, err, bad)
	}

	// A body that is no JSON.
	tmpl, _ = parseTemplate(`$input.json('$')`)
	_, err = tmpl.render(&request{body: []byte("not json")})
	var bad *BadBodyError
	require.ErrorAs(t, err, &bad)
	out, err = tmpl.render(&request{})
	require.NoError(t, err)
	require.Equal(t, "{}", out)
}

// testKind is a kind whose functions and API calls are fakes that
// record what they get.
type testKind struct {
	*kind
	mu     sync.Mutex
	events [][]byte
	calls  []string
	answer func(event []byte) ([]byte, bool)
}

func newTestKind(t *testing.T) *testKind {
	tk := &testKind{}
	env := &wiring.Env{Account: "123456789012", Region: "us-east-1",
		Invoke: func(_ context.Context, fn string, payload []byte) ([]byte, bool, error) {
			tk.mu.Lock()
			tk.events = append(tk.events, payload)
			tk.mu.Unlock()
			out, failed := tk.answer(payload)
			return out, failed, nil
		},
		Call: func(_ context.Context, op string, input []byte) ([]byte, error) {
			tk.mu.Lock()
			tk.calls = append(tk.calls, op+" "+string(input))
			tk.mu.Unlock()
			return []byte(`{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:M:1", "startDate": 1.7e9}`), nil
		},
	}
	tk.kind = &kind{env: env}
	return tk
}

func (tk *testKind) add(t *testing.T, r Route, target wiring.Target) {
	src, err := json.Marshal(r)
	require.NoError(t, err)
	_, err = tk.Add(context.Background(), wiring.Wire{Stack: "app", ID: r.Key(), Kind: "api", Source: src, Target: target})
	require.NoError(t, err)
}

func (tk *testKind) do(t *testing.T, method, target, body string, header http.Header) (*http.Response, string) {
	req := httptest.NewRequest(method, "http://127.0.0.1:3000"+target, strings.NewReader(body))
	for k, vs := range header {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	tk.ServeHTTP(rec, req)
	res := rec.Result()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestLambdaProxyEventV1AndItsResponse(t *testing.T) {
	t.Parallel()
	tk := newTestKind(t)
	tk.answer = func([]byte) ([]byte, bool) {
		return []byte(`{"statusCode": 201, "headers": {"X-One": "1"}, "multiValueHeaders": {"X-Many": ["a", "b"]}, "body": "{\"ok\": true}"}`), false
	}
	fn := wiring.Target{Type: wiring.ToFunction, Name: "Hello"}
	tk.add(t, Route{API: "ServerlessRestApi", APIID: "abc123", Type: REST, Stage: "Prod", Method: "GET", Path: "/hello/{name}", Integration: Lambda, PayloadFormat: "1.0"}, fn)

	res, body := tk.do(t, "GET", "/Prod/hello/world?x=1&x=2&y=3", "", http.Header{"X-Req": {"a", "b"}})
	require.Equal(t, 201, res.StatusCode)
	require.JSONEq(t, `{"ok": true}`, body)
	require.Equal(t, "1", res.Header.Get("X-One"))
	require.Equal(t, []string{"a", "b"}, res.Header.Values("X-Many"))

	var ev map[string]any
	require.NoError(t, json.Unmarshal(tk.events[0], &ev))
	// The fields of the docs' example of the Lambda proxy integration's
	// input (REST API).
	require.Equal(t, []string{"body", "headers", "httpMethod", "isBase64Encoded", "multiValueHeaders", "multiValueQueryStringParameters",
		"path", "pathParameters", "queryStringParameters", "requestContext", "resource", "stageVariables"}, keys(ev))
	require.Equal(t, "/hello/{name}", ev["resource"])
	require.Equal(t, "/hello/world", ev["path"])
	require.Equal(t, "GET", ev["httpMethod"])
	require.Equal(t, map[string]any{"name": "world"}, ev["pathParameters"])
	require.Equal(t, map[string]any{"x": "2", "y": "3"}, ev["queryStringParameters"])
	require.Equal(t, map[string]any{"x": []any{"1", "2"}, "y": []any{"3"}}, ev["multiValueQueryStringParameters"])
	require.Equal(t, "b", ev["headers"].(map[string]any)["X-Req"])
	require.Equal(t, []any{"a", "b"}, ev["multiValueHeaders"].(map[string]any)["X-Req"])
	require.Nil(t, ev["body"])
	require.Nil(t, ev["stageVariables"])
	require.Equal(t, false, ev["isBase64Encoded"])
	rc := ev["requestContext"].(map[string]any)
	for _, k := range []string{"accountId", "apiId", "domainName", "httpMethod", "identity", "path", "protocol", "requestId", "requestTime", "requestTimeEpoch", "resourceId", "resourcePath", "stage"} {
		require.Contains(t, rc, k)
	}
	require.Equal(t, "Prod", rc["stage"])
	require.Equal(t, "/Prod/hello/world", rc["path"])
	require.Equal(t, "/hello/{name}", rc["resourcePath"])
	require.Equal(t, "abc123", rc["apiId"])
	require.Equal(t, "123456789012", rc["accountId"])
	require.Regexp(t, `^\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000$`, rc["requestTime"])

	// The path without the stage is the same route.
	res, _ = tk.do(t, "GET", "/hello/you", "", nil)
	require.Equal(t, 201, res.StatusCode)
	require.NoError(t, json.Unmarshal(tk.events[1], &ev))
	require.Equal(t, "/Prod/hello/you", ev["requestContext"].(map[string]any)["path"])

	// A route no one has.
	res, body = tk.do(t, "POST", "/hello/world", "", nil)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.JSONEq(t, `{"message": "Missing Authentication Token"}`, body)

	// A function error, or an answer that is no proxy response: 502.
	tk.answer = func([]byte) ([]byte, bool) {
		return []byte(`{"errorType": "ValueError", "errorMessage": "boom"}`), true
	}
	res, body = tk.do(t, "GET", "/hello/world", "", nil)
	require.Equal(t, http.StatusBadGateway, res.StatusCode)
	require.JSONEq(t, `{"message": "Internal server error"}`, body)
	tk.answer = func([]byte) ([]byte, bool) { return []byte(`{"status": 200}`), false }
	res, _ = tk.do(t, "GET", "/hello/world", "", nil)
	require.Equal(t, http.StatusBadGateway, res.StatusCode)
}

func TestLambdaProxyEventV2AndItsResponse(t *testing.T) {
	t.Parallel()
	tk := newTestKind(t)
	tk.answer = func([]byte) ([]byte, bool) {
		return []byte(`{"statusCode": 200, "headers": {"content-type": "text/plain"}, "cookies": ["a=1", "b=2"], "body": "aGk=", "isBase64Encoded": true}`), false
	}
	fn := wiring.Target{Type: wiring.ToFunction, Name: "Hello"}
	tk.add(t, Route{API: "ServerlessHttpApi", APIID: "h1", Type: HTTP, Stage: Default, Method: "POST", Path: "/items/{id}", Integration: Lambda, PayloadFormat: "2.0"}, fn)

	res, body := tk.do(t, "POST", "/items/7?parameter1=value1&parameter1=value2&parameter2=value", "Hello from Lambda",
		http.Header{"Cookie": {"cookie1=x; cookie2=y"}, "Header2": {"value1", "value2"}})
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "hi", body)
	require.Equal(t, "text/plain", res.Header.Get("Content-Type"))
	require.Equal(t, []string{"a=1", "b=2"}, res.Header.Values("Set-Cookie"))

	var ev map[string]any
	require.NoError(t, json.Unmarshal(tk.events[0], &ev))
	// The fields of the docs' example of payload format 2.0 (no
	// stageVariables: none are set here).
	require.Equal(t, []string{"body", "cookies", "headers", "isBase64Encoded", "pathParameters", "queryStringParameters",
		"rawPath", "rawQueryString", "requestContext", "routeKey", "version"}, keys(ev))
	require.Equal(t, "2.0", ev["version"])
	require.Equal(t, "POST /items/{id}", ev["routeKey"])
	require.Equal(t, "/items/7", ev["rawPath"])
	require.Equal(t, "parameter1=value1&parameter1=value2&parameter2=value", ev["rawQueryString"])
	require.Equal(t, []any{"cookie1=x", "cookie2=y"}, ev["cookies"])
	require.Equal(t, "value1,value2", ev["headers"].(map[string]any)["header2"])
	require.NotContains(t, ev["headers"], "cookie")
	require.Equal(t, map[string]any{"parameter1": "value1,value2", "parameter2": "value"}, ev["queryStringParameters"])
	require.Equal(t, map[string]any{"id": "7"}, ev["pathParameters"])
	require.Equal(t, "Hello from Lambda", ev["body"])
	rc := ev["requestContext"].(map[string]any)
	require.Equal(t, []string{"accountId", "apiId", "domainName", "domainPrefix", "http", "requestId", "routeKey", "stage", "time", "timeEpoch"}, keys(rc))
	require.Equal(t, map[string]any{"method": "POST", "path": "/items/7", "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1", "userAgent": ""}, rc["http"])
	require.Equal(t, "$default", rc["stage"])

	// 2.0's simple form: an answer without statusCode is the body.
	tk.answer = func([]byte) ([]byte, bool) { return []byte(`{"hello": "world"}`), false }
	res, body = tk.do(t, "POST", "/items/7", "", nil)
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "application/json", res.Header.Get("Content-Type"))
	require.JSONEq(t, `{"hello": "world"}`, body)
}

func TestStepFunctionsIntegrations(t *testing.T) {
	t.Parallel()
	tk := newTestKind(t)
	arn := "arn:aws:states:us-east-1:123456789012:stateMachine:Orders"
	sm := wiring.Target{Type: wiring.ToStateMachine, ARN: arn}
	tk.add(t, Route{API: "Api", Type: REST, Stage: "Prod", Method: "POST", Path: "/orders", Integration: States, Action: "StartExecution",
		Template: `{"input": "$util.escapeJavaScript($input.json('$'))", "stateMachineArn": "` + arn + `"}`}, sm)
	tk.add(t, Route{API: "Http", Type: HTTP, Stage: Default, Method: "POST", Path: "/sync/{who}", Integration: States, Action: "StartSyncExecution",
		Parameters: map[string]string{"Input": "$request.body", "StateMachineArn": arn, "Name": "$request.path.who"}}, sm)

	res, body := tk.do(t, "POST", "/Prod/orders", `{"item": "book"}`, nil)
	require.Equal(t, 200, res.StatusCode)
	require.JSONEq(t, `{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:M:1", "startDate": 1.7e9}`, body)
	op, input, _ := strings.Cut(tk.calls[0], " ")
	require.Equal(t, "StartExecution", op)
	var start map[string]string
	require.NoError(t, json.Unmarshal([]byte(input), &start))
	require.Equal(t, map[string]string{"input": `{"item":"book"}`, "stateMachineArn": arn}, start)

	res, _ = tk.do(t, "POST", "/sync/ann", `{"a": 1}`, nil)
	require.Equal(t, 200, res.StatusCode)
	op, input, _ = strings.Cut(tk.calls[1], " ")
	require.Equal(t, "StartSyncExecution", op)
	var sync map[string]string
	require.NoError(t, json.Unmarshal([]byte(input), &sync))
	require.Equal(t, map[string]string{"Input": `{"a": 1}`, "StateMachineArn": arn, "Name": "ann"}, sync)

	// A body the template cannot read.
	res, body = tk.do(t, "POST", "/orders", `not json`, nil)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, body, "Could not parse request body into json")
}

// A greedy route at an API's root takes the path after the stage, not
// the stage with it.
func TestGreedyRootRouteLeavesTheStage(t *testing.T) {
	t.Parallel()
	e := &entry{route: Route{Type: REST, Stage: "prod", Method: "ANY", Path: "/{proxy+}", Integration: Lambda, PayloadFormat: "1.0"}}
	f := find([]*entry{e}, "GET", "/prod/books/7")
	require.NotNil(t, f)
	require.True(t, f.staged)
	require.Equal(t, "/books/7", f.path)
	require.Equal(t, map[string]string{"proxy": "books/7"}, f.params)
	f = find([]*entry{e}, "GET", "/books/7")
	require.NotNil(t, f)
	require.Equal(t, map[string]string{"proxy": "books/7"}, f.params)
}

// The root of a stage is the root route's, not a greedy one's.
func TestStageRootIsTheRootRoutes(t *testing.T) {
	t.Parallel()
	proxy := &entry{route: Route{Type: REST, Stage: "prod", Method: "ANY", Path: "/{proxy+}", Integration: Lambda, PayloadFormat: "1.0"}}
	root := &entry{route: Route{Type: REST, Stage: "prod", Method: "ANY", Path: "/", Integration: Lambda, PayloadFormat: "1.0"}}
	for _, p := range []string{"/prod/", "/prod", "/"} {
		f := find([]*entry{proxy, root}, "DELETE", p)
		require.NotNil(t, f, p)
		require.Same(t, root, f.entry, p)
	}
}
