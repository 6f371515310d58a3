package integrationtest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"stepwise/internal/testkit/conformance"
	"stepwise/internal/testkit/slowtest"
)

// LambdaStandIn starts the Lambda stand-in of the service conformance
// runner (../shared/svcconf/lambda_standin.py: the Lambda REST API,
// running Python handlers in subprocesses) for the test and returns its
// URL. It skips the test when python3 or the stand-in is missing, unless
// CI=true, where it fails.
func LambdaStandIn(t testing.TB) string {
	t.Helper()
	slowtest.Require(t, "the Lambda stand-in")
	skip := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Lambda stand-in is required on CI: %s", why)
		}
		t.Skip("skipping the test against the Lambda stand-in: " + why)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		skip("python3 is not installed")
	}
	dir, ok := conformance.Dir()
	if !ok {
		skip("../shared is not beside the repository")
	}
	script := filepath.Join(filepath.Dir(dir), "svcconf", "lambda_standin.py")
	if _, err := os.Stat(script); err != nil {
		skip(err.Error())
	}
	cmd := exec.Command(py, script, "--host", "127.0.0.1", "--port", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the Lambda stand-in: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "LAMBDA_STANDIN_URL="); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("the Lambda stand-in did not start")
		return ""
	}
}
