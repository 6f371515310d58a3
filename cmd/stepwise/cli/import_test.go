package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestImportJP1(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := (&CLI{Out: &stdout, Err: &stderr}).Execute([]string{"import", "jp1", "../../../convert/jp1/testdata/nightly.ajs", "--out", out})
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stdout.String(), "3 state machines")
	for _, f := range []string{"template.yaml", "statemachine/nightly.asl.json", "statemachine/nightly-SUB.asl.json", "functions/runner.py", "calendars/batch.txt", "report.md"} {
		_, err := os.Stat(filepath.Join(out, f))
		require.NoError(t, err, f)
	}

	for _, args := range [][]string{
		{"import", "jp1", "x.ajs"},
		{"import", "autosys", "x", "--out", out},
	} {
		stderr.Reset()
		code := (&CLI{Out: &stdout, Err: &stderr}).Execute(args)
		require.Equal(t, 2, code, args)
		require.Contains(t, stderr.String(), "import", args)
	}
	bad := filepath.Join(t.TempDir(), "bad.ajs")
	require.NoError(t, os.WriteFile(bad, []byte("unit=a;{ty=n"), 0o644))
	stderr.Reset()
	code = (&CLI{Out: &stdout, Err: &stderr}).Execute([]string{"import", "jp1", bad, "--out", out})
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "bad.ajs: line 1, column 9: ty= has no ';' at its end")
}
