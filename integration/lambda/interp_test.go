package lambda_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/lambda"
)

// A handler of any Python 3 runtime runs on the interpreter --runtime
// names for it, else on the host's python3; a deploy is told how the
// versions differ.
func TestHandlerRuntimesAndInterpreters(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	needs(t, "node")
	python, err := exec.LookPath("python3")
	require.NoError(t, err)
	// The interpreter itself, not a shim of a version manager: the
	// handler sees it as sys.executable.
	out, err := exec.Command(python, "-c", "import sys; print(sys.executable)").Output()
	require.NoError(t, err)
	python = strings.TrimSpace(string(out))
	dir := handlerDir(t, map[string]string{"app.py": "import sys\ndef handler(event, context):\n    return {'exe': sys.executable}\n"})
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012",
		Endpoints: map[string]string{"lambda": "http://127.0.0.1:1"}, Runtimes: map[string]string{"python3.7": python}})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	local := lambda.LocalOf(reg)
	require.NoError(t, local.Put("old", &lambda.Handler{Runtime: "python3.7", Dir: dir, Name: "app.handler"}))
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:old", `{}`)
	require.Nil(t, res.Failure)
	require.Equal(t, python, get(t, res.Output, "exe"))

	version, err := exec.Command("python3", "-c", "import sys; print('python%d.%d' % sys.version_info[:2])").Output()
	require.NoError(t, err)
	host := strings.TrimSpace(string(version))
	require.Equal(t, "", local.VersionNote(host), "the host's own version")
	require.Contains(t, local.VersionNote("python3.99"), "declared python3.99, runs on the host's "+host+" (python3)")
	require.Contains(t, local.VersionNote("python3.7"), "declared python3.7, runs on the host's ")
	require.Contains(t, local.VersionNote("python3.7"), "("+python+")")
	require.Contains(t, local.VersionNote("nodejs4.x"), "nodejs4.x code on Node ")
	require.Equal(t, "", local.VersionNote("provided.al2023"))
	_, ok := lambda.RuntimeFor("nodejs14.x")
	require.True(t, ok)
	_, ok = lambda.RuntimeFor("python2.7")
	require.False(t, ok)
}
