package tracing_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"stepwise/observe/tracing"
	"stepwise/store"
)

// collector is an OTLP/HTTP endpoint that answers with the statuses it
// is given (200 once they run out) and keeps what it was sent.
type collector struct {
	mu       sync.Mutex
	answers  []func(http.ResponseWriter)
	requests []*http.Request
	bodies   [][]byte
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.requests = append(c.requests, r)
	c.bodies = append(c.bodies, body)
	var answer func(http.ResponseWriter)
	if len(c.answers) > 0 {
		answer, c.answers = c.answers[0], c.answers[1:]
	}
	c.mu.Unlock()
	if answer != nil {
		answer(w)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func (c *collector) got() ([]*http.Request, [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*http.Request(nil), c.requests...), append([][]byte(nil), c.bodies...)
}

// An execution's spans reach a real HTTP endpoint as OTLP/HTTP asks: a
// POST of protobuf to /v1/traces, gzipped and with the headers the
// variables ask for, retried after a 429's Retry-After and a 503, the
// same request each time; what arrives decodes, with OTLP's own
// definitions, to the execution's spans and the server's resource.
func TestHTTPExportRetriesAsOTLPSays(t *testing.T) {
	c := &collector{answers: []func(http.ResponseWriter){
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		},
		func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) },
	}}
	srv := httptest.NewServer(c)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20secret,x-tenant=a")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip")
	t.Setenv("OTEL_SERVICE_NAME", "checkout")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,team=a%2Cb")
	client, err := tracing.NewClient(srv.URL)
	require.NoError(t, err)
	tr, err := tracing.New(tracing.Config{Client: client, All: true, Resource: tracing.Resource(context.Background(), "9.9.9")})
	require.NoError(t, err)
	row := &store.Execution{Arn: "arn:aws:states:us-east-1:123456789012:execution:http:e", StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:http"}
	tr.StepCommitted(started(row))
	tr.StepCommitted(passes(row, 1, 2))
	require.NoError(t, tr.Flush(context.Background()))
	require.NoError(t, tr.Close(context.Background()))

	reqs, bodies := c.got()
	require.Len(t, reqs, 3, "a 429 and a 503 are retried")
	for i, r := range reqs {
		require.Equal(t, http.MethodPost, r.Method)
		require.Equal(t, "/v1/traces", r.URL.Path)
		require.Equal(t, "application/x-protobuf", r.Header.Get("Content-Type"))
		require.Equal(t, "gzip", r.Header.Get("Content-Encoding"))
		require.Equal(t, "Bearer secret", r.Header.Get("Authorization"))
		require.Equal(t, "a", r.Header.Get("X-Tenant"))
		require.Equal(t, bodies[0], bodies[i], "a retry sends the same request")
	}
	zr, err := gzip.NewReader(bytes.NewReader(bodies[0]))
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	var req coltracepb.ExportTraceServiceRequest
	require.NoError(t, proto.Unmarshal(raw, &req))
	require.Len(t, req.ResourceSpans, 1)
	res := map[string]string{}
	for _, kv := range req.ResourceSpans[0].Resource.Attributes {
		res[kv.Key] = kv.Value.GetStringValue()
	}
	require.Equal(t, "checkout", res["service.name"], "OTEL_SERVICE_NAME comes first")
	require.Equal(t, "9.9.9", res["service.version"])
	require.Equal(t, "test", res["deployment.environment"])
	require.Equal(t, "a,b", res["team"])
	spans := req.ResourceSpans[0].ScopeSpans[0].Spans
	require.Len(t, spans, 2, "the two states' spans (the execution's is open)")
	root := tracing.ExecutionSpanID(row.Arn)
	for _, s := range spans {
		require.Equal(t, "P", s.Name)
		require.Equal(t, root[:], s.ParentSpanId)
		tid := tracing.Parent(row.Arn, "").TraceID()
		require.Equal(t, tid[:], s.TraceId)
	}
}

// A collector's refusal other than busy (400) is not retried: it is
// told in the log, and the next batch goes on.
func TestHTTPExportRefusedIsNotRetried(t *testing.T) {
	c := &collector{answers: []func(http.ResponseWriter){
		func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte("bad spans"))
		},
	}}
	srv := httptest.NewServer(c)
	defer srv.Close()
	client, err := tracing.NewHTTPClient(srv.URL)
	require.NoError(t, err)
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	tr, err := tracing.New(tracing.Config{Client: client, All: true, Logger: log})
	require.NoError(t, err)
	row := &store.Execution{Arn: "arn:aws:states:us-east-1:123456789012:execution:bad:e", StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:bad"}
	tr.StepCommitted(started(row))
	tr.StepCommitted(passes(row, 1, 1))
	require.NoError(t, tr.Flush(context.Background()))
	tr.StepCommitted(passes(row, 3, 1))
	require.NoError(t, tr.Close(context.Background()))
	reqs, _ := c.got()
	require.Len(t, reqs, 2, "the refused batch is not sent again; the next one is sent")
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, logs.String(), "400 Bad Request: bad spans")
	require.Equal(t, 1, strings.Count(logs.String(), "export failed"))
}

// A collector that keeps asking to retry later than the export's timeout
// is given up on at once, not waited for.
func TestHTTPExportGivesUpPastItsTimeout(t *testing.T) {
	c := &collector{answers: []func(http.ResponseWriter){
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
		},
	}}
	srv := httptest.NewServer(c)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
	client, err := tracing.NewHTTPClient(srv.URL)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = client.Export(ctx, []byte{})
	require.ErrorContains(t, err, "503 Service Unavailable")
	require.ErrorContains(t, err, "not retried: the export's timeout ends before the retry")
	reqs, _ := c.got()
	require.Len(t, reqs, 1)
}
