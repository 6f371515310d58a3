package http

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/jsonvalue"
)

// FuzzParams converts any Parameters into a request: it fails the task
// or builds the request, and never panics.
func FuzzParams(f *testing.F) {
	for _, seed := range []string{
		`{"ApiEndpoint": "https://api.example.com/v1?a=1", "Method": "GET", "QueryParameters": {"a": ["x", "y"], "b": 1}}`,
		`{"ApiEndpoint": "http://h/x", "Method": "POST", "Headers": {"X-A": "1"}, "RequestBody": {"a": [1, {"b": null}], "c": {"d": [[true]]}},
			"Transform": {"RequestBodyEncoding": "URL_ENCODED", "RequestEncodingOptions": {"ArrayFormat": "COMMAS"}}}`,
		`{"ApiEndpoint": "http://h/x", "Method": "PUT", "RequestBody": "raw", "Transform": {"RequestBodyEncoding": "URL_ENCODED"}}`,
		`{"ApiEndpoint": "http://h", "Method": "GET", "Authentication": {"ConnectionArn": "arn:aws:events:us-east-1:123456789012:connection/a/b"}}`,
		`{"ApiEndpoint": "::", "Method": "get"}`,
		`[]`,
	} {
		f.Add(seed)
	}
	inv := &invoker{client: http.DefaultClient, conns: connections{"a": {AuthorizationType: authBasic, Username: "u", Password: "p",
		InvocationHTTPParameters: &httpParameters{BodyParameters: []parameter{{Key: "k", Value: "v"}}}}}}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := jsonvalue.ParseString(text)
		if err != nil {
			return
		}
		p, err := parseParams(v)
		if err != nil {
			requireTaskFailure(t, err)
			return
		}
		c, err := inv.conns.resolve(p.connectionArn)
		if err != nil {
			requireTaskFailure(t, err)
			return
		}
		if _, err := inv.newRequest(context.Background(), p, c); err != nil {
			requireTaskFailure(t, err)
		}
	})
}

func requireTaskFailure(t *testing.T, err error) {
	t.Helper()
	var f *failure.Failure
	require.True(t, errors.As(err, &f), "%v", err)
	require.Equal(t, failure.TaskFailed, f.Name)
}

// An API that does not answer in time fails the task with
// States.Http.Socket (60 seconds on AWS; shortened here).
func TestSocketTimeout(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer srv.Close()
	defer close(stop)
	inv, err := newInvoker(&integration.Config{HTTPTaskAllow: []string{"127.0.0.1"}})
	require.NoError(t, err)
	inv.(*invoker).timeout = 50 * time.Millisecond

	params, err := jsonvalue.ParseString(`{"ApiEndpoint": "` + srv.URL + `", "Method": "GET"}`)
	require.NoError(t, err)
	_, err = inv.Call(context.Background(), &integration.Request{Resource: Resource, Parameters: params})
	var f *failure.Failure
	require.True(t, errors.As(err, &f), "%v", err)
	require.Equal(t, ErrorSocket, f.Name)
	require.Equal(t, "The API did not answer within 50ms", f.Cause)
}
