package restjson_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/security/sigv4auth"
	"stepwise/scheduler"
	"stepwise/scheduler/restjson"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

// panicky is the store with one schedule whose reading panics, for an
// operation that panics under the wire.
type panicky struct{ store.Executor }

func (p panicky) ScheduleGet(ctx context.Context, group, name string) (*store.Schedule, error) {
	if name == "boom" {
		panic("store exploded")
	}
	return p.Executor.ScheduleGet(ctx, group, name)
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.String()
}

type testBundle struct {
	handler *restjson.Handler
	srv     *httptest.Server
	logs    *syncBuffer
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	drv, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "db"), sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { drv.Close() })
	svc := scheduler.New(panicky{drv.Executor()}, scheduler.Config{Region: "us-east-1", Account: "123456789012"})
	logs := &syncBuffer{}
	b := &testBundle{handler: restjson.New(svc, slog.New(slog.NewTextHandler(logs, nil))), logs: logs}
	b.srv = httptest.NewServer(b.handler)
	t.Cleanup(b.srv.Close)
	return b
}

// call sends one request and returns the answer with its body read.
func (b *testBundle) call(t *testing.T, method, path, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(got)
}

func TestErrorShape(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp, body := b.call(t, http.MethodGet, "/schedules/nope", "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, "ResourceNotFoundException", resp.Header.Get("X-Amzn-ErrorType"))
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.JSONEq(t, `{"Message":"Schedule nope does not exist."}`, body)

	resp, body = b.call(t, http.MethodPatch, "/schedules", "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, "UnknownOperationException", resp.Header.Get("X-Amzn-ErrorType"))
	require.JSONEq(t, `{"Message":"No operation matches PATCH /schedules."}`, body)

	require.True(t, restjson.HandlesPath("/schedules"))
	require.True(t, restjson.HandlesPath("/schedule-groups/x"))
	require.True(t, restjson.HandlesPath("/tags/arn:aws:scheduler:us-east-1:123456789012:schedule-group/x"))
	require.False(t, restjson.HandlesPath("/tags/arn:aws:states:us-east-1:123456789012:stateMachine:x"))
	require.False(t, restjson.HandlesPath("/"))
	require.False(t, restjson.HandlesPath("/schedulesx"))
}

// Every answer names its request, a new id each: an operation's, an
// error's, a route that is none, a refusal before the API.
func TestRequestIDOnEveryAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	seen := map[string]bool{}
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/schedule-groups", ""},
		{http.MethodGet, "/schedules/nope", ""},
		{http.MethodPost, "/schedule-groups/g", "{"},
		{http.MethodPut, "/nowhere", ""},
		{http.MethodPost, "/schedule-groups/big", strings.Repeat(" ", restjson.MaxBodySize+1)},
	} {
		resp, _ := b.call(t, c.method, c.path, c.body)
		id := resp.Header.Get("x-amzn-RequestId")
		require.Len(t, id, 36, "%s %s", c.method, c.path)
		require.False(t, seen[id])
		seen[id] = true
	}
	rec := httptest.NewRecorder()
	restjson.Refuse(rec, http.StatusForbidden, "AccessDeniedException", "cross-origin")
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Len(t, rec.Header().Get("x-amzn-RequestId"), 36)
	require.Equal(t, "AccessDeniedException", rec.Header().Get("X-Amzn-ErrorType"))
	require.JSONEq(t, `{"Message":"cross-origin"}`, rec.Body.String())
}

// A body past MaxBodySize is the API's ValidationException, read no
// further than the limit; one at the limit is read.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp, body := b.call(t, http.MethodPost, "/schedule-groups/big", `{"ClientToken":"x"}`+strings.Repeat(" ", restjson.MaxBodySize))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Equal(t, "ValidationException", resp.Header.Get("X-Amzn-ErrorType"))
	require.JSONEq(t, `{"Message":"The request body is larger than 1048576 bytes."}`, body)

	at := `{"ClientToken":"x"}`
	resp, _ = b.call(t, http.MethodPost, "/schedule-groups/fits", at+strings.Repeat(" ", restjson.MaxBodySize-len(at)))
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// An operation that panics is answered 500 in the API's shape, with only
// the request id, and logged with its stack; the server goes on serving.
func TestPanicIsA500(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp, body := b.call(t, http.MethodGet, "/schedules/boom", "")
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.Equal(t, "InternalServerException", resp.Header.Get("X-Amzn-ErrorType"))
	id := resp.Header.Get("x-amzn-RequestId")
	require.JSONEq(t, `{"Message":"An internal error occurred (request `+id+`)"}`, body)
	require.NotContains(t, body, "exploded")
	logs := b.logs.String()
	require.Contains(t, logs, "scheduler: panic")
	require.Contains(t, logs, "store exploded")
	require.Contains(t, logs, "request_id="+id)
	require.Contains(t, logs, "path=/schedules/boom")
	require.Contains(t, logs, "restjson_test.panicky.ScheduleGet") // the stack

	resp, _ = b.call(t, http.MethodGet, "/schedules/nope", "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// authFunc is an Authenticator of a function.
type authFunc func(r *http.Request, body []byte) error

func (f authFunc) Authenticate(r *http.Request, body []byte) error { return f(r, body) }

// RequireAuth reads the body once, and hands it to the API as read; a
// refusal is a 403 in the API's shape with a request id; a body past the
// limit is refused before it is authenticated.
func TestRequireAuth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var authenticated []byte
	srv := httptest.NewServer(restjson.RequireAuth(b.handler, authFunc(func(r *http.Request, body []byte) error {
		authenticated = body
		if r.Header.Get("Authorization") == "" {
			return &sigv4auth.Error{Reason: sigv4auth.Missing}
		}
		return nil
	})))
	t.Cleanup(srv.Close)
	send := func(auth, body string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/schedule-groups/g", strings.NewReader(body))
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(got)
	}
	resp, body := send("", `{}`)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "MissingAuthenticationTokenException", resp.Header.Get("X-Amzn-ErrorType"))
	require.Len(t, resp.Header.Get("x-amzn-RequestId"), 36)
	require.JSONEq(t, `{"Message":"Missing Authentication Token"}`, body)

	resp, body = send("signed", `{"Tags":[{"Key":"k","Value":"v"}]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, `{"Tags":[{"Key":"k","Value":"v"}]}`, string(authenticated))
	resp, body = send("", `{"Tags":[]}`)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, body)

	authenticated = nil
	resp, _ = send("signed", strings.Repeat(" ", restjson.MaxBodySize+1))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Equal(t, "ValidationException", resp.Header.Get("X-Amzn-ErrorType"))
	require.Nil(t, authenticated)
}
