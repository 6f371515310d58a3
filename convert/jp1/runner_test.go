package jp1

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The runner's result carries the job's exit code as rc, where a state's
// warning rule reads it ($.Payload.rc); an exit above the abnormal
// threshold still fails the job.
func TestRunnerReturnsRC(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "runner.py"), []byte(runnerPy), 0o644))
	call := func(event string) (map[string]any, error) {
		cmd := exec.Command(py, "-c", `import json, sys, runner; print(json.dumps(runner.handler(json.loads(sys.argv[1]), None)))`, event)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			return nil, err
		}
		var res map[string]any
		require.NoError(t, json.Unmarshal(out, &res))
		return res, nil
	}
	res, err := call(`{"unit": "/net/job", "command": "exit 3", "abnormalThreshold": 8, "warningThreshold": 0}`)
	require.NoError(t, err)
	require.Equal(t, 3.0, res["rc"])
	require.Equal(t, 3.0, res["exitCode"])
	require.Equal(t, true, res["warning"])
	res, err = call(`{"unit": "/net/job", "command": "true"}`)
	require.NoError(t, err)
	require.Equal(t, 0.0, res["rc"])
	_, err = call(`{"unit": "/net/job", "command": "exit 9", "abnormalThreshold": 8}`)
	require.Error(t, err, "above the abnormal threshold the job fails")
}
