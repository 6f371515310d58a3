package lambda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"stepwise/integration"
)

// Warm processes
//
// A handler function's process serves one invoke at a time; it is
// started when an invoke finds none idle (so invokes at the same time
// run side by side, as Lambda's instances do) and kept for the next. Its
// first invoke waits for its init (the shim's import of the handler, a
// bootstrap's first call for an invocation) within InitTimeout, outside
// the invoke's own time. An invoke that runs past the function's timeout
// (3 seconds unless set, as Lambda's) fails with Lambda's Sandbox.Timedout
// and its process is stopped; so is one whose code changed since it
// started (code.go), or whose function was replaced or removed (the
// invoke it is serving finishes first): the next invoke starts another.

// warm is the running process of a handler function.
type warm struct {
	cmd    *exec.Cmd
	kill   context.CancelFunc
	stderr *syncTail
	done   chan struct{}
	// talk is how invokes reach it: the shim's pipes, or the Runtime API
	// its bootstrap calls.
	talk talker
	// ready: the runtime's init is over.
	ready bool
	// stamp is the code's when the process started.
	stamp string
	// stopped: killed, never used again (only its invoke touches it).
	stopped bool
	// reap stops it once it has been idle for the function's idle
	// timeout (set while it is idle).
	reap *time.Timer
}

// talker carries invokes to a process. Both calls give up within limit
// (errTimedOut) or when ctx ends (its error), and answer errGone when the
// process is gone; the process is then stopped.
type talker interface {
	// init waits for the runtime's init: nil, or the error payload of
	// an init that failed.
	init(ctx context.Context, p *warm, limit time.Duration) (failed []byte, err error)
	// invoke hands the runtime an invoke and returns its answer: the
	// payload, or an error payload (fnErr).
	invoke(ctx context.Context, p *warm, inv *invocation, limit time.Duration) (out []byte, fnErr bool, err error)
	// close releases what the talk holds, once the process ended.
	close()
}

// invocation is one invoke as the runtime gets it.
type invocation struct {
	event        []byte
	requestID    string
	functionName string
	functionArn  string
	memoryMB     int
	deadline     time.Time
	// clientContext is the invoke's ClientContext, decoded.
	clientContext string
	// trace is the caller's trace context (empty when none).
	trace traceContext
}

// errTimedOut marks an invoke that ran past the function's timeout;
// errGone a process that ended or stopped answering; errTooLarge an
// answer longer than Lambda takes.
var (
	errTimedOut = errors.New("timed out")
	errGone     = errors.New("the runtime process is gone")
	errTooLarge = errors.New("the answer is too large")
)

// runHandler serves one invoke on the function's warm process, starting
// it if need be. It returns the payload, whether it is a function error,
// and the end of the process's standard error.
//
// Once the invoke is handed to the process, it runs to its end (within
// the function's timeout) even when ctx ends first, as on Lambda, where
// an invoke already sent is not stopped when its caller gives up (a
// Parallel's branch failed, StopExecution): runHandler then returns
// ctx's error at once, and the invoke's result is dropped. The server's
// shutdown still kills the process (its process group).
func (f *Function) runHandler(ctx context.Context, payload []byte, requestID, clientContext string) (out []byte, fnErr bool, stderr []byte, err error) {
	select {
	case f.local.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, nil, ctx.Err()
	}
	type result struct {
		out, stderr []byte
		fnErr       bool
		err         error
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-f.local.slots }()
		var r result
		d, stop := detached(ctx)
		defer stop()
		r.out, r.fnErr, r.stderr, r.err = f.serveHandler(d, payload, requestID, clientContext)
		done <- r
	}()
	select {
	case r := <-done:
		return r.out, r.fnErr, r.stderr, r.err
	case <-ctx.Done():
		return nil, false, nil, ctx.Err()
	}
}

// serveHandler is runHandler's invoke, with a slot taken.
func (f *Function) serveHandler(ctx context.Context, payload []byte, requestID, clientContext string) (out []byte, fnErr bool, stderr []byte, err error) {
	h := f.Handler
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	p, err := f.take()
	if err != nil {
		return nil, false, nil, err
	}
	defer f.put(p)
	if !p.ready {
		failed, err := p.talk.init(ctx, p, InitTimeout)
		switch {
		case errors.Is(err, errTimedOut):
			return errorPayload("Sandbox.Timedout", fmt.Sprintf("RequestId: %s Error: the handler's init timed out after %.2f seconds", requestID, InitTimeout.Seconds())),
				true, p.stderr.bytes(), errTimedOut
		case err != nil && ctx.Err() != nil:
			p.stop() // cut short in its init: not taken again
			return nil, false, p.stderr.bytes(), ctx.Err()
		case err != nil:
			return f.died(p, requestID), true, p.stderr.bytes(), nil
		case failed != nil:
			p.stop()
			return failed, true, p.stderr.bytes(), nil
		}
		p.ready = true
	}
	inv := &invocation{event: payload, requestID: requestID, functionName: f.Name, functionArn: f.local.arn(f.Name),
		memoryMB: h.memory(), deadline: time.Now().Add(timeout), clientContext: clientContext, trace: traceOf(ctx)}
	out, fnErr, err = p.talk.invoke(ctx, p, inv, timeout)
	switch {
	case errors.Is(err, errTimedOut):
		return errorPayload("Sandbox.Timedout", fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", requestID, timeout.Seconds())),
			true, p.stderr.bytes(), errTimedOut
	case err != nil && ctx.Err() != nil:
		// Cut short mid-invoke (a kill, or the server stopping): the
		// process, and what it started, is stopped, not taken again.
		p.stop()
		return nil, false, p.stderr.bytes(), ctx.Err()
	case err != nil:
		return f.died(p, requestID), true, p.stderr.bytes(), nil
	}
	if !fnErr && len(out) > f.local.limit {
		// Kept up to one byte over: the task fails with
		// States.DataLimitExceeded.
		out = out[:f.local.limit+1]
	}
	return out, fnErr, p.stderr.bytes(), nil
}

func (h *Handler) memory() int {
	if h.MemoryMB <= 0 {
		return DefaultMemoryMB
	}
	return h.MemoryMB
}

// died is the error payload of a process that ended, as Lambda words
// it: Runtime.ExitError, "RequestId: ... Error: Runtime exited with
// error: exit status 3" (or "signal: killed"; "Runtime exited without
// providing a reason" for an exit status of 0). A process that closed
// its end is given exitGrace to exit, so that its own exit status, not
// our kill, is reported. The next invoke starts another.
func (f *Function) died(p *warm, requestID string) []byte {
	timer := time.NewTimer(exitGrace)
	select {
	case <-p.done:
	case <-timer.C:
	}
	timer.Stop()
	p.stop()
	<-p.done
	return errorPayload("Runtime.ExitError", exitMessage(requestID, p.cmd.ProcessState))
}

// exitGrace is how long a runtime that stopped answering has to exit.
const exitGrace = time.Second

// exitMessage is Lambda's errorMessage for a runtime that exited.
func exitMessage(requestID string, st *os.ProcessState) string {
	if st != nil && st.Success() {
		return fmt.Sprintf("RequestId: %s Error: Runtime exited without providing a reason", requestID)
	}
	return fmt.Sprintf("RequestId: %s Error: Runtime exited with error: %s", requestID, st)
}

// env is the environment of a handler's process: the allowed part of
// ours (env.go), Lambda's variables, the function's own.
func (f *Function) env(dir string) []string {
	h := f.Handler
	env := append(f.local.baseEnviron(),
		"AWS_LAMBDA_FUNCTION_NAME="+f.Name,
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(h.memory()),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+f.Name,
		"AWS_LAMBDA_LOG_STREAM_NAME=stepwise",
		"AWS_REGION="+f.local.region,
		"AWS_DEFAULT_REGION="+f.local.region,
		"LAMBDA_TASK_ROOT="+dir,
		"_HANDLER="+h.Name,
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		// Lambda's clock is UTC, whatever the server's TZ.
		"TZ=:UTC",
	)
	if h.Runtime != RuntimeProvided && h.Declared != "" {
		env = append(env, "AWS_EXECUTION_ENV=AWS_Lambda_"+h.Declared)
	} else if h.Runtime != RuntimeProvided {
		env = append(env, "AWS_EXECUTION_ENV=AWS_Lambda_"+map[string]string{RuntimePython: "python3", RuntimeNode: "nodejs"}[h.Runtime])
	}
	env = f.paths.env(env)
	for k, v := range h.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// startProcess starts cmd as a handler's process, its standard error
// (and its standard output unless set) kept as its log.
func startProcess(cmd *exec.Cmd, talk talker, l *Local) (*warm, error) {
	p := &warm{cmd: cmd, talk: talk, stderr: &syncTail{tail: tail{limit: logTail}}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if cmd.Stdout == nil {
		cmd.Stdout = p.stderr
	}
	cmd.WaitDelay = time.Second
	killAsGroup(cmd)
	if err := l.startCmd(cmd); err != nil {
		return nil, err
	}
	rec := l.groups.Load()
	rec.add(cmd.Process.Pid)
	go func() {
		_ = cmd.Wait()
		// What it started goes with it.
		killGroup(cmd)
		rec.remove(cmd.Process.Pid)
		close(p.done)
	}()
	return p, nil
}

// start starts a process of the function's handler for the code in dir.
func (f *Function) start(dir string) (*warm, error) {
	// The process lives until it is stopped (its context canceled kills
	// its process group).
	ctx, kill := context.WithCancel(context.Background())
	var p *warm
	var err error
	if f.Handler.Runtime == RuntimeProvided {
		p, err = f.startBootstrap(ctx, dir)
	} else {
		p, err = f.startShim(ctx, dir)
	}
	if err != nil {
		kill()
		return nil, fmt.Errorf("local function %s: %w", f.Name, err)
	}
	p.kill = kill
	return p, nil
}

// take returns an idle process of the function, or a new one; one whose
// code changed since it started is stopped (a cold start loads the code
// again), one that exited is let go.
func (f *Function) take() (*warm, error) {
	dir, stamp, err := f.code.current()
	if err != nil {
		return nil, fmt.Errorf("local function %s: %w", f.Name, err)
	}
	f.mu.Lock()
	for len(f.idle) > 0 {
		p := f.idle[len(f.idle)-1]
		f.idle = f.idle[:len(f.idle)-1]
		if p.reap != nil {
			p.reap.Stop()
			p.reap = nil
		}
		if p.stamp == stamp && !p.ended() {
			f.mu.Unlock()
			return p, nil
		}
		p.stop()
	}
	f.mu.Unlock()
	p, err := f.start(dir)
	if err != nil {
		return nil, err
	}
	p.stamp = stamp
	return p, nil
}

// put gives back a process after an invoke: idle, for the next one,
// unless it was stopped or the function closed. One left idle for the
// idle timeout is stopped (reapIdle).
func (f *Function) put(p *warm) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.stopped || f.closed {
		p.stop()
		return
	}
	f.idle = append(f.idle, p)
	p.reap = time.AfterFunc(f.local.IdleTimeout(), func() { f.reapIdle(p) })
}

// reapIdle stops a process still idle.
func (f *Function) reapIdle(p *warm) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.idle, p); i >= 0 {
		f.idle = slices.Delete(f.idle, i, i+1)
		p.reap = nil
		p.stop()
	}
}

// close stops the function's idle processes, and those serving an invoke
// once it ends.
func (f *Function) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for _, p := range f.idle {
		if p.reap != nil {
			p.reap.Stop()
		}
		p.stop()
	}
	f.idle = nil
}

// ended tells a process that exited.
func (p *warm) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop kills the process.
func (p *warm) stop() {
	if p.stopped {
		return
	}
	p.stopped = true
	p.kill()
	go func() {
		<-p.done
		p.talk.close()
	}()
}

// syncTail is a tail written by a process and read by invokes.
type syncTail struct {
	mu   sync.Mutex
	tail tail
}

func (t *syncTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tail.Write(p)
}

func (t *syncTail) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.tail.buf...)
}

// detached is ctx without its end, for an invoke that runs to its end
// when its caller gives up, as Lambda's does; but it ends when an
// operator killed the task (integration.ErrKilled is ctx's cause).
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	d, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(context.Cause(ctx), integration.ErrKilled) {
			cancel()
		}
	})
	return d, func() { stop(); cancel() }
}
