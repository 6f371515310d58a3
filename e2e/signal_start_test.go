package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// blackHole accepts connections and never answers: an AWS endpoint a
// deploy waits on.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// A SIGTERM while the server starts (here a --template deploy waits on an
// AWS endpoint that never answers) stops it in order, at once: it does
// not wait for the start, and needs no SIGKILL.
func TestSignalWhileStarting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	template := filepath.Join(dir, "template.yaml")
	require.NoError(t, os.WriteFile(template, []byte("Resources:\n  Jobs:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: jobs\n"), 0o644))
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "stepwise.db"),
		"--template", template, "--aws-endpoint", blackHole(t))
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_EC2_METADATA_DISABLED=true")
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{} // read while the process writes
	cmd.Stdout, cmd.Stderr = stdout, stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})

	// The deploy is under way, waiting on the endpoint.
	time.Sleep(2 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("the server ended before the signal: %v\n%s%s", err, stdout.String(), stderr.String())
	default:
	}
	require.NotContains(t, stdout.String(), "serving", "the deploy did not hold the start")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-done:
		require.NoError(t, err, "%s%s", stdout.String(), stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("the server did not stop within 10s of SIGTERM while starting:\n%s%s", stdout.String(), stderr.String())
	}
	require.True(t, strings.Contains(stdout.String(), "stopped while starting"), stdout.String())
}
