package lambda_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/integration/lambda"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
)

// sleeper starts a process in a group of its own, as a function's, and
// returns it with its start time.
func sleeper(t *testing.T) (*exec.Cmd, uint64) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	go cmd.Wait() // reaped once killed
	start, ok := lambda.ProcStart(cmd.Process.Pid)
	require.True(t, ok)
	return cmd, start
}

func bootID(t *testing.T) string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}

// A starting server kills the process groups a server now gone
// recorded, and only those: not a live server's, not a group whose
// leader is another process than the one recorded (its id reused).
func TestLeftGroupsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	boot := bootID(t)

	// A server that is gone: a process that ended.
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	left, leftStart := sleeper(t)
	reused, reusedStart := sleeper(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1.groups"), fmt.Appendf(nil, "stepwise %d 1 %s\n%d %d\n%d %d\n",
		dead.Process.Pid, boot, left.Process.Pid, leftStart, reused.Process.Pid, reusedStart+1), 0o600))
	// A server still running: this process.
	self, ok := lambda.ProcStart(os.Getpid())
	require.True(t, ok)
	live, liveStart := sleeper(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "2.groups"), fmt.Appendf(nil, "stepwise %d %d %s\n%d %d\n",
		os.Getpid(), self, boot, live.Process.Pid, liveStart), 0o600))

	local, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	killed, err := local.RecordGroups(dir)
	require.NoError(t, err)
	require.Equal(t, 1, killed)
	testwait.Until(t, func() bool { return gone(int64(left.Process.Pid)) }, 5*time.Second, 10*time.Millisecond, "the group left by a dead server is killed")
	require.NoFileExists(t, filepath.Join(dir, "1.groups"))
	require.False(t, gone(int64(reused.Process.Pid)), "a process that is not the recorded one is left alone")
	require.False(t, gone(int64(live.Process.Pid)), "a live server's groups are left alone")
	require.FileExists(t, filepath.Join(dir, "2.groups"))
	local.Close()
}

// A server records its functions' groups while they run (a handler's
// and a command's), and kills them and removes its record when it
// closes.
func TestGroupsRecorded(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := t.TempDir()
	code := handlerDir(t, map[string]string{"app.py": `
import os
def handler(event, context):
    return {"pid": os.getpid()}
`})
	reg := localRegistry(t, map[string]string{"cmd": `sleep 60 > /dev/null & echo "$$" > ` + filepath.Join(dir, "cmd.pid") + `; echo {}`}, 0)
	local := lambda.LocalOf(reg)
	_, err := local.RecordGroups(dir)
	require.NoError(t, err)
	require.NoError(t, local.Put("h", &lambda.Handler{Runtime: "python3.12", Dir: code, Name: "app.handler"}))
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:h", `{}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	pid, _ := get(t, res.Output, "pid").(jsonvalue.Number).Int64()
	records, err := filepath.Glob(filepath.Join(dir, strconv.Itoa(os.Getpid())+"-*.groups"))
	require.NoError(t, err)
	require.Len(t, records, 1)
	record := records[0]
	b, err := os.ReadFile(record)
	require.NoError(t, err)
	require.Regexp(t, fmt.Sprintf(`(?m)^%d \d+$`, pid), string(b), "the warm process's group is recorded")

	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:cmd", `{}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	b, err = os.ReadFile(filepath.Join(dir, "cmd.pid"))
	require.NoError(t, err)
	b2, err := os.ReadFile(record)
	require.NoError(t, err)
	require.NotContains(t, string(b2), strings.TrimSpace(string(b))+" ", "a command's group is forgotten once it is over")

	reg.Close()
	testwait.Until(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "the warm process is stopped")
	require.NoFileExists(t, record)
}

// A warm process idle for the idle timeout is stopped; the next invoke
// starts another.
func TestIdleProcessReaped(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	code := handlerDir(t, map[string]string{"app.py": `
import os
def handler(event, context):
    return {"pid": os.getpid()}
`})
	reg := localRegistry(t, nil, 0)
	t.Cleanup(reg.Close)
	local := lambda.LocalOf(reg)
	local.SetIdleTimeout(300 * time.Millisecond)
	require.NoError(t, local.Put("h", &lambda.Handler{Runtime: "python3.12", Dir: code, Name: "app.handler"}))
	pidOf := func() int64 {
		res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:h", `{}`)
		require.Nil(t, res.Failure, "%+v", res.Failure)
		pid, _ := get(t, res.Output, "pid").(jsonvalue.Number).Int64()
		return pid
	}
	first := pidOf()
	require.Equal(t, first, pidOf(), "warm between invokes close together")
	testwait.Until(t, func() bool { return gone(first) }, 10*time.Second, 20*time.Millisecond, "the idle process is stopped")
	require.NotEqual(t, first, pidOf())
}
