package lambda

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"stepwise/jsonvalue"
)

// Provided runtimes
//
// A function of a provided runtime (provided, provided.al2,
// provided.al2023: "--function NAME=provided:DIR:HANDLER") runs DIR/bootstrap
// as Lambda does: with AWS_LAMBDA_RUNTIME_API naming a Lambda Runtime API
// that Stepwise serves on loopback, one per process, and Lambda's
// variables (_HANDLER, AWS_LAMBDA_FUNCTION_NAME, ..._VERSION,
// ..._MEMORY_SIZE, LAMBDA_TASK_ROOT, AWS_REGION) with the function's own.
// The bootstrap asks for an invocation (GET
// /2018-06-01/runtime/invocation/next, which waits for one; its first call
// ends the init), answers it (POST .../invocation/{id}/response, 202) or
// fails it (POST .../invocation/{id}/error, {errorType, errorMessage,
// stackTrace}, the type also read from the
// Lambda-Runtime-Function-Error-Type header), or fails its init (POST
// /2018-06-01/runtime/init/error): the invoke fails with that payload,
// named after its errorType, and the process is stopped. A response
// larger than Lambda's 6 MB is refused (413) and the invoke fails with
// Function.ResponseSizeTooLarge. A call whose Host is not the address it
// listens on (127.0.0.1, localhost or [::1] and its port) is refused
// (403): a web page that found the port does not get events or answer
// them. Warm processes, timeouts and exits are those of every handler
// (process.go).

// maxResponse is Lambda's limit on a synchronous invoke's response.
const maxResponse = 6291556

// tooLargeMessage is Lambda's error message for a larger response.
var tooLargeMessage = fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", maxResponse)

// tooLarge is the error payload of a response larger than Lambda takes:
// Function.ResponseSizeTooLarge. Whatever the runtime, the answer is
// read no further than that.
func tooLarge() []byte { return errorPayload("Function.ResponseSizeTooLarge", tooLargeMessage) }

// checkBootstrap names what is wrong with a provided runtime's bootstrap.
func checkBootstrap(dir string) error {
	path := filepath.Join(dir, "bootstrap")
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("a provided runtime runs the executable file bootstrap at the top of the function's code: %w", err)
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not an executable file (chmod +x it)", path)
	}
	return nil
}

// apiTalk is the Runtime API of one bootstrap process.
type apiTalk struct {
	srv    *http.Server
	ln     net.Listener
	limit  int
	closed chan struct{}
	once   sync.Once

	// next hands an invocation to the bootstrap's call for one.
	next chan *apiInvocation
	// asked is closed at the bootstrap's first call for an invocation:
	// its init is over.
	asked     chan struct{}
	askedOnce sync.Once
	// initFailed gets the payload of an init error.
	initFailed chan []byte

	mu      sync.Mutex
	current *apiInvocation // the invocation the bootstrap works on
}

// apiInvocation is an invocation handed to the bootstrap.
type apiInvocation struct {
	*invocation
	answer chan apiAnswer // one answer, buffered
}

type apiAnswer struct {
	out   []byte
	fnErr bool
}

// startBootstrap serves a Runtime API and starts the function's
// bootstrap in dir against it.
func (f *Function) startBootstrap(ctx context.Context, dir string) (*warm, error) {
	if err := checkBootstrap(dir); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the runtime API: %w", err)
	}
	t := &apiTalk{ln: ln, limit: maxResponse, closed: make(chan struct{}), next: make(chan *apiInvocation),
		asked: make(chan struct{}), initFailed: make(chan []byte, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", t.serveNext)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", t.serveResponse)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", t.serveError)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", t.serveInitError)
	t.srv = &http.Server{Handler: loopbackOnly(ln.Addr().(*net.TCPAddr).Port, mux), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = t.srv.Serve(ln) }()

	cmd := exec.CommandContext(ctx, filepath.Join(dir, "bootstrap"))
	cmd.Dir = dir
	cmd.Env = append(f.env(dir), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String())
	p, err := startProcess(cmd, t, f.local)
	if err != nil {
		t.close()
		return nil, err
	}
	return p, nil
}

// loopbackOnly serves only calls whose Host is the loopback address on
// port (127.0.0.1, localhost or [::1]); others get 403. A web page a
// browser loads may reach the port under a name of its own that resolves
// to loopback (DNS rebinding): it names its own host.
func loopbackOnly(port int, h http.Handler) http.Handler {
	p := strconv.Itoa(port)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch strings.ToLower(r.Host) {
		case "127.0.0.1:" + p, "localhost:" + p, "[::1]:" + p:
			h.ServeHTTP(w, r)
		default:
			apiError(w, http.StatusForbidden, "AccessDenied", "the Runtime API answers only calls to "+net.JoinHostPort("127.0.0.1", p))
		}
	})
}

// init waits for the bootstrap's first call for an invocation, or its
// init error.
func (t *apiTalk) init(ctx context.Context, p *warm, limit time.Duration) ([]byte, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-t.asked:
		return nil, nil
	case failed := <-t.initFailed:
		return failed, nil
	case <-p.done:
		// A bootstrap exits once it posted its init error.
		select {
		case failed := <-t.initFailed:
			return failed, nil
		default:
			return nil, errGone
		}
	case <-timer.C:
		p.stop()
		return nil, errTimedOut
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
}

// invoke hands the invocation to the bootstrap and waits for its answer.
func (t *apiTalk) invoke(ctx context.Context, p *warm, inv *invocation, limit time.Duration) ([]byte, bool, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	ai := &apiInvocation{invocation: inv, answer: make(chan apiAnswer, 1)}
	t.mu.Lock()
	t.current = ai
	t.mu.Unlock()
	for handed := false; ; {
		next := t.next
		if handed {
			next = nil
		}
		select {
		case next <- ai:
			handed = true
		case a := <-ai.answer:
			return a.out, a.fnErr, nil
		case <-p.done:
			// A bootstrap may exit once it answered.
			select {
			case a := <-ai.answer:
				return a.out, a.fnErr, nil
			default:
				return nil, false, errGone
			}
		case <-timer.C:
			p.stop()
			return nil, false, errTimedOut
		case <-ctx.Done():
			p.stop()
			return nil, false, ctx.Err()
		}
	}
}

func (t *apiTalk) close() {
	t.once.Do(func() {
		close(t.closed)
		_ = t.srv.Close()
	})
}

// serveNext answers the bootstrap's call for an invocation once there is
// one.
func (t *apiTalk) serveNext(w http.ResponseWriter, r *http.Request) {
	t.askedOnce.Do(func() { close(t.asked) })
	select {
	case inv := <-t.next:
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Lambda-Runtime-Aws-Request-Id", inv.requestID)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", inv.functionArn)
		if inv.trace.xray != "" {
			h.Set("Lambda-Runtime-Trace-Id", inv.trace.xray)
			h.Set("Traceparent", inv.trace.parent)
		} else {
			h.Set("Lambda-Runtime-Trace-Id", traceID(inv.requestID))
		}
		if inv.clientContext != "" {
			h.Set("Lambda-Runtime-Client-Context", inv.clientContext)
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(inv.event)
	case <-r.Context().Done():
	case <-t.closed:
		apiError(w, http.StatusInternalServerError, "Runtime.Stopped", "the function's process is being stopped")
	}
}

// traceID is an X-Ray trace header for a request.
func traceID(requestID string) string {
	hex := make([]byte, 0, 24)
	for i := 0; i < len(requestID) && len(hex) < 24; i++ {
		if c := requestID[i]; c != '-' {
			hex = append(hex, c)
		}
	}
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", time.Now().Unix(), hex, string(hex[:min(16, len(hex))]))
}

// answering returns the invocation the request id names, taking it off
// (nil when it is not the one the bootstrap works on: the call is then
// refused).
func (t *apiTalk) answering(w http.ResponseWriter, r *http.Request) *apiInvocation {
	id := r.PathValue("id")
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.current == nil || t.current.requestID != id {
		apiError(w, http.StatusBadRequest, "InvalidRequestID", fmt.Sprintf("Invalid request ID: %q is not the invocation in progress", id))
		return nil
	}
	inv := t.current
	t.current = nil
	return inv
}

func (t *apiTalk) serveResponse(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(t.limit)+1))
	if err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequest", err.Error())
		return
	}
	inv := t.answering(w, r)
	if inv == nil {
		return
	}
	if len(body) > t.limit {
		apiError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", tooLargeMessage)
		inv.answer <- apiAnswer{out: tooLarge(), fnErr: true}
		return
	}
	accepted(w)
	inv.answer <- apiAnswer{out: body}
}

func (t *apiTalk) serveError(w http.ResponseWriter, r *http.Request) {
	body := readError(r, t.limit)
	inv := t.answering(w, r)
	if inv == nil {
		return
	}
	accepted(w)
	inv.answer <- apiAnswer{out: body, fnErr: true}
}

func (t *apiTalk) serveInitError(w http.ResponseWriter, r *http.Request) {
	body := readError(r, t.limit)
	select {
	case <-t.asked:
		apiError(w, http.StatusForbidden, "InvalidStateTransition", "the runtime's init is over")
		return
	default:
	}
	accepted(w)
	select {
	case t.initFailed <- body:
	default:
	}
}

// readError is the error payload a runtime posts: its JSON object, with
// the type of the Lambda-Runtime-Function-Error-Type header when it has
// none; a body that is no JSON object is the message.
func readError(r *http.Request, limit int) []byte {
	body, _ := io.ReadAll(io.LimitReader(r.Body, int64(limit)))
	headerType := r.Header.Get("Lambda-Runtime-Function-Error-Type")
	if v, err := jsonvalue.Parse(body); err == nil {
		if obj, ok := v.(*jsonvalue.Object); ok {
			if t, _ := obj.Get("errorType"); (t == nil || t == "") && headerType != "" {
				obj.Set("errorType", headerType)
				return jsonvalue.Marshal(obj)
			}
			return body
		}
	}
	if headerType == "" {
		headerType = "Runtime.Unknown"
	}
	return errorPayload(headerType, string(body))
}

func accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, `{"status":"OK"}`)
}

// apiError answers a call the Runtime API refuses.
func apiError(w http.ResponseWriter, status int, errorType, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"errorType": errorType, "errorMessage": message})
}
