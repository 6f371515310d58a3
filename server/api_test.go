package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine"
)

// probe sends method path to h and returns the status and the JSON body.
func probe(t *testing.T, h http.Handler, method, path string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	var body map[string]any
	if method != http.MethodHead {
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	}
	return rec.Code, body
}

func TestLiveness(t *testing.T) {
	t.Parallel()

	code, body := probe(t, livenessHandler(), http.MethodGet, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, map[string]any{"status": "ok"}, body)
}

func TestReadiness(t *testing.T) {
	t.Parallel()

	type bundle struct {
		resumed chan struct{}
		health  engine.Health
		pingErr error
		handler http.Handler
	}
	setupReadiness := func(t *testing.T) *bundle {
		t.Helper()
		b := &bundle{resumed: make(chan struct{}), health: engine.Health{StoreOK: true}}
		b.handler = readinessHandler(b.resumed, func() engine.Health { return b.health }, func(context.Context) error { return b.pingErr })
		return b
	}

	t.Run("Resuming", func(t *testing.T) {
		t.Parallel()
		b := setupReadiness(t)

		code, body := probe(t, b.handler, http.MethodGet, "/readyz")
		require.Equal(t, http.StatusServiceUnavailable, code)
		require.Equal(t, map[string]any{"status": "not ready", "reason": "resuming the executions that were running at start"}, body)
	})

	t.Run("Ready", func(t *testing.T) {
		t.Parallel()
		b := setupReadiness(t)

		close(b.resumed)
		code, body := probe(t, b.handler, http.MethodGet, "/readyz")
		require.Equal(t, http.StatusOK, code)
		require.Equal(t, map[string]any{"status": "ready"}, body)
	})

	t.Run("StoreNotWritable", func(t *testing.T) {
		t.Parallel()
		b := setupReadiness(t)

		close(b.resumed)
		since := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		b.health = engine.Health{StoreOK: false, Since: since, Error: "write steps: store unavailable: database or disk is full", FailedCommits: 3}
		code, body := probe(t, b.handler, http.MethodGet, "/readyz")
		require.Equal(t, http.StatusServiceUnavailable, code)
		require.Equal(t, map[string]any{
			"status": "not ready",
			"reason": "the store does not take writes: write steps: store unavailable: database or disk is full",
			"since":  "2026-03-04T05:06:07Z",
		}, body)
	})

	t.Run("DatabaseDown", func(t *testing.T) {
		t.Parallel()
		b := setupReadiness(t)

		close(b.resumed)
		b.pingErr = errors.New("store unavailable: dial tcp 127.0.0.1:5432: connection refused")
		code, body := probe(t, b.handler, http.MethodGet, "/readyz")
		require.Equal(t, http.StatusServiceUnavailable, code)
		require.Equal(t, map[string]any{"status": "not ready",
			"reason": "the database does not answer: store unavailable: dial tcp 127.0.0.1:5432: connection refused"}, body)
		b.pingErr = nil
		code, _ = probe(t, b.handler, http.MethodGet, "/readyz")
		require.Equal(t, http.StatusOK, code)
	})
}

// The database is asked at most once an interval; in between, the last
// answer stands.
func TestCachedPing(t *testing.T) {
	t.Parallel()
	calls := 0
	answer := errors.New("down")
	ping := cachedPing(func(context.Context) error { calls++; return answer }, time.Hour)
	require.Equal(t, answer, ping(context.Background()))
	answer = nil
	require.Error(t, ping(context.Background()), "the cached answer")
	require.Equal(t, 1, calls)

	ping = cachedPing(func(context.Context) error { calls++; return answer }, 0)
	require.NoError(t, ping(context.Background()))
	require.NoError(t, ping(context.Background()))
	require.Equal(t, 3, calls)
}

// TestProbeRoutes checks the probes through the server's real handler, on
// a real store and engine: the console's "GET /" shadows none of them.
func TestProbeRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	p := newAPIParts(t)
	p.cfg.AllowedHosts = []string{"example.com"} // httptest.NewRequest's host
	srv, err := p.new(t, false, nil)
	require.NoError(t, err)
	h := srv.Handler()

	// Not started: alive, not ready.
	code, _ := probe(t, h, http.MethodGet, "/healthz")
	require.Equal(t, http.StatusOK, code)
	code, body := probe(t, h, http.MethodGet, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, "not ready", body["status"])

	require.NoError(t, srv.Start(ctx))
	select {
	case <-srv.Engine().Resumed():
	case <-time.After(10 * time.Second):
		t.Fatal("the engine did not resume")
	}
	for _, path := range []string{"/healthz", "/readyz", "/health"} {
		code, body := probe(t, h, http.MethodGet, path)
		require.Equal(t, http.StatusOK, code, path)
		require.Contains(t, []any{"ok", "ready"}, body["status"], path)
		code, _ = probe(t, h, http.MethodHead, path)
		require.Equal(t, http.StatusOK, code, path)
	}

	// The console still has "/".
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html"), rec.Header().Get("Content-Type"))
	page, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	require.Contains(t, string(page), "<html")
	// Near misses are the console's, not a probe's.
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz/x", nil))
	require.NotEqual(t, "application/json", rec.Header().Get("Content-Type"))
}

// TestAuthRoutes checks the routes of a server with credentials, on a real
// store and engine: the probes, /metrics and the console's assets stay
// open, the console's pages send to the sign-in page, the API wants a
// signature, and the handler the server's own Task states call does not.
func TestAuthRoutes(t *testing.T) {
	t.Parallel()
	auth := &apiAuth{keys: map[string]string{"AKIDROUTES": "secret"}}
	api := newAPIParts(t).api(t, true, auth)
	require.NotNil(t, api.gate)

	serve := func(h http.Handler, method, path, target string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(`{}`))
		if target != "" {
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			req.Header.Set("X-Amz-Target", "AWSStepFunctions."+target)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, path := range []string{"/healthz", "/readyz", "/health", "/metrics", "/static/style.css", "/signin"} {
		require.Equal(t, http.StatusOK, serve(api.Handler(), http.MethodGet, path, "").Code, path)
	}
	rec := serve(api.Handler(), http.MethodGet, "/activities", "")
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.Equal(t, "/signin?next=%2Factivities", rec.Header().Get("Location"))
	rec = serve(api.Handler(), http.MethodPost, "/", "ListStateMachines")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), "MissingAuthenticationTokenException")
	rec = serve(api.self, http.MethodPost, "/", "ListStateMachines")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
