// Command otlpsink runs the OpenTelemetry Collector's own OTLP receiver
// (go.opentelemetry.io/collector/receiver/otlpreceiver) and writes every
// span it receives to standard output, a JSON object a line, for the
// tests of Stepwise's traces: the spans are decoded by the collector, not
// by the tests. It is a module of its own, so that the collector's
// dependencies stay out of Stepwise's go.mod; the tests build it with
// `go build` (internal/testkit/otlpsink/build.go... see sink.go).
//
//	otlpsink -http 127.0.0.1:4318 -grpc 127.0.0.1:4317
//
// It writes {"ready":true} once both listen, and stops on SIGINT/SIGTERM
// or when its standard input closes.
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configgrpc"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// Span is a received span as written out.
type Span struct {
	TraceID      string         `json:"traceId"`
	SpanID       string         `json:"spanId"`
	ParentSpanID string         `json:"parentSpanId,omitempty"`
	Name         string         `json:"name"`
	Kind         string         `json:"kind"`
	StartUnixNs  int64          `json:"startUnixNano"`
	EndUnixNs    int64          `json:"endUnixNano"`
	Attributes   map[string]any `json:"attributes"`
	Status       string         `json:"status"`
	StatusMsg    string         `json:"statusMessage,omitempty"`
	Links        []Link         `json:"links,omitempty"`
	Events       []string       `json:"events,omitempty"`
	Resource     map[string]any `json:"resource"`
	Scope        string         `json:"scope"`
}

// Link is a span's link.
type Link struct {
	TraceID string `json:"traceId"`
	SpanID  string `json:"spanId"`
}

func main() {
	httpAddr := flag.String("http", "127.0.0.1:4318", "address of OTLP/HTTP")
	grpcAddr := flag.String("grpc", "127.0.0.1:4317", "address of OTLP/gRPC")
	flag.Parse()
	if err := run(*httpAddr, *grpcAddr); err != nil {
		fmt.Fprintln(os.Stderr, "otlpsink:", err)
		os.Exit(1)
	}
}

func run(httpAddr, grpcAddr string) error {
	factory := otlpreceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*otlpreceiver.Config)
	grpc := configgrpc.NewDefaultServerConfig()
	grpc.NetAddr.Endpoint = grpcAddr
	cfg.Protocols.GRPC = configoptional.Some(grpc)
	hc := otlpreceiver.HTTPConfig{ServerConfig: confighttp.NewDefaultServerConfig(),
		TracesURLPath: "/v1/traces", MetricsURLPath: "/v1/metrics", LogsURLPath: "/v1/logs"}
	hc.ServerConfig.NetAddr.Endpoint = httpAddr
	cfg.Protocols.HTTP = configoptional.Some(hc)

	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	write := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	next, err := consumer.NewTraces(func(_ context.Context, td ptrace.Traces) error {
		for _, s := range spans(td) {
			write(s)
		}
		return nil
	})
	if err != nil {
		return err
	}
	ctx := context.Background()
	r, err := factory.CreateTraces(ctx, receivertest.NewNopSettings(factory.Type()), cfg, next)
	if err != nil {
		return err
	}
	if err := r.Start(ctx, componenttest.NewNopHost()); err != nil {
		return err
	}
	defer r.Shutdown(ctx)
	write(map[string]bool{"ready": true})

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	stdin := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stdin) }()
	select {
	case <-stop:
	case <-stdin:
	}
	return nil
}

// spans flattens what the receiver decoded.
func spans(td ptrace.Traces) []Span {
	var all []Span
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		res := rs.Resource().Attributes().AsRaw()
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				s := ss.Spans().At(k)
				sp := Span{
					TraceID: traceID(s.TraceID()), SpanID: spanID(s.SpanID()), Name: s.Name(), Kind: s.Kind().String(),
					StartUnixNs: int64(s.StartTimestamp()), EndUnixNs: int64(s.EndTimestamp()),
					Attributes: s.Attributes().AsRaw(), Status: s.Status().Code().String(), StatusMsg: s.Status().Message(),
					Resource: res, Scope: ss.Scope().Name(),
				}
				if !s.ParentSpanID().IsEmpty() {
					sp.ParentSpanID = spanID(s.ParentSpanID())
				}
				for l := 0; l < s.Links().Len(); l++ {
					ln := s.Links().At(l)
					sp.Links = append(sp.Links, Link{TraceID: traceID(ln.TraceID()), SpanID: spanID(ln.SpanID())})
				}
				for e := 0; e < s.Events().Len(); e++ {
					sp.Events = append(sp.Events, s.Events().At(e).Name())
				}
				all = append(all, sp)
			}
		}
	}
	return all
}

func traceID(id pcommon.TraceID) string { return hex.EncodeToString(id[:]) }
func spanID(id pcommon.SpanID) string   { return hex.EncodeToString(id[:]) }
