package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireFails runs the program with args and requires it to fail with
// msg in its error output.
func requireFails(t *testing.T, msg string, args ...string) {
	t.Helper()
	_, errOut, code := execute(args...)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, msg)
}

// bench --json prints the figures as one JSON object, in the report's
// order, leaving out a figure nothing was measured for.
func TestBenchFiguresJSON(t *testing.T) {
	t.Parallel()
	var f benchFigures
	f.add("sync_calls_per_s", 8412.5)
	f.add("nothing_per_s", math.Inf(1))
	f.add("server_resident_mb", 61)
	var out bytes.Buffer
	require.NoError(t, f.write(&out))
	require.Equal(t, "{\"sync_calls_per_s\": 8412.5, \"server_resident_mb\": 61}\n", out.String())
	var obj map[string]float64
	require.NoError(t, json.Unmarshal(out.Bytes(), &obj))
	require.Len(t, obj, 2)
}

// bench compare prints each figure's median on both sides and their
// ratio; a figure one side lacks has "-".
func TestBenchCompare(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base.jsonl"), filepath.Join(dir, "head.jsonl")
	require.NoError(t, os.WriteFile(base, []byte(`{"sync_calls_per_s": 100, "old_figure": 3}
{"sync_calls_per_s": 300}

{"sync_calls_per_s": 200}
`), 0o600))
	require.NoError(t, os.WriteFile(head, []byte(`{"sync_calls_per_s": 260, "new_figure": 1}
{"sync_calls_per_s": 240}
`), 0o600))
	out, errOut, code := execute("bench", "compare", base, head)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4)
	require.Equal(t, []string{"figure", "BASE", "(3", "runs)", "HEAD", "(2", "runs)", "HEAD/BASE"}, strings.Fields(lines[0]))
	require.Equal(t, []string{"sync_calls_per_s", "200.0", "250.0", "1.25"}, strings.Fields(lines[1]))
	require.Equal(t, []string{"old_figure", "3.0", "-", "-"}, strings.Fields(lines[2]))
	require.Equal(t, []string{"new_figure", "-", "1.0", "-"}, strings.Fields(lines[3]))

	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("standard 1000 executions: 10 executions/s\n"), 0o600))
	requireFails(t, "bad.jsonl:1: not a JSON object of figures", "bench", "compare", bad, head)
	require.NoError(t, os.WriteFile(bad, []byte(`{"x": "fast"}`), 0o600))
	requireFails(t, `bad.jsonl:1: figure x: not a number`, "bench", "compare", bad, head)
	require.NoError(t, os.WriteFile(bad, nil, 0o600))
	requireFails(t, "bad.jsonl: no runs", "bench", "compare", bad, head)
	requireFails(t, "no such file", "bench", "compare", filepath.Join(dir, "missing"), head)
}
