package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// The verbs that are clients of a server (record, replay, deploy, the
// clock) ask no instance metadata service for credentials when none are
// set: the test runs them in a process of its own whose environment has
// no AWS variable but the metadata service's address, a server that
// counts what it is asked.
func TestNoInstanceMetadataWithoutCredentials(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(imds.Close)
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoInstanceMetadataVerbs$", "-test.v")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "STEPWISE_IMDS_VERBS=1",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL, "AWS_CONFIG_FILE=" + filepath.Join(home, "none"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "none")}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "--- PASS: TestNoInstanceMetadataVerbs")
	require.NotContains(t, string(out), "IMDS")
	require.Zero(t, asked.Load(), "the metadata service was asked:\n%s", out)
}

// TestNoInstanceMetadataVerbs runs the verbs, in the process
// TestNoInstanceMetadataWithoutCredentials starts.
func TestNoInstanceMetadataVerbs(t *testing.T) {
	if os.Getenv("STEPWISE_IMDS_VERBS") == "" {
		t.Skip("run by TestNoInstanceMetadataWithoutCredentials")
	}
	arn := "arn:aws:states:us-east-1:123456789012:execution:a:b"
	for _, args := range [][]string{
		{"test", "--record", arn, "--endpoint", "http://127.0.0.1:1", "--out", filepath.Join(t.TempDir(), "x.json")},
		{"replay", arn, "--endpoint", "http://127.0.0.1:1"},
		{"deploy", filepath.Join("..", "..", "..", "examples", "jobnet-sam", "template.yaml"), "--endpoint", "http://127.0.0.1:1"},
		{"clock", "advance", "1h", "--endpoint", "http://127.0.0.1:1"},
	} {
		_, errOut, code := execute(args...)
		require.NotZero(t, code, args)
		require.Contains(t, errOut, "127.0.0.1:1", "%v: %s", args, errOut)
		t.Log(args[0], errOut)
	}
}
