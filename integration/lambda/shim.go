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
	"sync"
	"time"
)

// Handlers run by the runtime shim
//
// "--function NAME=python:DIR:module.function" and
// "NAME=node:DIR:file.function" run a Lambda handler as Lambda's Python
// and Node.js runtimes do, with the host's python3 or node and no
// container: our shim (shim/shim.py, shim/shim.js, written once to the
// user's cache folder) imports the handler once and serves invokes, warm
// (see process.go), over its standard input and output, one JSON line
// each way. The handler gets a Lambda context (function name and ARN,
// request id, memory, the remaining time); an exception becomes Lambda's
// error payload {errorType, errorMessage, stackTrace}, the error type
// being the exception's class, so a Catch names it as it would on AWS.

//go:embed shim/shim.py shim/shim.js
var shimFiles embed.FS

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

// shimTalk is a shim process's pipes.
type shimTalk struct {
	stdin  io.WriteCloser
	stdout *os.File
	lines  *bufio.Reader
}

// shimRequest is one invoke as the shim reads it.
type shimRequest struct {
	Event        string `json:"event"`
	RequestID    string `json:"requestId"`
	FunctionName string `json:"functionName"`
	FunctionArn  string `json:"functionArn"`
	MemoryMB     int    `json:"memoryMb"`
	DeadlineMs   int64  `json:"deadlineMs"`
	// TraceID is X-Ray's trace header (the shim's _X_AMZN_TRACE_ID) and
	// TraceParent the W3C one (TRACEPARENT) of the caller's span.
	TraceID     string `json:"traceId,omitempty"`
	TraceParent string `json:"traceparent,omitempty"`
}

// shimReply is the shim's answer.
type shimReply struct {
	Payload json.RawMessage `json:"payload"`
	Error   json.RawMessage `json:"error"`
}

// startShim starts the shim for the function's handler in dir.
func (f *Function) startShim(ctx context.Context, dir string) (*warm, error) {
	shims, err := shimDir()
	if err != nil {
		return nil, fmt.Errorf("the runtime shim: %w", err)
	}
	h := f.Handler
	program, shim := f.local.program(h), "shim.py"
	if h.Runtime == RuntimeNode {
		shim = "shim.js"
	}
	// The shim also ends when its standard input closes.
	cmd := exec.CommandContext(ctx, program, filepath.Join(shims, shim), dir, h.Name)
	// No bytecode written into the code's folder: Lambda's is read-only,
	// and a deploy would see the code changed.
	cmd.Env = append(f.env(dir), "PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipe, not StdoutPipe: Wait must not close it before the
	// last answer is read.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	t := &shimTalk{stdin: stdin, stdout: stdout, lines: bufio.NewReaderSize(stdout, 64*1024)}
	p, err := startProcess(cmd, t, f.local)
	w.Close()
	if err != nil {
		stdout.Close()
		return nil, err
	}
	return p, nil
}

// init reads the shim's first line, {"ready": true}, sent once it
// imported the handler (or failed to: the first invoke then gets the
// error).
func (t *shimTalk) init(ctx context.Context, p *warm, limit time.Duration) ([]byte, error) {
	line, err := t.exchange(ctx, p, nil, limit)
	if errors.Is(err, errTooLarge) {
		return errorPayload("Runtime.MarshalError", "the runtime's first answer is not {\"ready\": true}"), nil
	}
	if err != nil {
		return nil, err
	}
	var r struct {
		Ready bool `json:"ready"`
	}
	if json.Unmarshal(line, &r) != nil || !r.Ready {
		return errorPayload("Runtime.MarshalError", "the runtime's answer is not JSON: "+snippet(line)), nil
	}
	return nil, nil
}

func (t *shimTalk) invoke(ctx context.Context, p *warm, inv *invocation, limit time.Duration) ([]byte, bool, error) {
	req, _ := json.Marshal(shimRequest{
		Event: string(inv.event), RequestID: inv.requestID, FunctionName: inv.functionName,
		FunctionArn: inv.functionArn, MemoryMB: inv.memoryMB, DeadlineMs: inv.deadline.UnixMilli(),
		TraceID: inv.trace.xray, TraceParent: inv.trace.parent,
	})
	line, err := t.exchange(ctx, p, req, limit)
	if errors.Is(err, errTooLarge) {
		return tooLarge(), true, nil
	}
	if err != nil {
		return nil, false, err
	}
	var rep shimReply
	if err := json.Unmarshal(line, &rep); err != nil {
		p.stop()
		return errorPayload("Runtime.MarshalError", "the runtime's answer is not JSON: "+snippet(line)), true, nil
	}
	if rep.Error != nil {
		return rep.Error, true, nil
	}
	if len(rep.Payload) > maxResponse {
		return tooLarge(), true, nil
	}
	return rep.Payload, false, nil
}

func (t *shimTalk) close() { t.stdout.Close() }

// exchange sends req (nil: nothing) to the process and reads its answer
// line within limit. The process is stopped when the time runs out
// (errTimedOut), the context ends (its error) or its answer is longer
// than an answer may be (errTooLarge: it is not read further); one that
// answers no more (errGone) is left to exit (see died).
func (t *shimTalk) exchange(ctx context.Context, p *warm, req []byte, limit time.Duration) ([]byte, error) {
	type result struct {
		line []byte
		err  error
	}
	got := make(chan result, 1)
	go func() {
		if req != nil {
			if _, err := t.stdin.Write(append(req, '\n')); err != nil {
				got <- result{err: fmt.Errorf("%w: %w", errGone, err)}
				return
			}
		}
		line, err := readLine(t.lines, maxShimLine)
		if err != nil && !errors.Is(err, errTooLarge) {
			err = fmt.Errorf("%w: %w", errGone, err)
		}
		got <- result{line, err}
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r := <-got:
		if errors.Is(r.err, errTooLarge) {
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

// maxShimLine is the longest answer line of the shim: a payload of
// Lambda's largest response in {"payload": ...}, with room to spare.
const maxShimLine = maxResponse + 1024

// readLine reads a line of at most max bytes (its newline included);
// past that it stops reading, with errTooLarge.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, errTooLarge
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}
