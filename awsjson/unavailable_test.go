package awsjson_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/server"
	"stepwise/server/servertest"
	"stepwise/store"
	"stepwise/store/sqlitestore"
)

// brokenDisk is a store whose writes fail as a full disk or a read-only
// file makes SQLite fail, once broken is set.
type brokenDisk struct {
	store.Driver
	broken *atomic.Bool
}

type brokenTx struct {
	store.ExecutorTx
	broken *atomic.Bool
}

func (d brokenDisk) Begin(ctx context.Context) (store.ExecutorTx, error) {
	if d.broken.Load() {
		return nil, fmt.Errorf("begin: database or disk is full (13): %w", store.ErrUnavailable)
	}
	tx, err := d.Driver.Begin(ctx)
	return brokenTx{tx, d.broken}, err
}

func (d brokenDisk) Executor() store.Executor { return brokenExec{d.Driver.Executor(), d.broken} }

type brokenExec struct {
	store.Executor
	broken *atomic.Bool
}

func (e brokenExec) StateMachineInsert(ctx context.Context, p *store.StateMachineInsertParams) (*store.StateMachine, error) {
	if e.broken.Load() {
		return nil, fmt.Errorf("insert state machine: attempt to write a readonly database (8): %w", store.ErrUnavailable)
	}
	return e.Executor.StateMachineInsert(ctx, p)
}

// TestStoreUnavailable checks that a store that cannot be written gives a
// clear ServiceUnavailable at the API, and that the server goes on working
// once the store can be written again.
func TestStoreUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	real, err := sqlitestore.Open(ctx, t.TempDir()+"/s.db", sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { real.Close() })
	broken := &atomic.Bool{}
	srv := servertest.New(t, servertest.WithConfig(func(c *config.Serve) { c.WaitTimeScale = 0 }),
		servertest.WithOptions(server.WithStore(brokenDisk{real, broken})))

	call := func(op, body string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	def := `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`
	create := fmt.Sprintf(`{"name": "sm", "roleArn": "arn:aws:iam::123456789012:role/r", "definition": %q}`, def)
	status, body := call("CreateStateMachine", create)
	require.Equal(t, http.StatusOK, status, body)

	broken.Store(true)
	start := `{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:sm", "name": "e1"}`
	status, body = call("StartExecution", start)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "ServiceUnavailable")
	require.Contains(t, body, "The store is unavailable")
	status, body = call("CreateStateMachine", strings.Replace(create, `"sm"`, `"sm2"`, 1))
	require.Equal(t, http.StatusServiceUnavailable, status, body)

	// Nothing was half-written: once the store works again, the same
	// request succeeds and the execution runs.
	broken.Store(false)
	status, body = call("StartExecution", start)
	require.Equal(t, http.StatusOK, status, body)
	status, body = call("DescribeExecution", `{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:sm:e1"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"status":"SUCCEEDED"`)
}
