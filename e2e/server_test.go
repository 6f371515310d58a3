// Package e2e drives the real stepwise binary over HTTP with the AWS SDK
// for Go and the AWS CLI.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/slowtest"
)

// binary is the stepwise binary built once for the package.
var binary string

func TestMain(m *testing.M) {
	// Every test here runs real processes: the package is the slow
	// suite's, and builds nothing without it.
	if !slowtest.Enabled() {
		fmt.Println(slowtest.Skipped("e2e"))
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "stepwise-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "stepwise")
	args := []string{"build", "-o", binary}
	if os.Getenv("STEPWISE_E2E_RACE") != "" {
		// The servers themselves under the race detector (slower).
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "stepwise/cmd/stepwise")...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build stepwise:", err)
		os.Exit(1)
	}
	code := pgtest.Wrap(m).Run() // stops the PostgreSQL cluster if a test started one
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is a running stepwise serve process.
type server struct {
	cmd    *exec.Cmd
	addr   string
	scheme string // http or https
	done   chan error
	stderr *lockedBuffer
}

// lockedBuffer collects a process's stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	os.Stderr.Write(p)
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var listenRE = regexp.MustCompile(`on (https?)://(\S+) `)

// startServer runs "stepwise serve" on db with a free port.
func startServer(t testing.TB, db string, args ...string) *server {
	t.Helper()
	return startServerEnv(t, nil, db, args...)
}

// startServerEnv is startServer with env (KEY=VALUE) added to the
// server's environment.
func startServerEnv(t testing.TB, env []string, db string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, args...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	s := &server{cmd: cmd, done: make(chan error, 1), stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		cmd.Process.Kill()
		t.Fatalf("server printed nothing: %v", lines.Err())
	}
	m := listenRE.FindStringSubmatch(lines.Text())
	require.NotNil(t, m, "unexpected startup line %q", lines.Text())
	s.scheme, s.addr = m[1], m[2]
	go func() {
		for lines.Scan() {
		}
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() { s.kill() })
	return s
}

// kill ends the server with SIGKILL, as a crash would.
func (s *server) kill() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		<-s.done
	}
}

// stop ends the server with SIGTERM and waits for it.
func (s *server) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-s.done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop within 30s of SIGTERM")
	}
}

func (s *server) url() string { return s.scheme + "://" + s.addr }

// disableHostPrefix keeps StartSyncExecution and TestState on the endpoint
// instead of "sync-<endpoint>", which does not resolve locally.
func disableHostPrefix(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("StepwiseDisableHostPrefix",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
		}), middleware.Before)
}

// client returns an AWS SDK client for the server.
func (s *server) client(t testing.TB) *sfn.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
		config.WithRetryMaxAttempts(10),
	)
	require.NoError(t, err)
	return sfn.NewFromConfig(cfg, func(o *sfn.Options) {
		o.BaseEndpoint = aws.String(s.url())
		o.APIOptions = append(o.APIOptions, disableHostPrefix)
	})
}

const roleArn = "arn:aws:iam::123456789012:role/stepwise"

func smArn(name string) string {
	return "arn:aws:states:us-east-1:123456789012:stateMachine:" + name
}

// waitDone polls DescribeExecution until the execution is no longer
// RUNNING.
func waitDone(t testing.TB, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err)
		if out.Status != "RUNNING" {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("execution %s still RUNNING after 60s", arn)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func trimErr(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimSpace(err.Error())
}
