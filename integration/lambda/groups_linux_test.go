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

// sleeper starts a process in a group of its own, as a function's, with
// env added to its environment, and returns it with its start time.
func sleeper(t *testing.T, env ...string) (*exec.Cmd, uint64) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), env...)
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

// deadPid is the id of a process that ended.
func deadPid(t *testing.T) int {
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	return dead.Process.Pid
}

// record writes a server's record: its pid and start time, its
// namespace and run token, and groups (pgid → leader start) as an
// earlier record listed them.
func record(t *testing.T, path string, pid int, start uint64, ns, token string, groups map[int]uint64) {
	t.Helper()
	b := fmt.Appendf(nil, "stepwise %d %d %s %s %s\n", pid, start, bootID(t), ns, token)
	for g, st := range groups {
		b = fmt.Appendf(b, "%d %d\n", g, st)
	}
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func tokenVar(token string) string { return lambda.RunVar + "=" + token }

// A starting server kills the processes a server now gone left — those
// whose environment holds its run's token, and only those: not a
// process without the token even in a group it names, not a live
// server's, not those of a record of another process id namespace or
// of another user. Files written aside and left are removed once stale.
func TestLeftGroupsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ns := lambda.PidNamespace()

	// A server that is gone.
	left, leftStart := sleeper(t, tokenVar("aaaa"))
	otherRun, otherRunStart := sleeper(t, tokenVar("aaaab"))
	unrelated, unrelatedStart := sleeper(t)
	record(t, filepath.Join(dir, "1-x.groups"), deadPid(t), 1, ns, "aaaa", map[int]uint64{
		left.Process.Pid: leftStart, otherRun.Process.Pid: otherRunStart, unrelated.Process.Pid: unrelatedStart})
	// A server still running: this process.
	self, ok := lambda.ProcStart(os.Getpid())
	require.True(t, ok)
	live, liveStart := sleeper(t, tokenVar("bbbb"))
	record(t, filepath.Join(dir, "2-x.groups"), os.Getpid(), self, ns, "bbbb", map[int]uint64{live.Process.Pid: liveStart})
	// A server of another container sharing the folder.
	otherNS, otherNSStart := sleeper(t, tokenVar("cccc"))
	record(t, filepath.Join(dir, "3-x.groups"), deadPid(t), 1, "pid:[1]", "cccc", map[int]uint64{otherNS.Process.Pid: otherNSStart})
	// Files written aside: one left long ago, one being written.
	stale := filepath.Join(dir, "4-x.groups.tmp123")
	require.NoError(t, os.WriteFile(stale, nil, 0o600))
	require.NoError(t, os.Chtimes(stale, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)))
	fresh := filepath.Join(dir, "5-x.groups.tmp456")
	require.NoError(t, os.WriteFile(fresh, nil, 0o600))
	// A record of another user's (root can make one).
	var foreign *exec.Cmd
	if os.Geteuid() == 0 {
		var foreignStart uint64
		foreign, foreignStart = sleeper(t, tokenVar("dddd"))
		path := filepath.Join(dir, "6-x.groups")
		record(t, path, deadPid(t), 1, ns, "dddd", map[int]uint64{foreign.Process.Pid: foreignStart})
		require.NoError(t, os.Chown(path, 65534, 65534))
	}

	local, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	killed, err := local.RecordGroups(dir)
	if foreign != nil {
		require.ErrorContains(t, err, "not a record of this user's")
	} else {
		require.NoError(t, err)
	}
	require.Equal(t, 1, killed)
	testwait.Until(t, func() bool { return gone(int64(left.Process.Pid)) }, 5*time.Second, 10*time.Millisecond, "the process left by a dead server is killed")
	require.NoFileExists(t, filepath.Join(dir, "1-x.groups"))
	require.False(t, gone(int64(unrelated.Process.Pid)), "a process without the run's token is left alone")
	require.False(t, gone(int64(otherRun.Process.Pid)), "a process of another run is left alone")
	require.False(t, gone(int64(live.Process.Pid)), "a live server's processes are left alone")
	require.FileExists(t, filepath.Join(dir, "2-x.groups"))
	require.False(t, gone(int64(otherNS.Process.Pid)), "another namespace's processes are left alone")
	require.FileExists(t, filepath.Join(dir, "3-x.groups"))
	require.NoFileExists(t, stale)
	require.FileExists(t, fresh)
	if foreign != nil {
		require.False(t, gone(int64(foreign.Process.Pid)), "another user's record is not read")
	}
	local.Close()
}

// A record another server removed first (both found it) is no error.
func TestLeftRecordGone(t *testing.T) {
	t.Parallel()
	killed, err := lambda.KillLeft(filepath.Join(t.TempDir(), "1-x.groups"))
	require.NoError(t, err)
	require.Zero(t, killed)
}

// A folder of records someone else may write is not used: no record is
// read (nothing killed) or written, and RecordGroups says why.
func TestGroupsDirRefused(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		prepare func(t *testing.T, dir string) string
		want    string
	}{
		"writable by others": {func(t *testing.T, dir string) string {
			require.NoError(t, os.Chmod(dir, 0o777))
			return dir
		}, "may be written by other users"},
		"a link": {func(t *testing.T, dir string) string {
			link := filepath.Join(t.TempDir(), "link")
			require.NoError(t, os.Symlink(dir, link))
			return link
		}, "is not a directory"},
		"below a folder writable by others": {func(t *testing.T, dir string) string {
			parent := t.TempDir()
			require.NoError(t, os.Chmod(parent, 0o777))
			moved := filepath.Join(parent, "functions")
			require.NoError(t, os.Rename(dir, moved))
			return moved
		}, "may be written by other users"},
	}
	if os.Geteuid() == 0 {
		cases["of another user"] = struct {
			prepare func(t *testing.T, dir string) string
			want    string
		}{func(t *testing.T, dir string) string {
			require.NoError(t, os.Chown(dir, 65534, 65534))
			return dir
		}, "belongs to uid 65534"}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "functions")
			require.NoError(t, os.Mkdir(dir, 0o700))
			p, start := sleeper(t, tokenVar("eeee"))
			record(t, filepath.Join(dir, "1-x.groups"), deadPid(t), 1, lambda.PidNamespace(), "eeee", map[int]uint64{p.Process.Pid: start})
			used := c.prepare(t, dir)

			local, err := lambda.NewLocal(nil, 0, nil)
			require.NoError(t, err)
			t.Cleanup(local.Close)
			killed, err := local.RecordGroups(used)
			require.ErrorContains(t, err, c.want)
			require.ErrorContains(t, err, "not recorded")
			require.Zero(t, killed)
			require.False(t, gone(int64(p.Process.Pid)), "nothing is killed")
			entries, err := os.ReadDir(used)
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing is written")
		})
	}
}

// A server's functions' processes carry its run's token, named in its
// record; it kills them when it closes — also those that left their
// process group — and removes its record.
func TestGroupsRecorded(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is not installed")
	}
	dir := t.TempDir()
	code := handlerDir(t, map[string]string{"app.py": `
import os
def handler(event, context):
    return {"pid": os.getpid()}
`})
	reg := localRegistry(t, map[string]string{"cmd": `setsid sleep 60 > /dev/null 2>&1 & echo "$!" > ` + filepath.Join(dir, "cmd.pid") + `; echo {}`}, 0)
	local := lambda.LocalOf(reg)
	_, err := local.RecordGroups(dir)
	require.NoError(t, err)
	require.NoError(t, local.Put("h", &lambda.Handler{Runtime: "python3.12", Dir: code, Name: "app.handler",
		Env: map[string]string{lambda.RunVar: "its-own"}}))
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:h", `{}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	pid, _ := get(t, res.Output, "pid").(jsonvalue.Number).Int64()
	records, err := filepath.Glob(filepath.Join(dir, strconv.Itoa(os.Getpid())+"-*.groups"))
	require.NoError(t, err)
	require.Len(t, records, 1)
	record := records[0]
	b, err := os.ReadFile(record)
	require.NoError(t, err)
	fields := strings.Fields(string(b))
	require.Len(t, fields, 6, string(b))
	token := fields[5]
	require.Len(t, token, 32)
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	require.NoError(t, err)
	require.Contains(t, strings.Split(string(environ), "\x00"), tokenVar(token), "the handler's process carries the run's token, whatever its Environment")

	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:cmd", `{}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	b, err = os.ReadFile(filepath.Join(dir, "cmd.pid"))
	require.NoError(t, err)
	child, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(int(child), syscall.SIGKILL) })
	require.False(t, gone(child), "the command's child in a session of its own outlives the command's group")

	reg.Close()
	testwait.Until(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "the warm process is stopped")
	testwait.Until(t, func() bool { return gone(child) }, 5*time.Second, 10*time.Millisecond, "the child that left its group is killed")
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
