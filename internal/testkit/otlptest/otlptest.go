// Package otlptest runs a real OTLP receiver for the tests of traces: the
// OpenTelemetry Collector's own otlpreceiver, in the small program of
// internal/testkit/otlpsink (a Go module of its own, so that the
// collector's dependencies stay out of Stepwise's go.mod), built with
// `go build` once per test binary. The spans it received are read back
// as the collector decoded them.
package otlptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Span is a span the receiver got (otlpsink's line).
type Span struct {
	TraceID      string         `json:"traceId"`
	SpanID       string         `json:"spanId"`
	ParentSpanID string         `json:"parentSpanId"`
	Name         string         `json:"name"`
	Kind         string         `json:"kind"`
	StartUnixNs  int64          `json:"startUnixNano"`
	EndUnixNs    int64          `json:"endUnixNano"`
	Attributes   map[string]any `json:"attributes"`
	Status       string         `json:"status"`
	StatusMsg    string         `json:"statusMessage"`
	Links        []struct {
		TraceID string `json:"traceId"`
		SpanID  string `json:"spanId"`
	} `json:"links"`
	Events   []string       `json:"events"`
	Resource map[string]any `json:"resource"`
	Scope    string         `json:"scope"`
}

// Receiver is a running receiver.
type Receiver struct {
	// HTTP is the base URL of OTLP/HTTP (traces at /v1/traces), GRPC
	// the address of OTLP/gRPC.
	HTTP, GRPC string

	mu    sync.Mutex
	spans []Span
}

// Spans are the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

var (
	buildOnce sync.Once
	built     string
	buildErr  error
)

// sinkDir is internal/testkit/otlpsink.
func sinkDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "otlpsink")
}

// Binary builds otlpsink (once per process) and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "otlpsink")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "otlpsink")
		cmd := exec.Command("go", "build", "-o", built, ".")
		cmd.Dir = sinkDir()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build otlpsink: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// freeAddr is a loopback address with a free port.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Start runs a receiver until the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	bin := Binary(t)
	httpAddr, grpcAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "-http", httpAddr, "-grpc", grpcAddr)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &Receiver{HTTP: "http://" + httpAddr, GRPC: grpcAddr}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		lines := bufio.NewScanner(stdout)
		lines.Buffer(make([]byte, 1<<20), 16<<20)
		first := true
		for lines.Scan() {
			if first {
				first = false
				close(ready)
				continue
			}
			var s Span
			if json.Unmarshal(lines.Bytes(), &s) == nil {
				r.mu.Lock()
				r.spans = append(r.spans, s)
				r.mu.Unlock()
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		_ = cmd.Wait()
	})
	select {
	case <-ready:
	case <-done:
		t.Fatal("otlpsink ended before it was ready")
	case <-time.After(60 * time.Second):
		t.Fatal("otlpsink was not ready within 60s")
	}
	return r
}
