package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/engine"
	"stepwise/history"
	"stepwise/store"
)

// lockedWriter is a bytes.Buffer safe for a logger's goroutines.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) lines(t *testing.T) []map[string]any {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(w.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var l map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &l), line)
		out = append(out, l)
	}
	return out
}

// At info level the request log is the handler itself: it costs nothing.
// At debug level each request has a line.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	api := &badRequest{}
	var w lockedWriter
	info := slog.New(slog.NewJSONHandler(&w, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h := requestLog(info, api)
	require.Same(t, api, h, "the handler is not wrapped at info level")

	debug := slog.New(slog.NewJSONHandler(&w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h = requestLog(debug, api)
	req := httptest.NewRequest("POST", "/", strings.NewReader("{}"))
	req.Header.Set("X-Amz-Target", "AWSStepFunctions.StartExecution")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	lines := w.lines(t)
	require.Len(t, lines, 1)
	l := lines[0]
	require.Equal(t, "DEBUG", l["level"])
	require.Equal(t, "server: request", l["msg"])
	require.Equal(t, "POST", l["method"])
	require.Equal(t, "StartExecution", l["operation"])
	require.Equal(t, float64(400), l["status"])
	require.Equal(t, "req-1", l["request_id"])
	require.Contains(t, l, "duration")
}

// badRequest answers 400 with a request ID.
type badRequest struct{}

func (*badRequest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("x-amzn-RequestId", "req-1")
	w.WriteHeader(http.StatusBadRequest)
}

// One line for each execution's end, none for its other steps.
func TestExecutionEnds(t *testing.T) {
	t.Parallel()
	var w lockedWriter
	log := slog.New(slog.NewJSONHandler(&w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ends := newExecutionEnds(log)
	row := func(status history.ExecutionStatus) *store.Execution {
		x := &store.Execution{Arn: "arn:x", StateMachineArn: "arn:sm", Status: status}
		if status == history.StatusFailed {
			x.Error = new(string)
			*x.Error = "Boom"
		}
		return x
	}
	ends.StepCommitted(&engine.CommittedStep{Execution: row(history.StatusRunning), Previous: ""})
	ends.StepCommitted(&engine.CommittedStep{Execution: row(history.StatusRunning), Previous: history.StatusRunning})
	ends.StepCommitted(&engine.CommittedStep{Execution: row(history.StatusFailed), Previous: history.StatusRunning})
	ends.StepCommitted(&engine.CommittedStep{Execution: row(history.StatusRunning), Previous: history.StatusFailed, Redriven: true})
	ends.StepCommitted(&engine.CommittedStep{Execution: row(history.StatusSucceeded), Previous: ""})
	ends.close()
	lines := w.lines(t)
	require.Len(t, lines, 2)
	require.Equal(t, "server: execution ended", lines[0]["msg"])
	require.Equal(t, "DEBUG", lines[0]["level"])
	require.Equal(t, "arn:x", lines[0]["execution_arn"])
	require.Equal(t, "arn:sm", lines[0]["state_machine_arn"])
	require.Equal(t, "FAILED", lines[0]["status"])
	require.Equal(t, "Boom", lines[0]["error"])
	require.Equal(t, "SUCCEEDED", lines[1]["status"])
	require.NotContains(t, lines[1], "error")
}

// At info the server writes nothing for each execution (a busy server
// would write a line for each); at debug it writes the line of each end.
func TestExecutionEndsOnlyAtDebug(t *testing.T) {
	t.Parallel()
	cfg := &config.Serve{}
	cfg.ExecutionLogs.To = config.ExecutionLogsOff
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var w lockedWriter
		log := slog.New(slog.NewJSONHandler(&w, &slog.HandlerOptions{Level: level}))
		l, err := startLogs(context.Background(), cfg, nil, nil, log)
		require.NoError(t, err)
		if l.ends != nil {
			l.ends.StepCommitted(&engine.CommittedStep{Execution: &store.Execution{Arn: "arn:x", Status: history.StatusSucceeded}, Previous: history.StatusRunning})
		}
		l.close()
		if level == slog.LevelInfo {
			require.Empty(t, w.buf.String())
		} else {
			require.Contains(t, w.buf.String(), `"msg":"server: execution ended"`)
		}
	}
}
