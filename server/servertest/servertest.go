// Package servertest starts an in-process Stepwise server for tests: the
// whole server, as `stepwise serve` assembles it (server.New), on a
// temporary SQLite file or, when a test asks, on a PostgreSQL database of
// its own, listening on a free loopback port, with an AWS SDK for Go
// client of its Step Functions API. It is closed when the test ends.
//
//	s := servertest.New(t)
//	out, err := s.SFN.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{...})
//
// A test that needs the parts in process has them through the server's
// accessors (s.Service(), s.Engine(), s.Store()).
package servertest

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/internal/testkit/pgtest"
	"stepwise/server"
)

// Server is a started server, listening.
type Server struct {
	*server.Server
	// URL is the server's base URL, http://127.0.0.1:PORT.
	URL string
	// SFN is a client of the server's Step Functions API.
	SFN *sfn.Client
}

// An Option changes the server a test gets.
type Option func(*setup)

type setup struct {
	cfg      config.Serve
	opts     []server.Option
	postgres bool
}

// WithConfig edits the server's configuration, which starts from serve's
// defaults with a free loopback port and a temporary SQLite file.
func WithConfig(edit func(*config.Serve)) Option {
	return func(s *setup) { edit(&s.cfg) }
}

// WithOptions passes options to server.New.
func WithOptions(opts ...server.Option) Option {
	return func(s *setup) { s.opts = append(s.opts, opts...) }
}

// WithPostgres puts the server's data in a PostgreSQL database of the
// test's own (pgtest.NewDatabase): the package's TestMain runs its tests
// through pgtest.Main, and the test is skipped where PostgreSQL is not
// installed.
func WithPostgres() Option {
	return func(s *setup) { s.postgres = true }
}

// New starts a server for t, its executions resumed, and closes it when t
// ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	st := &setup{cfg: config.DefaultServe()}
	st.cfg.Addr = "127.0.0.1:0"
	st.cfg.DB = filepath.Join(dir, "stepwise.db")
	st.cfg.ExecutionLogs.Dir = filepath.Join(dir, "logs")
	for _, opt := range opts {
		opt(st)
	}
	if st.postgres {
		st.cfg.DB = pgtest.NewDatabase(t)
	}
	log := slog.New(slog.NewTextHandler(newTestWriter(t), &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := server.New(st.cfg, append([]server.Option{server.WithLogger(log)}, st.opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ctx := context.Background()
	require.NoError(t, srv.Start(ctx))
	require.NoError(t, srv.Listen())
	select {
	case <-srv.Engine().Resumed():
	case <-time.After(30 * time.Second):
		t.Fatal("servertest: the engine did not resume the executions within 30s")
	}
	s := &Server{Server: srv, URL: srv.URL()}
	s.SFN = sfn.NewFromConfig(aws.Config{
		Region:      st.cfg.Region,
		Credentials: credentials.NewStaticCredentialsProvider("AKIDSERVERTEST", "servertest", ""),
	}, func(o *sfn.Options) { o.BaseEndpoint = aws.String(s.URL) })
	return s
}

// testWriter writes the server's log lines to the test's log, until the
// test has ended (a line after it would fail the test binary).
type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func newTestWriter(t testing.TB) *testWriter {
	w := &testWriter{t: t}
	// Registered first, so run last: after the server is closed.
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return w
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}
