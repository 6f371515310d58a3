//go:build unix

package lambda_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/integration/lambda"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
)

// gone tells a process that ended (and was waited for).
func gone(pid int64) bool { return syscall.Kill(int(pid), 0) == syscall.ESRCH }

const versionHandler = `
import os, time
def handler(event, context):
    if event.get("wait"):
        open(event["started"], "w").close()
        deadline = time.time() + 20
        while not os.path.exists(event["wait"]) and time.time() < deadline:
            time.sleep(0.01)
    return {"version": os.environ["VERSION"], "pid": os.getpid()}
`

// Put replaces a function while it is invoked: its idle processes are
// stopped, the next invoke starts the new one, an invoke in flight
// finishes on the old one (whose process is then stopped); Remove sends
// the next invokes to the Lambda API.
func TestPutWhileInvoking(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": versionHandler})
	reg := localRegistry(t, nil, 0)
	local := lambda.LocalOf(reg)
	put := func(version string) {
		require.NoError(t, local.Put("f", &lambda.Handler{Runtime: "python3.12", Dir: dir, Name: "app.handler", Timeout: 30 * time.Second,
			Env: map[string]string{"VERSION": version}}))
	}
	invoke := func(event string) (version string, pid int64) {
		res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f:live", event)
		require.Nil(t, res.Failure, "%+v", res.Failure)
		pid, ok := get(t, res.Output, "pid").(jsonvalue.Number).Int64()
		require.True(t, ok)
		return get(t, res.Output, "version").(string), pid
	}
	put("v1")
	version, first := invoke(`{}`)
	require.Equal(t, "v1", version)

	// An invoke in flight on the first process, and a second process
	// idle.
	started, release := filepath.Join(t.TempDir(), "started"), filepath.Join(t.TempDir(), "release")
	inFlight := make(chan task.Result, 1)
	go func() {
		inFlight <- run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{"wait": "`+release+`", "started": "`+started+`"}`)
	}()
	testwait.Until(t, func() bool { _, err := os.Stat(started); return err == nil }, 20*time.Second, 10*time.Millisecond, "the invoke never started")
	version, second := invoke(`{}`)
	require.Equal(t, "v1", version)
	require.NotEqual(t, first, second, "the first process is busy")

	put("v2")
	testwait.Until(t, func() bool { return gone(second) }, 20*time.Second, 10*time.Millisecond, "the idle process of the replaced function still runs")
	version, third := invoke(`{}`)
	require.Equal(t, "v2", version, "the next invoke runs the new function")
	require.NotContains(t, []int64{first, second}, third)
	require.False(t, gone(first), "the invoke in flight goes on")

	require.NoError(t, os.WriteFile(release, nil, 0o644))
	res := <-inFlight
	require.Nil(t, res.Failure, "%+v", res.Failure)
	require.Equal(t, "v1", get(t, res.Output, "version"), "the invoke in flight finished on the old function")
	testwait.Until(t, func() bool { return gone(first) }, 20*time.Second, 10*time.Millisecond, "the old function's process outlived its invoke")

	require.True(t, local.Remove("f"))
	testwait.Until(t, func() bool { return gone(third) }, 20*time.Second, 10*time.Millisecond, "the removed function's process still runs")
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{}`)
	require.Equal(t, "Lambda.SdkClientException", res.Failure.Name, "a removed function is invoked through the Lambda API")
}

// The registry's Close stops the processes of its local functions.
func TestRegistryCloseStopsFunctions(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": versionHandler})
	reg := localRegistry(t, map[string]string{"f": "python:" + dir + ":app.handler"}, 0)
	require.NoError(t, lambda.LocalOf(reg).Put("g", &lambda.Handler{Runtime: lambda.RuntimePython, Dir: dir, Name: "app.handler", Env: map[string]string{"VERSION": "g"}}))
	var pids []int64
	for _, fn := range []string{"f", "g"} {
		p, err := jsonvalue.ParseString(`{}`)
		require.NoError(t, err)
		out, err := reg.Invoke(context.Background(), "arn:aws:lambda:us-east-1:123456789012:function:"+fn, p)
		if fn == "f" {
			// --function handlers get no VERSION: the handler fails, its
			// process stays.
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		pid, _ := get(t, out, "pid").(jsonvalue.Number).Int64()
		pids = append(pids, pid)
	}
	require.False(t, gone(pids[0]))
	reg.Close()
	testwait.Until(t, func() bool { return gone(pids[0]) }, 20*time.Second, 10*time.Millisecond, "the function's process outlived the registry")
}

// A handler's code may be a zip: it runs from its extraction, and a new
// zip at the same path is extracted and run at a later invoke.
func TestHandlerFromZip(t *testing.T) {
	needs(t, "python3")
	codeRootIn(t, t.TempDir())
	path := zipOf(t, []zipEntry{{name: "app.py", content: "from lib.values import value\ndef handler(event, context):\n    return value\n"},
		{name: "lib/__init__.py"}, {name: "lib/values.py", content: "value = 'zipped'\n"}})
	reg := localRegistry(t, nil, 0)
	require.NoError(t, lambda.LocalOf(reg).Put("f", &lambda.Handler{Runtime: lambda.RuntimePython, Dir: path, Name: "app.handler"}))
	t.Cleanup(reg.Close)
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	require.Equal(t, "zipped", res.Output)

	next := zipOf(t, []zipEntry{{name: "app.py", content: "def handler(event, context):\n    return 'rezipped'\n"}})
	require.NoError(t, os.Rename(next, path))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(path, later, later))
	testwait.Until(t, func() bool {
		res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{}`)
		require.Nil(t, res.Failure, "%+v", res.Failure)
		return res.Output == "rezipped"
	}, 20*time.Second, 100*time.Millisecond, "the new zip never ran")
}
