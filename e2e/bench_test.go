package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchActivitiesRE reads the activity line of "stepwise bench".
var benchActivitiesRE = regexp.MustCompile(`activities (\d+) executions × (\d+) tasks, \d+ pollers, \d+ in flight: +(\d+) tasks/s`)

// TestBench runs "stepwise bench" with small counts against a real server
// and against the do-nothing server it is compared with, and checks that
// every phase ran and every activity task was counted.
func TestBench(t *testing.T) {
	null := filepath.Join(t.TempDir(), "nullserver")
	build := exec.Command("go", "build", "-o", null, "stepwise/cmd/stepwise/cli/testdata/nullserver")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build nullserver: %s", out)

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"stepwise", nil},
		{"nullserver", []string{"--server-command", null}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"bench", "--runs", "20", "--warmup", "5", "--sync-calls", "20",
				"--activity-runs", "12", "--activity-steps", "5", "--pollers", "4", "--activity-inflight", "6", "--rest", "1s"}, tc.args...)
			out, err := exec.Command(binary, args...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			text := string(out)
			require.Regexp(t, `standard +20 executions: +\d+ executions/s`, text)
			require.Regexp(t, `express +20 sync calls: +\d+ StartSyncExecution/s`, text)
			m := benchActivitiesRE.FindStringSubmatch(text)
			require.NotNil(t, m, "%s", text)
			require.Equal(t, []string{"12", "5"}, m[1:3])
			tasks, _ := strconv.Atoi(m[3])
			require.Positive(t, tasks)
			require.Regexp(t, `activities cpu per task: server \d+ µs, client \d+ µs`, text)
			require.Regexp(t, `server memory at rest, 1s after the load: [1-9][\d.]* MB resident \([\d.]+ MB anonymous, [\d.]+ MB mapped from files\)`, text)
		})
	}
}
