package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
)

// traceSink is the OTLP/HTTP endpoint of `bench --trace`: it takes the
// servers' exports and drops them, counting requests and bytes, so that
// the run measures what tracing costs the server, not a collector.
type traceSink struct {
	srv      *http.Server
	url      string
	requests atomic.Int64
	bytes    atomic.Int64
}

// startTraceSink listens on a loopback port.
func startTraceSink() (*traceSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &traceSink{url: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		s.requests.Add(1)
		s.bytes.Add(n)
		// An empty ExportTraceServiceResponse: everything accepted.
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// args are the servers' arguments that send every execution's trace to
// the sink.
func (s *traceSink) args() []string {
	return []string{"--trace-all", "--otel-endpoint", s.url}
}

func (s *traceSink) report(w io.Writer) {
	fmt.Fprintf(w, "traces: %d OTLP exports, %.1f MB received\n", s.requests.Load(), float64(s.bytes.Load())/1e6)
}

func (s *traceSink) close() { _ = s.srv.Close() }
