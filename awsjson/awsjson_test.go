package awsjson_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
	"stepwise/engine/start"
	"stepwise/service"
	"stepwise/service/servicetest"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

const (
	passDefinition = `{"Comment": "BASE_PASS_RESULT", "StartAt": "State_1", "States": {"State_1": {"Type": "Pass", "Result": {"Arg1": "argument1"}, "End": true}}}`
	roleArn        = "arn:aws:iam::123456789012:role/StepwiseRole"
)

type testBundle struct {
	ctx     context.Context
	svc     *service.Service
	drv     store.Driver
	engine  *servicetest.Engine
	handler http.Handler
	logs    *bytes.Buffer
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, sqlitestore.Memory, sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { drv.Close() })
	eng := servicetest.StoreEngine(drv, nil)
	svc, err := service.New(drv, eng, service.Config{})
	require.NoError(t, err)
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return &testBundle{ctx: ctx, svc: svc, drv: drv, engine: eng, handler: awsjson.New(svc, logger), logs: &logs.Buffer}
}

// response is what the handler answered.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) errorType(t *testing.T) (string, string) {
	t.Helper()
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(r.body, &e), string(r.body))
	return e.Type, e.Message
}

// do sends a raw request to the handler.
func (b *testBundle) do(t *testing.T, req *http.Request) *response {
	t.Helper()
	rec := httptest.NewRecorder()
	b.handler.ServeHTTP(rec, req)
	res := rec.Result()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return &response{status: res.StatusCode, header: res.Header, body: body}
}

func newRequest(target string, body []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	return req
}

// call sends an operation with a JSON body.
func (b *testBundle) call(t *testing.T, op string, in any) *response {
	t.Helper()
	body, err := json.Marshal(in)
	require.NoError(t, err)
	return b.do(t, newRequest(awsjson.TargetPrefix+op, body))
}

func (b *testBundle) mustCall(t *testing.T, op string, in any) map[string]any {
	t.Helper()
	res := b.call(t, op, in)
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	var out map[string]any
	require.NoError(t, json.Unmarshal(res.body, &out))
	return out
}

func TestHandlerHappyPath(t *testing.T) {
	t.Parallel()
	b := setup(t)

	res := b.call(t, "CreateStateMachine", map[string]any{"name": "sm", "definition": passDefinition, "roleArn": roleArn})
	require.Equal(t, http.StatusOK, res.status, string(res.body))
	require.Equal(t, "application/x-amz-json-1.0", res.header.Get("Content-Type"))
	require.NotEmpty(t, res.header.Get("x-amzn-RequestId"))
	var created struct {
		StateMachineArn string `json:"stateMachineArn"`
		CreationDate    any    `json:"creationDate"`
	}
	require.NoError(t, json.Unmarshal(res.body, &created))
	require.IsType(t, float64(0), created.CreationDate, "timestamps are JSON numbers")

	d := b.mustCall(t, "DescribeStateMachine", map[string]any{"stateMachineArn": created.StateMachineArn})
	require.Equal(t, passDefinition, d["definition"])

	// Definitions come back as sent, HTML characters included.
	def := strings.Replace(passDefinition, "argument1", "<a & b>", 1)
	b.mustCall(t, "UpdateStateMachine", map[string]any{"stateMachineArn": created.StateMachineArn, "definition": def})
	res = b.call(t, "DescribeStateMachine", map[string]any{"stateMachineArn": created.StateMachineArn})
	require.Contains(t, string(res.body), `<a & b>`)

	// The Host header is not looked at (SDKs send sync- prefixed hosts).
	req := newRequest(awsjson.TargetPrefix+"ListStateMachines", []byte(`{}`))
	req.Host = "sync-127.0.0.1:8083"
	res = b.do(t, req)
	require.Equal(t, http.StatusOK, res.status)
	require.Contains(t, string(res.body), `"stateMachines":[{`)

	// JSON 1.1, no content type and an empty body are all accepted.
	req = newRequest(awsjson.TargetPrefix+"ListStateMachines", nil)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	require.Equal(t, http.StatusOK, b.do(t, req).status)
	req = newRequest(awsjson.TargetPrefix+"ListStateMachines", nil)
	req.Header.Del("Content-Type")
	require.Equal(t, http.StatusOK, b.do(t, req).status)

	// Unknown members are ignored, as AWS does.
	res = b.call(t, "ListStateMachines", map[string]any{"somethingNew": true})
	require.Equal(t, http.StatusOK, res.status)
}

func TestHandlerErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)

	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	for _, tt := range []struct {
		name   string
		req    func() *http.Request
		status int
		typ    string
		msg    string
	}{
		{"APIError", func() *http.Request {
			return newRequest("AWSStepFunctions.DescribeStateMachine", []byte(`{"stateMachineArn": "not_a_valid_arn"}`))
		}, 400, "com.amazonaws.swf.service.v2.model#InvalidArn", "Invalid Arn: 'Invalid ARN prefix: not_a_valid_arn'"},
		{"Path", func() *http.Request {
			req := newRequest("AWSStepFunctions.ListStateMachines", []byte(`{}`))
			req.URL.Path = "/other"
			return req
		}, 404, "com.amazon.coral.service#UnknownOperationException", ""},
		{"Method", func() *http.Request {
			return httptest.NewRequest(http.MethodGet, "/", nil)
		}, 405, "com.amazon.coral.service#UnknownOperationException", ""},
		{"MissingTarget", func() *http.Request { return newRequest("", []byte(`{}`)) },
			400, "com.amazon.coral.service#UnknownOperationException", ""},
		{"OtherService", func() *http.Request { return newRequest("DynamoDB_20120810.ListTables", []byte(`{}`)) },
			400, "com.amazon.coral.service#UnknownOperationException", "Unknown operation DynamoDB_20120810.ListTables"},
		{"UnknownOperation", func() *http.Request { return newRequest("AWSStepFunctions.DoMagic", []byte(`{}`)) },
			400, "com.amazon.coral.service#UnknownOperationException", ""},
		{"ContentType", func() *http.Request {
			req := newRequest("AWSStepFunctions.ListStateMachines", []byte(`{}`))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return req
		}, 400, "com.amazon.coral.service#UnknownOperationException", ""},
		{"InvalidJSON", func() *http.Request {
			return newRequest("AWSStepFunctions.ListStateMachines", []byte(`{"maxResults": `))
		},
			400, "com.amazon.coral.service#SerializationException", ""},
		{"NotAnObject", func() *http.Request { return newRequest("AWSStepFunctions.ListStateMachines", []byte(`[1]`)) },
			400, "com.amazon.coral.service#SerializationException", ""},
		{"WrongType", func() *http.Request {
			return newRequest("AWSStepFunctions.ListStateMachines", []byte(`{"maxResults": "10"}`))
		}, 400, "com.amazon.coral.service#SerializationException", "STRING_VALUE can not be converted to an Integer (member maxResults)"},
		{"StructureForString", func() *http.Request {
			return newRequest("AWSStepFunctions.DescribeStateMachine", []byte(`{"stateMachineArn": {}}`))
		}, 400, "com.amazon.coral.service#SerializationException", "Start of structure or map found where not expected. (member stateMachineArn)"},
		{"InvalidUTF8", func() *http.Request {
			return newRequest("AWSStepFunctions.DescribeStateMachine", []byte("{\"stateMachineArn\": \"\xff\"}"))
		}, 400, "com.amazon.coral.service#SerializationException", ""},
		{"Deep", func() *http.Request {
			return newRequest("AWSStepFunctions.ListStateMachines", []byte(`{"x": `+deep+`}`))
		}, 400, "com.amazon.coral.service#SerializationException", "The request body is nested too deeply (more than 32 levels)"},
		{"TooLarge", func() *http.Request {
			body := `{"definition": "` + strings.Repeat("x", awsjson.MaxBodySize) + `"}`
			return newRequest("AWSStepFunctions.ValidateStateMachineDefinition", []byte(body))
		}, 413, "com.amazonaws.swf.service.v2.model#RequestEntityTooLargeException", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := b.do(t, tt.req())
			require.Equal(t, tt.status, res.status, string(res.body))
			require.NotEmpty(t, res.header.Get("x-amzn-RequestId"))
			typ, msg := res.errorType(t)
			require.Equal(t, tt.typ, typ)
			if tt.msg != "" {
				require.Equal(t, tt.msg, msg)
			}
		})
	}
}

// endlessReader is a body that never ends.
type endlessReader struct{ n int }

func (r *endlessReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	r.n += len(p)
	return len(p), nil
}

func TestHandlerDoesNotReadHugeBodies(t *testing.T) {
	t.Parallel()
	b := setup(t)

	// A declared length over the limit is refused without reading.
	body := &endlessReader{}
	req := httptest.NewRequest(http.MethodPost, "/", body)
	req.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	req.ContentLength = 10 << 30
	res := b.do(t, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	require.Zero(t, body.n)

	// An undeclared one is read only up to the limit.
	body = &endlessReader{}
	req = httptest.NewRequest(http.MethodPost, "/", body)
	req.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	req.ContentLength = -1
	res = b.do(t, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	require.Less(t, body.n, 2*awsjson.MaxBodySize)
}

func TestHandlerRecoversPanics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.engine.StartExecutionFunc = func(context.Context, *start.Params) (*store.Execution, error) {
		panic("engine exploded")
	}
	b.mustCall(t, "CreateStateMachine", map[string]any{"name": "sm", "definition": passDefinition, "roleArn": roleArn})
	res := b.call(t, "StartExecution", map[string]any{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:sm"})
	require.Equal(t, http.StatusInternalServerError, res.status)
	typ, msg := res.errorType(t)
	require.Equal(t, "com.amazon.coral.service#InternalFailure", typ)
	require.Contains(t, msg, res.header.Get("x-amzn-RequestId"))
	require.Contains(t, b.logs.String(), "engine exploded")

	// Errors that are not API errors are internal failures too, and do not
	// leak their text.
	b.engine.StartExecutionFunc = func(context.Context, *start.Params) (*store.Execution, error) {
		return nil, fmt.Errorf("secret detail")
	}
	res = b.call(t, "StartExecution", map[string]any{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:sm"})
	require.Equal(t, http.StatusInternalServerError, res.status)
	require.NotContains(t, string(res.body), "secret detail")
	require.Contains(t, b.logs.String(), "secret detail")
}

func TestHandlerConcurrentRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.mustCall(t, "CreateStateMachine", map[string]any{"name": "sm", "definition": passDefinition, "roleArn": roleArn})
	var wg sync.WaitGroup
	errs := make(chan string, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := httptest.NewRecorder()
			body := fmt.Sprintf(`{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:sm", "name": "x%d"}`, i)
			b.handler.ServeHTTP(rec, newRequest("AWSStepFunctions.StartExecution", []byte(body)))
			if rec.Code != http.StatusOK {
				errs <- rec.Body.String()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		require.Fail(t, e)
	}
	out := b.mustCall(t, "ListExecutions", map[string]any{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:sm", "maxResults": 1000})
	require.Len(t, out["executions"], 50)
}

// Refuse answers in the API's error shape, with a request id, before
// any operation runs (the server's cross-origin guard calls it).
func TestRefuse(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	awsjson.Refuse(rec, newRequest("AWSStepFunctions.CreateStateMachine", []byte(`{}`)), http.StatusForbidden, "AccessDeniedException", "Cross-origin requests are refused")
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.NotEmpty(t, rec.Header().Get("x-amzn-RequestId"))
	require.JSONEq(t, `{"__type": "com.amazon.coral.service#AccessDeniedException", "message": "Cross-origin requests are refused"}`, rec.Body.String())
}

// Operations names every operation the handler serves.
func TestOperations(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ops := awsjson.Operations()
	require.Contains(t, ops, "CreateStateMachine")
	require.True(t, slices.IsSorted(ops))
	for _, op := range ops {
		require.NotContains(t, string(b.call(t, op, map[string]any{}).body), "UnknownOperation", op)
	}
	require.Contains(t, string(b.call(t, "NoSuchOperation", map[string]any{}).body), "UnknownOperation")
}
