package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"stepwise/observe/notify"
	"stepwise/sfnapi"
)

// APIThrottled counts a request a quota refused.
func (m *Metrics) APIThrottled(operation string) { m.apiThrottled.WithLabelValues(operation).Inc() }

// APIConsumed counts the tokens a request took from its quota.
func (m *Metrics) APIConsumed(operation string, tokens float64) {
	m.apiConsumed.WithLabelValues(operation).Add(tokens)
}

// ExecutionThrottled counts a state transition held back by the
// state-transition quota.
func (m *Metrics) ExecutionThrottled(stateMachineArn string) {
	m.execThrottled.WithLabelValues(stateMachineArn).Inc()
}

// NotifyStats are the hooks that count the delivery of status-change
// events.
func (m *Metrics) NotifyStats() notify.Stats {
	return notify.Stats{
		Delivered: func(dest string, n int) { m.eventsDelivered.WithLabelValues(dest).Add(float64(n)) },
		Failed:    func(dest string, _ error) { m.eventsFailed.WithLabelValues(dest).Inc() },
		Lag:       func(dest string, lag time.Duration) { m.eventsLag.WithLabelValues(dest).Set(lag.Seconds()) },
	}
}

// API counts the API's requests by operation (X-Amz-Target) and status.
func (m *Metrics) API(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := r.Header.Get("X-Amz-Target")
		if op == "" {
			next.ServeHTTP(w, r)
			return
		}
		if _, after, ok := strings.Cut(op, "."); ok {
			op = after
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		m.APICall(op, sw.status)
	})
}

// APICall counts one call of an operation by the HTTP status it was (or,
// made in process, would have been) answered with: the server's own
// calls (aws-sdk:sfn Tasks, schedules' starts) count as a client's do.
func (m *Metrics) APICall(op string, status int) {
	if len(op) > 64 || !sfnapi.IsOperation(op) {
		op = "other" // no unbounded label values from clients
	}
	k := apiKey{op, status}
	if c, ok := m.apiCalls.Load(k); ok {
		c.(prometheus.Counter).Inc()
		return
	}
	c, _ := m.apiCalls.LoadOrStore(k, m.apiRequests.WithLabelValues(op, statusCode(status)))
	c.(prometheus.Counter).Inc()
}

// apiKey names a child of the API's request counter: an operation and
// an HTTP status.
type apiKey struct {
	op     string
	status int
}

func statusCode(c int) string { return strconv.Itoa(c) }

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (long polls
// flush and watch it).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ExecutionLogsWritten counts execution log records written.
func (m *Metrics) ExecutionLogsWritten(n int) { m.logsWritten.Add(float64(n)) }

// ExecutionLogsDropped counts execution log records dropped (a full queue,
// or a destination that kept refusing them).
func (m *Metrics) ExecutionLogsDropped(n int) { m.logsDropped.Add(float64(n)) }

// RetentionDeleted counts a retention batch: the executions it deleted
// and the time it held the store.
func (m *Metrics) RetentionDeleted(n int, took time.Duration) {
	m.retentionDeleted.Add(float64(n))
	m.retentionBatch.Observe(took.Seconds())
}
