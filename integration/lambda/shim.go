package lambda

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Handlers run by the runtime shim
//
// "--function NAME=python:DIR:module.function" and
// "NAME=node:DIR:file.function" run a Lambda handler as Lambda's Python
// and Node.js runtimes do, with the host's python3 or node and no
// container: our shim (shim/shim.py, shim/shim.js, written once to the
// user's cache folder) imports the handler once and serves invokes, warm,
// over its standard input and output, one JSON line each way. A process
// serves one invoke at a time; it is started when an invoke finds none
// idle (so invokes at the same time run side by side, as Lambda's
// instances do) and kept for the next. The handler gets a Lambda context
// (function name and ARN, request id, memory, the remaining time); an
// exception becomes Lambda's error payload {errorType, errorMessage,
// stackTrace}, the error type being the exception's class, so a Catch
// names it as it would on AWS. An invoke that runs past the function's
// timeout (3 seconds unless set, as Lambda's) fails with Lambda's
// Sandbox.Timedout and its process is stopped, as is one whose code files
// (at the top of the folder) changed since it started: the next invoke
// starts another.

//go:embed shim/shim.py shim/shim.js
var shimFiles embed.FS

// Runtimes of the shim.
const (
	RuntimePython = "python"
	RuntimeNode   = "node"
)

// Default settings of a handler function, Lambda's own.
const (
	DefaultTimeout  = 3 * time.Second
	DefaultMemoryMB = 128
	// InitTimeout bounds the handler's import, as Lambda's init phase.
	InitTimeout = 10 * time.Second
)

// Handler is a function run by the shim.
type Handler struct {
	// Runtime is RuntimePython or RuntimeNode.
	Runtime string
	// Dir is the folder of the code; Name the handler, module.function
	// (Python) or file.function (Node.js).
	Dir, Name string
	// Timeout bounds an invoke (0: DefaultTimeout); MemoryMB is what the
	// context reports (0: DefaultMemoryMB).
	Timeout  time.Duration
	MemoryMB int
	// Env is added to the process's environment.
	Env map[string]string
}

// ParseHandler reads the RUNTIME:DIR:HANDLER form of a --function value;
// ok is false when spec is not of that form (it is then a command line).
func ParseHandler(spec string) (h *Handler, ok bool, err error) {
	runtime, rest, found := strings.Cut(spec, ":")
	if !found || (runtime != RuntimePython && runtime != RuntimeNode) {
		return nil, false, nil
	}
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return nil, true, fmt.Errorf("%q: give a handler as %s:DIR:%s", spec, runtime, handlerForm(runtime))
	}
	h = &Handler{Runtime: runtime, Dir: rest[:i], Name: rest[i+1:]}
	if err := h.check(); err != nil {
		return nil, true, fmt.Errorf("%q: %w", spec, err)
	}
	return h, true, nil
}

func handlerForm(runtime string) string {
	if runtime == RuntimeNode {
		return "file.function"
	}
	return "module.function"
}

// check names what is wrong with h.
func (h *Handler) check() error {
	if h.Runtime != RuntimePython && h.Runtime != RuntimeNode {
		return fmt.Errorf("runtime %q: the runtimes are %s and %s", h.Runtime, RuntimePython, RuntimeNode)
	}
	mod, fn, _ := cutLast(h.Name, ".")
	if mod == "" || fn == "" {
		return fmt.Errorf("handler %q: give it as %s", h.Name, handlerForm(h.Runtime))
	}
	if h.Dir == "" {
		return fmt.Errorf("no folder for handler %s", h.Name)
	}
	st, err := os.Stat(h.Dir)
	if err != nil {
		return fmt.Errorf("the handler's folder: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("the handler's folder %s is not a folder", h.Dir)
	}
	if h.Timeout < 0 || h.MemoryMB < 0 {
		return errors.New("a handler's timeout and memory are not negative")
	}
	return nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// shimDir holds the shim's files: a folder named after their content in
// the user's cache folder, written once (by whichever process comes
// first) and shared by every Stepwise of the same version; a new
// temporary folder when there is no cache folder.
var shimDir = sync.OnceValues(func() (string, error) {
	sum := sha256.New()
	names := []string{"shim.py", "shim.js"}
	files := make([][]byte, len(names))
	for i, name := range names {
		b, err := shimFiles.ReadFile("shim/" + name)
		if err != nil {
			return "", err
		}
		files[i] = b
		sum.Write(b)
	}
	var dir string
	if cache, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(cache, "stepwise", fmt.Sprintf("shim-%x", sum.Sum(nil)[:8]))
		if os.MkdirAll(dir, 0o700) != nil {
			dir = ""
		}
	}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "stepwise-shim-"); err != nil {
			return "", err
		}
	}
	for i, name := range names {
		path := filepath.Join(dir, name)
		if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, files[i]) {
			continue
		}
		// Written aside and renamed, so a shim is never seen half written.
		tmp, err := os.CreateTemp(dir, name+".*")
		if err != nil {
			return "", err
		}
		_, err = tmp.Write(files[i])
		if closeErr := tmp.Close(); err == nil {
			err = closeErr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return "", err
		}
	}
	return dir, nil
})

// warm is the running process of a handler function.
type warm struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	kill   context.CancelFunc
	lines  *bufio.Reader
	stderr *syncTail
	done   chan struct{}
	// ready: the shim said it imported the handler (or failed to).
	ready bool
	// stamp is the code's when the process started.
	stamp string
	// stopped: killed, never used again (only its invoke touches it).
	stopped bool
}

// codeStamp sums up the code files at the top of a handler's folder
// (names, sizes, modification times), so that an edit to them is seen.
func codeStamp(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, e := range entries {
		switch filepath.Ext(e.Name()) {
		case ".py", ".js", ".mjs", ".cjs", ".json":
		default:
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "%s %d %d\n", e.Name(), info.Size(), info.ModTime().UnixNano())
	}
	return b.String()
}

// shimRequest is one invoke as the shim reads it.
type shimRequest struct {
	Event        string `json:"event"`
	RequestID    string `json:"requestId"`
	FunctionName string `json:"functionName"`
	FunctionArn  string `json:"functionArn"`
	MemoryMB     int    `json:"memoryMb"`
	DeadlineMs   int64  `json:"deadlineMs"`
}

// shimReply is the shim's answer.
type shimReply struct {
	Payload json.RawMessage `json:"payload"`
	Error   json.RawMessage `json:"error"`
}

// errTimedOut marks an invoke that ran past the function's timeout.
var errTimedOut = errors.New("timed out")

// runHandler serves one invoke on the function's warm process, starting
// it if need be. It returns the payload, whether it is a function error,
// and the end of the process's standard error.
func (f *Function) runHandler(ctx context.Context, payload []byte, requestID string) (out []byte, fnErr bool, stderr []byte, err error) {
	select {
	case f.local.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, false, nil, ctx.Err()
	}
	defer func() { <-f.local.slots }()

	h := f.Handler
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	memory := h.MemoryMB
	if memory <= 0 {
		memory = DefaultMemoryMB
	}
	p, err := f.take()
	if err != nil {
		return nil, false, nil, err
	}
	defer f.put(p)
	if !p.ready {
		// The handler's import, Lambda's init phase, has a time of its
		// own, outside the invoke's.
		line, err := f.exchange(ctx, p, nil, InitTimeout)
		switch {
		case errors.Is(err, errTimedOut):
			return errorPayload("Sandbox.Timedout", fmt.Sprintf("RequestId: %s Error: the handler's init timed out after %.2f seconds", requestID, InitTimeout.Seconds())),
				true, p.stderr.bytes(), errTimedOut
		case err != nil && ctx.Err() != nil:
			return nil, false, p.stderr.bytes(), ctx.Err()
		case err != nil:
			return f.died(p), true, p.stderr.bytes(), nil
		case !isReady(line):
			p.stop()
			return errorPayload("Runtime.MarshalError", "the runtime's answer is not JSON: "+snippet(line)), true, p.stderr.bytes(), nil
		}
		p.ready = true
	}
	deadline := time.Now().Add(timeout)
	req, _ := json.Marshal(shimRequest{
		Event: string(payload), RequestID: requestID, FunctionName: f.Name,
		FunctionArn: f.local.arn(f.Name), MemoryMB: memory, DeadlineMs: deadline.UnixMilli(),
	})
	line, err := f.exchange(ctx, p, req, timeout)
	switch {
	case errors.Is(err, errTimedOut):
		return errorPayload("Sandbox.Timedout", fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", requestID, timeout.Seconds())),
			true, p.stderr.bytes(), errTimedOut
	case err != nil && ctx.Err() != nil:
		return nil, false, p.stderr.bytes(), ctx.Err()
	case err != nil:
		return f.died(p), true, p.stderr.bytes(), nil
	}
	var rep shimReply
	if err := json.Unmarshal(line, &rep); err != nil {
		p.stop()
		return errorPayload("Runtime.MarshalError", "the runtime's answer is not JSON: "+snippet(line)), true, p.stderr.bytes(), nil
	}
	if rep.Error != nil {
		return rep.Error, true, p.stderr.bytes(), nil
	}
	if len(rep.Payload) > f.local.limit {
		return rep.Payload[:f.local.limit+1], false, p.stderr.bytes(), nil
	}
	return rep.Payload, false, p.stderr.bytes(), nil
}

// exchange sends req (nil: nothing) to the process and reads its answer
// line within limit. The process is stopped when the time runs out
// (errTimedOut), the context ends (its error) or it answers no more.
func (f *Function) exchange(ctx context.Context, p *warm, req []byte, limit time.Duration) ([]byte, error) {
	type result struct {
		line []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		if req != nil {
			if _, err := p.stdin.Write(append(req, '\n')); err != nil {
				got <- result{err: err}
				return
			}
		}
		line, err := p.lines.ReadBytes('\n')
		got <- result{line, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-got:
		if r.err != nil {
			p.stop()
		}
		return r.line, r.err
	case <-timer.C:
		p.stop()
		return nil, errTimedOut
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
}

// isReady tells the shim's first line, {"ready": true}.
func isReady(line []byte) bool {
	var r struct {
		Ready bool `json:"ready"`
	}
	return json.Unmarshal(line, &r) == nil && r.Ready
}

// died is the error payload of a process that ended: Runtime.ExitError
// with the end of its standard error. The next invoke starts another.
func (f *Function) died(p *warm) []byte {
	<-p.done
	msg := fmt.Sprintf("Runtime exited with error: %s", p.cmd.ProcessState)
	if s := strings.TrimSpace(string(p.stderr.bytes())); s != "" {
		msg += ": " + snippet([]byte(s))
	}
	return errorPayload("Runtime.ExitError", msg)
}

// start starts the function's process.
func (f *Function) start() (*warm, error) {
	dir, err := shimDir()
	if err != nil {
		return nil, fmt.Errorf("local function %s: the runtime shim: %w", f.Name, err)
	}
	h := f.Handler
	program, shim := "python3", "shim.py"
	if h.Runtime == RuntimeNode {
		program, shim = "node", "shim.js"
	}
	// The process lives until it is stopped (its context canceled kills
	// its process group) or its standard input closes.
	ctx, kill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, program, filepath.Join(dir, shim), h.Dir, h.Name)
	cmd.Env = append(os.Environ(), "AWS_LAMBDA_FUNCTION_NAME="+f.Name, "PYTHONUNBUFFERED=1")
	for k, v := range h.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	killAsGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		kill()
		return nil, err
	}
	// Our own pipe, not StdoutPipe: Wait must not close it before the
	// last answer is read.
	stdout, w, err := os.Pipe()
	if err != nil {
		kill()
		return nil, err
	}
	cmd.Stdout = w
	cmd.WaitDelay = time.Second
	p := &warm{cmd: cmd, stdin: stdin, stdout: stdout, lines: bufio.NewReaderSize(stdout, 64*1024), stderr: &syncTail{tail: tail{limit: logTail}}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	p.kill = kill
	err = cmd.Start()
	w.Close()
	if err != nil {
		kill()
		stdout.Close()
		return nil, fmt.Errorf("local function %s: %w", f.Name, err)
	}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// take returns an idle process of the function, or a new one; one whose
// code changed since it started is stopped (a cold start imports the code
// again).
func (f *Function) take() (*warm, error) {
	stamp := codeStamp(f.Handler.Dir)
	f.mu.Lock()
	for len(f.idle) > 0 {
		p := f.idle[len(f.idle)-1]
		f.idle = f.idle[:len(f.idle)-1]
		if p.stamp == stamp {
			f.mu.Unlock()
			return p, nil
		}
		p.stop()
	}
	f.mu.Unlock()
	p, err := f.start()
	if err != nil {
		return nil, err
	}
	p.stamp = stamp
	return p, nil
}

// put gives back a process after an invoke: idle, for the next one,
// unless it was stopped or the functions closed.
func (f *Function) put(p *warm) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.stopped || f.closed {
		p.stop()
		return
	}
	f.idle = append(f.idle, p)
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
		p.stdout.Close()
	}()
}

// Close stops the processes of the handler functions, and those running
// an invoke once it ends.
func (l *Local) Close() {
	if l == nil {
		return
	}
	for _, f := range l.fns {
		f.mu.Lock()
		f.closed = true
		for _, p := range f.idle {
			p.stop()
		}
		f.idle = nil
		f.mu.Unlock()
	}
}

// arn is a local function's ARN.
func (l *Local) arn(name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", l.region, l.account, name)
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
