package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/console"
	"stepwise/server/servertest"
	"stepwise/service"
)

var durationRE = regexp.MustCompile(`<dt>Duration</dt><dd>([^<]*)</dd>`)

// TestRunningDurationNeverNegative: under a scaled clock (execution time
// runs a thousand times as fast, so a start date lies ahead of real time)
// a running execution's duration is measured to the execution time the
// console is given, and is never negative when measured to a clock behind
// it (real time).
func TestRunningDurationNeverNegative(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := servertest.New(t, servertest.WithConfig(func(c *config.Serve) { c.WaitTimeScale = 0.001 }))
	svc := st.Service()
	page := func(con *console.Console, arn string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		con.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/executions/"+arn, nil))
		require.Equal(t, http.StatusOK, rec.Code)
		return rec.Body.String()
	}
	duration := func(page string) time.Duration {
		t.Helper()
		m := durationRE.FindStringSubmatch(page)
		require.NotNil(t, m, "no duration on the page")
		d, err := time.ParseDuration(m[1])
		require.NoError(t, err)
		return d
	}

	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: "waits", RoleArn: "arn:aws:iam::123456789012:role/r",
		Definition: `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 86400, "End": true}}}`})
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // execution time runs 100 s ahead of real time
	name := "running"
	x, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: &name})
	require.NoError(t, err)

	realTime, err := console.NewWith(svc, console.Options{})
	require.NoError(t, err)
	require.Equal(t, time.Duration(0), duration(page(realTime, x.ExecutionArn)), "a start date ahead of real time")

	time.Sleep(10 * time.Millisecond) // 10 s of execution time
	executionTime, err := console.NewWith(svc, console.Options{Now: st.Engine().Now})
	require.NoError(t, err)
	require.GreaterOrEqual(t, duration(page(executionTime, x.ExecutionArn)), 10*time.Second)
}
