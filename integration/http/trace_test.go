package http_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	httptask "stepwise/integration/http"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// A traced HTTP Task sends its span's traceparent (W3C Trace Context),
// unless its Headers name one; an untraced one sends none.
func TestTraceParentSent(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	b := setup(t, "")
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	call := func(params, traceparent string) {
		p, err := jsonvalue.ParseString(params)
		require.NoError(t, err)
		ch := make(chan task.Result, 1)
		b.reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "t1", TraceParent: traceparent,
			Request: &interp.TaskRequest{Resource: httptask.Resource, Parameters: p}}, func(r task.Result) { ch <- r })
		select {
		case r := <-ch:
			require.Nil(t, r.Failure, "%+v", r.Failure)
		case <-time.After(30 * time.Second):
			t.Fatal("no result")
		}
	}
	call(params(srv.URL, "GET", ""), tp)
	require.Equal(t, tp, (<-reqs).header.Get("Traceparent"))
	call(params(srv.URL, "GET", `"Headers": {"traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}`), tp)
	require.Equal(t, "00-11111111111111111111111111111111-2222222222222222-01", (<-reqs).header.Get("Traceparent"))
	call(params(srv.URL, "GET", ""), "")
	require.Empty(t, (<-reqs).header.Values("Traceparent"))
}
