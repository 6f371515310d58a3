package http_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/integration"
	httptask "stepwise/integration/http"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

type testBundle struct {
	reg *integration.Registry
}

// stubHost is where the tests' APIs listen (httptest.NewServer): HTTP
// Tasks call it only because the allow list names it.
const stubHost = "127.0.0.1"

// setup builds a registry with the given connections file content ("":
// no file) that may call the test APIs over plain HTTP.
func setup(t *testing.T, connections string) *testBundle {
	t.Helper()
	return setupWith(t, connections, stubHost)
}

// setupWith builds a registry with the given connections file content
// and allow list.
func setupWith(t *testing.T, connections string, allow ...string) *testBundle {
	t.Helper()
	cfg := integration.Config{Region: "us-east-1", Account: "123456789012", HTTPTaskAllow: allow}
	if connections != "" {
		cfg.ConnectionsFile = filepath.Join(t.TempDir(), "connections.json")
		require.NoError(t, os.WriteFile(cfg.ConnectionsFile, []byte(connections), 0o600))
	}
	reg, err := integration.New(cfg)
	require.NoError(t, err)
	return &testBundle{reg: reg}
}

// call runs an HTTP Task with the parameters through the registry.
func (b *testBundle) call(t *testing.T, params string) task.Result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	ch := make(chan task.Result, 1)
	b.reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "t1", Request: &interp.TaskRequest{Resource: httptask.Resource, Parameters: p}},
		func(r task.Result) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result")
		return task.Result{}
	}
}

// params writes the Parameters of a task calling url with method and the
// given extra members (JSON text of members, or "").
func params(url, method, extra string) string {
	p := `{"ApiEndpoint": "` + url + `", "Method": "` + method + `"`
	if extra != "" {
		p += ", " + extra
	}
	return p + "}"
}

// recorded is what a test API received.
type recorded struct {
	method string
	url    *url.URL
	header http.Header
	body   string
}

// api starts a test API on 127.0.0.1 over plain HTTP that records each
// request and answers with h.
func api(t *testing.T, h http.HandlerFunc) (*httptest.Server, <-chan recorded) {
	t.Helper()
	return apiOn(t, httptest.NewServer, h)
}

// apiOn starts a test API with start (httptest.NewServer,
// httptest.NewTLSServer, ...) that records each request and answers with h.
func apiOn(t *testing.T, start func(http.Handler) *httptest.Server, h http.HandlerFunc) (*httptest.Server, <-chan recorded) {
	t.Helper()
	reqs := make(chan recorded, 10)
	srv := start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		reqs <- recorded{method: r.Method, url: r.URL, header: r.Header.Clone(), body: string(body)}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, reqs
}

func answerJSON(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func member(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, name := range path {
		obj, ok := v.(*jsonvalue.Object)
		require.True(t, ok, "not an object at %s", name)
		v, ok = obj.Get(name)
		require.True(t, ok, "no member %s", name)
	}
	return v
}

func TestGetWithQueryParameters(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Add("X-Trace", "a")
		w.Header().Add("X-Trace", "b")
		io.WriteString(w, `{"items": [1, 2.50], "more": false}`)
	})
	b := setup(t, "")

	res := b.call(t, params(srv.URL+"/items?fixed=1", "GET", `"QueryParameters": {"tag": ["red", "blue"], "limit": "10", "page": 2}`))
	require.Nil(t, res.Failure)

	got := <-reqs
	require.Equal(t, "GET", got.method)
	require.Equal(t, "/items", got.url.Path)
	require.Equal(t, url.Values{"fixed": {"1"}, "tag": {"red", "blue"}, "limit": {"10"}, "page": {"2"}}, got.url.Query())
	require.Equal(t, "Amazon|StepFunctions|HttpInvoke|us-east-1", got.header.Get("User-Agent"))
	require.Equal(t, "bytes=0-262144", got.header.Get("Range"))
	require.Empty(t, got.body)

	out := res.Output.(*jsonvalue.Object)
	require.Equal(t, []string{"Headers", "ResponseBody", "StatusCode", "StatusText"}, out.Keys())
	require.Equal(t, `{"items":[1,2.50],"more":false}`, jsonvalue.String(member(t, out, "ResponseBody")), "a JSON body is parsed, numbers as written")
	require.Equal(t, jsonvalue.Number("200"), member(t, out, "StatusCode"))
	require.Equal(t, "OK", member(t, out, "StatusText"))
	require.Equal(t, []any{"a", "b"}, member(t, out, "Headers", "X-Trace"))
	require.Equal(t, []any{"application/json; charset=utf-8"}, member(t, out, "Headers", "Content-Type"))
}

func TestPostJSONWithHeaders(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusCreated, `{"id": "o-1"}`))
	b := setup(t, "")

	res := b.call(t, params(srv.URL+"/orders", "POST", `"Headers": {"X-Request-Id": "r-1", "X-Count": 3},
		"RequestBody": {"item": "book", "qty": 2, "tags": ["a"], "gift": null}`))
	require.Nil(t, res.Failure)

	got := <-reqs
	require.Equal(t, "POST", got.method)
	require.Equal(t, `{"item":"book","qty":2,"tags":["a"],"gift":null}`, got.body)
	require.Equal(t, "application/json; charset=UTF-8", got.header.Get("Content-Type"))
	require.Equal(t, "r-1", got.header.Get("X-Request-Id"))
	require.Equal(t, "3", got.header.Get("X-Count"))
	require.Equal(t, jsonvalue.Number("201"), member(t, res.Output, "StatusCode"))
	require.Equal(t, "Created", member(t, res.Output, "StatusText"))
	require.Equal(t, "o-1", member(t, res.Output, "ResponseBody", "id"))
}

// A string RequestBody is sent as it is, with the task's Content-Type.
func TestStringBody(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	b := setup(t, "")

	res := b.call(t, params(srv.URL, "PUT", `"Headers": {"Content-Type": "text/csv"}, "RequestBody": "a,b\n1,2"`))
	require.Nil(t, res.Failure)
	got := <-reqs
	require.Equal(t, "a,b\n1,2", got.body)
	require.Equal(t, "text/csv", got.header.Get("Content-Type"))
}

func TestURLEncodedBody(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	b := setup(t, "")
	body := `"RequestBody": {"name": "Ann Lee&co", "array": ["a", "b", "c"], "address": {"city": "Oslo"}}`
	for _, tc := range []struct {
		transform string
		want      string
	}{
		{`{"RequestBodyEncoding": "URL_ENCODED"}`, "name=Ann+Lee%26co&array[0]=a&array[1]=b&array[2]=c&address[city]=Oslo"},
		{`{"RequestBodyEncoding": "URL_ENCODED", "RequestEncodingOptions": {"ArrayFormat": "INDICES"}}`, "name=Ann+Lee%26co&array[0]=a&array[1]=b&array[2]=c&address[city]=Oslo"},
		{`{"RequestBodyEncoding": "URL_ENCODED", "RequestEncodingOptions": {"ArrayFormat": "REPEAT"}}`, "name=Ann+Lee%26co&array=a&array=b&array=c&address[city]=Oslo"},
		{`{"RequestBodyEncoding": "URL_ENCODED", "RequestEncodingOptions": {"ArrayFormat": "COMMAS"}}`, "name=Ann+Lee%26co&array=a,b,c&address[city]=Oslo"},
		{`{"RequestBodyEncoding": "URL_ENCODED", "RequestEncodingOptions": {"ArrayFormat": "BRACKETS"}}`, "name=Ann+Lee%26co&array[]=a&array[]=b&array[]=c&address[city]=Oslo"},
	} {
		res := b.call(t, params(srv.URL, "POST", body+`, "Transform": `+tc.transform))
		require.Nil(t, res.Failure, tc.transform)
		got := <-reqs
		require.Equal(t, tc.want, got.body, tc.transform)
		require.Equal(t, "application/x-www-form-urlencoded", got.header.Get("Content-Type"), tc.transform)
	}
}

func TestStatusCodeFailures(t *testing.T) {
	t.Parallel()
	notFound, _ := api(t, answerJSON(http.StatusNotFound, `{"message": "no such order"}`))
	broken, _ := api(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "database down")
	})
	b := setup(t, "")

	res := b.call(t, params(notFound.URL+"/orders/9", "GET", ""))
	require.NotNil(t, res.Failure)
	require.Equal(t, "States.Http.StatusCode.404", res.Failure.Name)
	cause, err := jsonvalue.ParseString(res.Failure.Cause)
	require.NoError(t, err, "the cause is the response as JSON text")
	require.Equal(t, jsonvalue.Number("404"), member(t, cause, "StatusCode"))
	require.Equal(t, "Not Found", member(t, cause, "StatusText"))
	require.Equal(t, "no such order", member(t, cause, "ResponseBody", "message"))

	res = b.call(t, params(broken.URL, "DELETE", ""))
	require.NotNil(t, res.Failure)
	require.Equal(t, "States.Http.StatusCode.500", res.Failure.Name)
	cause, err = jsonvalue.ParseString(res.Failure.Cause)
	require.NoError(t, err)
	require.Equal(t, "database down", member(t, cause, "ResponseBody"))
	require.Equal(t, "Internal Server Error", member(t, cause, "StatusText"))
}

func TestNonJSONResponse(t *testing.T) {
	t.Parallel()
	srv, _ := api(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", r.URL.Query().Get("type"))
		io.WriteString(w, r.URL.Query().Get("body"))
	})
	b := setup(t, "")
	for _, tc := range []struct{ contentType, body string }{
		{"text/html", "<p>hi</p>"},
		{"text/plain", `{"looks": "like json"}`},
		{"application/json", "not json"},
	} {
		q := url.Values{"type": {tc.contentType}, "body": {tc.body}}
		res := b.call(t, params(srv.URL+"/?"+q.Encode(), "GET", ""))
		require.Nil(t, res.Failure)
		require.Equal(t, tc.body, member(t, res.Output, "ResponseBody"), tc.contentType)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	b := setup(t, "")

	res := b.call(t, params("http://"+addr+"/x", "GET", ""))
	require.NotNil(t, res.Failure)
	require.Equal(t, "States.Http.Socket", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "connection refused")
}

// A task whose result is no longer wanted (it timed out or the execution
// stopped) abandons its request.
func TestCancelledCallAbandonsRequest(t *testing.T) {
	t.Parallel()
	gone := make(chan struct{}, 2)
	srv, _ := api(t, func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		gone <- struct{}{}
	})
	b := setup(t, "")
	p, err := jsonvalue.ParseString(params(srv.URL, "GET", ""))
	require.NoError(t, err)

	done := make(chan task.Result, 1)
	b.reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "t1", Request: &interp.TaskRequest{Resource: httptask.Resource, Parameters: p}},
		func(r task.Result) { done <- r })
	time.Sleep(50 * time.Millisecond)
	b.reg.Cancel("arn:x", "t1")
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the request was not abandoned")
	}
	select {
	case r := <-done:
		t.Fatalf("a cancelled task reported %+v", r)
	case <-time.After(100 * time.Millisecond):
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = b.reg.Invoke(ctx, httptask.Resource, p)
	require.Error(t, err)
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the request was not abandoned at the deadline")
	}
}

func TestPayloadLimit(t *testing.T) {
	t.Parallel()
	srv, _ := api(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "0123456789abcdef") })
	reg, err := integration.New(integration.Config{Region: "us-east-1", PayloadLimit: 10, HTTPTaskAllow: []string{stubHost}})
	require.NoError(t, err)
	b := &testBundle{reg: reg}

	res := b.call(t, params(srv.URL, "GET", ""))
	require.NotNil(t, res.Failure)
	require.Equal(t, "States.DataLimitExceeded", res.Failure.Name)
}

func TestBadParameters(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	b := setup(t, "")
	for _, tc := range []struct{ params, cause string }{
		{`{"Method": "GET"}`, "The field 'ApiEndpoint' is required but was missing"},
		{`{"ApiEndpoint": "` + srv.URL + `"}`, "The field 'Method' is required but was missing"},
		{`{"ApiEndpoint": 3, "Method": "GET"}`, "The field 'ApiEndpoint' must be a string, not number"},
		{params("ftp://example.com/x", "GET", ""), "The field 'ApiEndpoint' must be an https:// or http:// URL: 'ftp://example.com/x'"},
		{params(srv.URL, "FETCH", ""), "The field 'Method' must be one of GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS, not 'FETCH'"},
		{params(srv.URL, "GET", `"Body": {}`), "The field 'Body' is not supported by Step Functions"},
		{params(srv.URL, "GET", `"Headers": ["a"]`), "The field 'Headers' must be an object, not array"},
		{params(srv.URL, "GET", `"Headers": {"X-A": {"b": 1}}`), "The header 'Headers.X-A' must be a string, not object"},
		{params(srv.URL, "GET", `"Headers": {"Host": "evil"}`), "The header 'Host' cannot be set in an HTTP Task"},
		{params(srv.URL, "GET", `"Headers": {"X-Amz-Date": "x"}`), "The header 'X-Amz-Date' cannot be set in an HTTP Task"},
		{params(srv.URL, "GET", `"Headers": {"bad name": "x"}`), "The header name 'bad name' is not a valid HTTP header name"},
		{params(srv.URL, "GET", `"Headers": {"X-A": "1\r\nX-B: 2"}`), "The header 'Headers.X-A' has a line break or NUL in its value"},
		{params(srv.URL, "GET", `"QueryParameters": "a=b"`), "The field 'QueryParameters' must be an object, not string"},
		{params(srv.URL, "GET", `"QueryParameters": {"a": [{"b": 1}]}`), "The query parameter 'QueryParameters.a' must be a string or an array of strings, not object"},
		{params(srv.URL, "GET", `"Authentication": "arn"`), "The field 'Authentication' must be an object, not string"},
		{params(srv.URL, "GET", `"Authentication": {}`), "The field 'Authentication.ConnectionArn' must be a connection ARN string"},
		{params(srv.URL, "GET", `"Authentication": {"ConnectionArn": "x", "Role": "y"}`), "The field 'Authentication.Role' is not supported by Step Functions"},
		{params(srv.URL, "GET", `"Authentication": {"ConnectionArn": "not an arn"}`), "The field 'Authentication.ConnectionArn' is not a connection ARN: 'not an arn'"},
		{params(srv.URL, "GET", `"Transform": {"RequestBodyEncoding": "GZIP"}`), `The field 'Transform.RequestBodyEncoding' must be NONE or URL_ENCODED, not "GZIP"`},
		{params(srv.URL, "GET", `"Transform": {"RequestEncodingOptions": {"ArrayFormat": "DOTS"}}`), `The field 'Transform.RequestEncodingOptions.ArrayFormat' must be one of INDICES, REPEAT, COMMAS, BRACKETS, not "DOTS"`},
		{params(srv.URL, "GET", `"Transform": {"Encoding": "x"}`), "The field 'Transform.Encoding' is not supported by Step Functions"},
		{params(srv.URL, "POST", `"RequestBody": [1], "Transform": {"RequestBodyEncoding": "URL_ENCODED"}`), "The field 'RequestBody' must be an object to be URL_ENCODED, not array"},
		{`["not", "an", "object"]`, "The Parameters of an HTTP Task must be an object, not array"},
	} {
		res := b.call(t, tc.params)
		require.NotNil(t, res.Failure, tc.params)
		require.Equal(t, "States.TaskFailed", res.Failure.Name, tc.params)
		require.Equal(t, tc.cause, res.Failure.Cause, tc.params)
	}
	require.Empty(t, reqs, "no request was sent")
}

// decode reads a JSON text in a test.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}
