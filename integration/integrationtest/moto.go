// Package integrationtest holds helpers for testing integrations against
// real stand-ins of AWS services.
package integrationtest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"stepwise/internal/testkit/slowtest"
	"testing"
	"time"
)

// Moto starts "moto_server" (the moto project's stand-in for SQS, SNS, S3
// and more) on a free port for the test and returns its URL. It skips the
// test when moto_server is not installed, unless CI=true, where it fails.
func Moto(t testing.TB) string {
	t.Helper()
	slowtest.Require(t, "moto_server")
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("moto_server is required on CI: %v", err)
		}
		t.Skip("moto_server is not installed (pip install 'moto[server]'); skipping the test against it")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	if err := cmd.Start(); err != nil {
		t.Fatalf("start moto_server: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("moto_server did not answer on %s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
