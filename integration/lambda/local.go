package lambda

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/google/uuid"

	"stepwise/internal/warnrule"
	"stepwise/jsonvalue"
)

// Local functions
//
// "stepwise serve --function NAME=COMMAND" runs COMMAND, a shell command
// line, for every invoke of function NAME (named by its name, a partial or
// a full ARN, with any qualifier): the event JSON on its standard input,
// the result JSON on its standard output. A command that exits non-zero
// fails the invoke as a function error: a JSON object
// {"errorType": ..., "errorMessage": ...} it printed is the error, anything
// else is Runtime.ExitError with the end of its standard error. Output
// that is not JSON is Runtime.MarshalError. The result and the history
// are those of a Lambda invoke, so a workflow moves between local
// functions and Lambda unchanged.
//
// "NAME=rc:CODES:COMMAND" (CODES as 1-8 or 1-8,20) makes the exit code
// the job's return code, as job schedulers judge it: an exit of 0 or one
// of CODES succeeds with {"rc": N, "output": <the JSON it printed>} (or
// "stdout": <the text>, when that is not JSON), which a state's warning
// rule (stepwise:warning/<state>=rc:1-8) reads as $.Payload.rc; any
// other exit fails the invoke as above.
//
// Invokes run at most maxLocalRuns at a time; the task's timeout (its
// context) kills the command and what it started; output beyond the
// payload limit is not kept (the task then fails with
// States.DataLimitExceeded); the last logTail bytes of standard error are
// the invoke's log (LogType Tail), and are logged.

// logTail is how much of a command's standard error is kept.
const logTail = 4096

// maxLocalRuns bounds the local invokes running at once.
var maxLocalRuns = 4 * runtime.NumCPU()

// Local is the set of local functions. Functions are added, replaced
// and removed while invokes run (Put, Remove): a lookup reads the set
// without a lock.
type Local struct {
	fns             atomic.Pointer[map[string]*Function]
	mu              sync.Mutex // held by the writers of fns
	closed          bool
	limit           int
	slots           chan struct{}
	log             *slog.Logger
	region, account string
	// env is what every function's environment starts from (env.go),
	// made of calls under envMu.
	env   atomic.Pointer[[]string]
	envMu sync.Mutex
	calls calls
	// interpreters are the programs of declared runtimes (interp.go).
	interpreters map[string]string
	// groups records the process groups of the functions (groups_linux.go).
	groups atomic.Pointer[groupRecord]
	// run is this server run's token: every function's process gets it
	// as runVar, and its children inherit it (groups_linux.go).
	run string
	// idle is how long a warm process is kept without an invoke.
	idle atomic.Int64
	// given are the names of the functions NewLocal was given.
	given map[string]bool
	// builds are the installed dependencies of functions (build.go).
	builds builds
	// held, while set, is closed when invokes may go on (Hold).
	held atomic.Pointer[chan struct{}]
}

// DefaultIdleTimeout is how long a handler's process is kept warm
// without an invoke before it is stopped (Lambda, too, reclaims an idle
// instance after some minutes).
const DefaultIdleTimeout = 10 * time.Minute

// IdleTimeout is how long a warm process is kept without an invoke.
func (l *Local) IdleTimeout() time.Duration { return time.Duration(l.idle.Load()) }

// SetIdleTimeout sets how long a warm process is kept without an invoke
// (d > 0); it holds for the processes that go idle after it.
func (l *Local) SetIdleTimeout(d time.Duration) {
	if d > 0 {
		l.idle.Store(int64(d))
	}
}

// Function is one local function.
type Function struct {
	Name, Command string
	// Handler, when set, is the handler its runtime runs instead of
	// Command (see handler.go).
	Handler *Handler
	// Codes, when set (rc:CODES:COMMAND), are the non-zero exit codes
	// that succeed with the return code in the result (rcPayload).
	Codes warnrule.Codes
	local *Local
	code  *code
	// paths are where its dependencies and layers are (build.go).
	paths  *paths
	mu     sync.Mutex
	idle   []*warm // processes of Handler waiting for an invoke
	closed bool
}

// NewLocal makes the local functions of specs (name → command line, or
// a handler as RUNTIME:DIR:HANDLER, see ParseHandler).
// Output is kept up to payloadLimit bytes (0: 256 KiB); the standard
// error of a failed invoke is logged to log (nil: not logged).
func NewLocal(specs map[string]string, payloadLimit int, log *slog.Logger) (*Local, error) {
	l := newLocal(payloadLimit, log)
	if err := l.addSpecs(specs); err != nil {
		return nil, err
	}
	return l, nil
}

// newLocal makes local functions with none yet.
func newLocal(payloadLimit int, log *slog.Logger) *Local {
	if payloadLimit <= 0 {
		payloadLimit = 256 * 1024
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Local{limit: payloadLimit, slots: make(chan struct{}, maxLocalRuns), log: log,
		region: "us-east-1", account: "123456789012", given: map[string]bool{},
		run: randomHex(16)}
	l.fns.Store(&map[string]*Function{})
	env := baseEnv(os.Environ(), calls{})
	l.env.Store(&env)
	l.idle.Store(int64(DefaultIdleTimeout))
	return l
}

// addSpecs adds the functions of specs (see NewLocal); their
// dependencies are installed now, with the interpreters and into the
// build cache already set.
func (l *Local) addSpecs(specs map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		cmd := specs[name]
		if err := checkName(name); err != nil {
			return err
		}
		l.given[name] = true
		if strings.TrimSpace(cmd) == "" {
			return fmt.Errorf("local function %s: no command", name)
		}
		h, isHandler, err := ParseHandler(cmd)
		if err != nil {
			return fmt.Errorf("local function %s: %w", name, err)
		}
		if isHandler {
			if err := l.AddHandler(name, h); err != nil {
				return err
			}
			continue
		}
		codes, cmd, err := cutCodes(cmd)
		if err != nil {
			return fmt.Errorf("local function %s: %w", name, err)
		}
		if err := l.set(name, &Function{Name: name, Command: cmd, Codes: codes, local: l}, false); err != nil {
			return err
		}
	}
	return nil
}

func checkName(name string) error {
	if name == "" || strings.ContainsAny(name, ": /") {
		return fmt.Errorf("local function %q: a function name has no ':', '/' or space", name)
	}
	return nil
}

// AddHandler adds a function a runtime runs (see handler.go); a function
// of that name is an error.
func (l *Local) AddHandler(name string, h *Handler) error {
	f, err := l.handlerFunction(name, h)
	if err != nil {
		return err
	}
	return l.set(name, f, false)
}

// Put adds a function a runtime runs, or replaces the function of that
// name: the processes of the one replaced are stopped (the next invoke
// starts the new one's, a cold start), an invoke it is serving finishes
// first. Its code is looked at now: a zip is extracted, a provided
// runtime's bootstrap must be there. h is copied.
func (l *Local) Put(name string, h *Handler) error {
	f, err := l.handlerFunction(name, h)
	if err != nil {
		return err
	}
	return l.set(name, f, true)
}

// Remove removes a function, stopping its processes as Put does; false
// when there was none.
func (l *Local) Remove(name string) bool {
	l.mu.Lock()
	old := (*l.fns.Load())[name]
	if old != nil {
		fns := maps.Clone(*l.fns.Load())
		delete(fns, name)
		l.fns.Store(&fns)
	}
	l.mu.Unlock()
	if old == nil {
		return false
	}
	old.close()
	return true
}

// handlerFunction makes the function of a handler, its code ready.
func (l *Local) handlerFunction(name string, h *Handler) (*Function, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("local function %s: no handler", name)
	}
	copied := *h
	copied.Env = maps.Clone(h.Env)
	copied.Layers = slices.Clone(h.Layers)
	h = &copied
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("local function %s: %w", name, err)
	}
	f := &Function{Name: name, Handler: h, local: l, code: newCode(h.Dir)}
	dir, _, err := f.code.current()
	if err != nil {
		return nil, fmt.Errorf("local function %s: %w", name, err)
	}
	if h.Runtime == RuntimeProvided {
		if err := checkBootstrap(dir); err != nil {
			return nil, fmt.Errorf("local function %s: %w", name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), installBound)
	defer cancel()
	if f.paths, err = l.prepare(ctx, name, h, dir); err != nil {
		return nil, fmt.Errorf("local function %s: %w", name, err)
	}
	return f, nil
}

// set adds f under name, replacing the function there if replace.
func (l *Local) set(name string, f *Function, replace bool) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return fmt.Errorf("local function %s: the local functions are closed (the server is stopping)", name)
	}
	old := (*l.fns.Load())[name]
	if old != nil && !replace {
		l.mu.Unlock()
		return fmt.Errorf("local function %s: given twice", name)
	}
	fns := maps.Clone(*l.fns.Load())
	fns[name] = f
	l.fns.Store(&fns)
	l.mu.Unlock()
	if old != nil {
		old.close()
	}
	return nil
}

// Given tells a function NewLocal was given (serve's --function), not
// one put since.
func (l *Local) Given(name string) bool { return l != nil && l.given[name] }

// Hold makes invokes wait, before they look for a local function, until
// release is called: a server holds them while it puts the functions of
// its templates, so that an execution resumed meanwhile does not send
// an invoke of one of them to the Lambda API. release may be called more
// than once.
func (l *Local) Hold() (release func()) {
	ch := make(chan struct{})
	l.held.Store(&ch)
	var once sync.Once
	return func() {
		once.Do(func() {
			l.held.CompareAndSwap(&ch, nil)
			close(ch)
		})
	}
}

// wait waits while invokes are held.
func (l *Local) wait(ctx context.Context) error {
	if l == nil {
		return nil
	}
	if ch := l.held.Load(); ch != nil {
		select {
		case <-*ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Names returns the names of the local functions, sorted.
func (l *Local) Names() []string {
	if l == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(*l.fns.Load()))
}

// Lookup returns the local function an invoke names, or nil: the name
// alone or with a qualifier (fn, fn:prod), a partial ARN
// (123456789012:function:fn) or a full one, with or without a qualifier.
func (l *Local) Lookup(ident string) *Function {
	if l == nil {
		return nil
	}
	fns := *l.fns.Load()
	if len(fns) == 0 {
		return nil
	}
	name := ident
	if i := strings.Index(ident, "function:"); i >= 0 {
		name = ident[i+len("function:"):]
	}
	name, _, _ = strings.Cut(name, ":")
	return fns[name]
}

// Close stops the processes of the handler functions, and those serving
// an invoke once it ends; functions are not added after it.
func (l *Local) Close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.closed = true
	fns := *l.fns.Load()
	l.mu.Unlock()
	for _, f := range fns {
		f.close()
	}
	l.groups.Load().close()
}

// arn is a local function's ARN.
func (l *Local) arn(name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", l.region, l.account, name)
}

// Invoke runs the function for an Invoke request.
func (f *Function) Invoke(ctx context.Context, in *lambda.InvokeInput) (*lambda.InvokeOutput, error) {
	out := &lambda.InvokeOutput{ExecutedVersion: aws.String("$LATEST"), StatusCode: 200}
	requestID := uuid.NewString()
	awsmiddleware.SetRequestIDMetadata(&out.ResultMetadata, requestID)
	payload := in.Payload
	if len(bytes.TrimSpace(payload)) == 0 {
		payload = []byte("{}")
	}
	switch in.InvocationType {
	case types.InvocationTypeDryRun:
		out.StatusCode = 204
		return out, nil
	case types.InvocationTypeEvent:
		// Accepted, and run on its own: nobody waits for its result.
		out.StatusCode = 202
		go func() {
			if f.Handler != nil {
				_, _, _, _ = f.runHandler(context.WithoutCancel(ctx), payload, requestID, clientContext(in))
				return
			}
			_, _, _, _ = f.run(context.WithoutCancel(ctx), payload)
		}()
		return out, nil
	}
	if f.Handler != nil {
		return f.invokeHandler(ctx, in, out, payload, requestID)
	}
	stdout, size, stderr, err := f.run(ctx, payload)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if in.LogType == types.LogTypeTail {
		out.LogResult = aws.String(base64.StdEncoding.EncodeToString(stderr))
	}
	var exitErr *exec.ExitError
	if rc, ok := f.returnCode(err); ok && size <= int64(f.local.limit) && size <= maxResponse {
		out.Payload = rcPayload(rc, stdout)
		return out, nil
	}
	if err != nil {
		f.local.log.WarnContext(ctx, "local function failed", "function", f.Name, "error", err, "stderr", string(stderr))
	}
	switch {
	case errors.As(err, &exitErr):
		out.FunctionError = aws.String("Unhandled")
		out.Payload = exitPayload(stdout, stderr, exitErr)
	case err != nil:
		return nil, fmt.Errorf("local function %s: %w", f.Name, err)
	case size > maxResponse:
		out.FunctionError = aws.String("Unhandled")
		out.Payload = tooLarge()
	case !jsonvalue.Valid(stdout) && len(stdout) <= f.local.limit:
		out.FunctionError = aws.String("Unhandled")
		out.Payload = errorPayload("Runtime.MarshalError", "the function's output is not JSON: "+snippet(stdout))
	default:
		out.Payload = stdout
	}
	return out, nil
}

// invokeHandler answers an invoke with the function's handler.
func (f *Function) invokeHandler(ctx context.Context, in *lambda.InvokeInput, out *lambda.InvokeOutput, payload []byte, requestID string) (*lambda.InvokeOutput, error) {
	result, fnErr, stderr, err := f.runHandler(ctx, payload, requestID, clientContext(in))
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && !errors.Is(err, errTimedOut) {
		return nil, err
	}
	if in.LogType == types.LogTypeTail {
		out.LogResult = aws.String(base64.StdEncoding.EncodeToString(stderr))
	}
	if fnErr {
		f.local.log.WarnContext(ctx, "local function failed", "function", f.Name, "error", string(result), "stderr", string(stderr))
		out.FunctionError = aws.String("Unhandled")
	}
	out.Payload = result
	return out, nil
}

// clientContext is an invoke's ClientContext, decoded from base64.
func clientContext(in *lambda.InvokeInput) string {
	s := aws.ToString(in.ClientContext)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return string(b)
	}
	return s
}

// run runs the command with payload on its standard input, returning its
// standard output (up to one byte over the limit) and its whole size,
// and the end of its standard error. Its standard output is read until
// it exits and for commandGrace more: a child it left running with the
// output open does not hold the invoke, and is killed with the rest of
// its process group.
func (f *Function) run(ctx context.Context, payload []byte) (stdout []byte, size int64, stderr []byte, err error) {
	select {
	case f.local.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, nil, ctx.Err()
	}
	type result struct {
		stdout, stderr []byte
		size           int64
		err            error
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-f.local.slots }()
		// Started, the command runs to its end, for DefaultTimeout at
		// most, even when ctx ends first: as on Lambda, an invoke already
		// sent is not stopped when its caller gives up; its result is
		// dropped. The server's shutdown kills its process group.
		d, stop := detached(ctx)
		defer stop()
		runCtx, cancel := context.WithTimeout(d, DefaultTimeout)
		defer cancel()
		var r result
		r.stdout, r.size, r.stderr, r.err = f.runCommand(runCtx, payload)
		done <- r
	}()
	select {
	case r := <-done:
		return r.stdout, r.size, r.stderr, r.err
	case <-ctx.Done():
		return nil, 0, nil, ctx.Err()
	}
}

// runCommand is run's invoke, with a slot taken.
func (f *Function) runCommand(ctx context.Context, payload []byte) (stdout []byte, size int64, stderr []byte, err error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", f.Command)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Env = append(f.local.baseEnviron(), "AWS_LAMBDA_FUNCTION_NAME="+f.Name,
		"AWS_REGION="+f.local.region, "AWS_DEFAULT_REGION="+f.local.region)
	if tc := traceOf(ctx); tc.parent != "" {
		cmd.Env = append(cmd.Env, "_X_AMZN_TRACE_ID="+tc.xray, "TRACEPARENT="+tc.parent)
	}
	// The command and whatever it starts are one process group, killed
	// together when the task ends first, or once the command exited.
	killAsGroup(cmd)
	cmd.WaitDelay = commandGrace
	out := &capped{limit: f.local.limit + 1}
	errTail := &tail{limit: logTail}
	cmd.Stdout, cmd.Stderr = out, errTail
	if err = f.local.startCmd(cmd); err == nil {
		rec := f.local.groups.Load()
		rec.add(cmd.Process.Pid)
		err = cmd.Wait()
		killGroup(cmd)
		rec.remove(cmd.Process.Pid)
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// It exited 0, a child of its kept the output open: what it
		// wrote before it exited is its answer.
		err = nil
	}
	return out.buf.Bytes(), out.n, errTail.bytes(), err
}

// commandGrace is how long a command's output is read after it exited.
const commandGrace = 250 * time.Millisecond

// exitPayload is the error payload of a command that exited non-zero: the
// error object it printed, or Runtime.ExitError.
func exitPayload(stdout, stderr []byte, exitErr *exec.ExitError) []byte {
	if v, err := jsonvalue.Parse(stdout); err == nil {
		if obj, ok := v.(*jsonvalue.Object); ok && obj.Has("errorType") {
			return stdout
		}
	}
	msg := fmt.Sprintf("Runtime exited with error: %s", exitErr.ProcessState)
	if s := strings.TrimSpace(string(stderr)); s != "" {
		msg += ": " + snippet([]byte(s))
	}
	return errorPayload("Runtime.ExitError", msg)
}

func errorPayload(errorType, message string) []byte {
	o := jsonvalue.NewObject(2)
	o.Set("errorType", errorType)
	o.Set("errorMessage", message)
	return jsonvalue.Marshal(o)
}

// snippet is the start of some output, for a message.
func snippet(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// capped keeps the first limit bytes written and discards the rest,
// counting them all.
type capped struct {
	buf   bytes.Buffer
	limit int
	n     int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if room := c.limit - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// tail keeps the last limit bytes written.
type tail struct {
	buf   []byte
	limit int
}

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) bytes() []byte { return t.buf }

var _ io.Writer = (*capped)(nil)

// runVar names, in a function's process, the run of the server that
// started it (Local.run): what a server that died left is told apart by
// it.
const runVar = "STEPWISE_FUNCTIONS_RUN"

// startCmd starts a function's process: it gets the run's token, last,
// so that no Environment of the function's takes it off.
func (l *Local) startCmd(cmd *exec.Cmd) error {
	cmd.Env = append(cmd.Env, runVar+"="+l.run)
	return startLocked(cmd)
}

// randomHex is n random bytes, in hexadecimal.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cutCodes reads the rc:CODES: prefix of a function's command line:
// the codes (nil without the prefix) and the command.
func cutCodes(cmd string) (warnrule.Codes, string, error) {
	rest, ok := strings.CutPrefix(cmd, "rc:")
	if !ok {
		return nil, cmd, nil
	}
	spec, command, ok := strings.Cut(rest, ":")
	if !ok || strings.TrimSpace(command) == "" {
		return nil, "", fmt.Errorf("%q has no command: write rc:CODES:COMMAND, such as rc:1-8:./job.sh", cmd)
	}
	codes, err := warnrule.ParseCodes(spec)
	if err != nil {
		return nil, "", fmt.Errorf("rc:%s: %w", spec, err)
	}
	return codes, command, nil
}

// returnCode is the exit code of a run of a function given rc:CODES:
// when it is 0 or one of the codes.
func (f *Function) returnCode(err error) (int, bool) {
	if f.Codes == nil {
		return 0, false
	}
	if err == nil {
		return 0, true
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() > 0 && f.Codes.Contain(int64(exitErr.ExitCode())) {
		return exitErr.ExitCode(), true
	}
	return 0, false
}

// rcPayload is the result of a function given rc:CODES: its return code,
// and what it printed: as "output" when that is JSON, as "stdout" text
// otherwise.
func rcPayload(rc int, stdout []byte) []byte {
	o := jsonvalue.NewObject(2)
	o.Set("rc", jsonvalue.Number(strconv.Itoa(rc)))
	if v, err := jsonvalue.Parse(stdout); err == nil && len(bytes.TrimSpace(stdout)) > 0 {
		o.Set("output", v)
	} else {
		o.Set("stdout", strings.ToValidUTF8(string(stdout), "\uFFFD"))
	}
	return []byte(jsonvalue.String(o))
}
