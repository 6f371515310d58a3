package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
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
		d, err := time.ParseDuration(strings.ReplaceAll(m[1], " ", ""))
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

// Every duration is written one way per language: seconds with two
// decimals under 10 s, one under a minute, then minutes and seconds.
func TestDurationsOneWayPerLanguage(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration][2]string{
		-time.Second:                                {"0.000s", "0.000秒"},
		4 * time.Millisecond:                        {"0.004s", "0.004秒"},
		437 * time.Millisecond:                      {"0.437s", "0.437秒"},
		2700 * time.Millisecond:                     {"2.70s", "2.70秒"},
		49437 * time.Millisecond:                    {"49.4s", "49.4秒"},
		109437 * time.Millisecond:                   {"1m 49s", "1分49秒"},
		2*time.Hour + 3*time.Minute + 4:             {"2h 3m 0s", "2時間3分0秒"},
		2*time.Hour + 3*time.Minute + 4*time.Second: {"2h 3m 4s", "2時間3分4秒"},
	} {
		require.Equal(t, want[0], console.FormatDuration("en", d), d)
		require.Equal(t, want[1], console.FormatDuration("ja", d), d)
	}
}

// A zone is named by its offset from UTC, as the page's script names it.
func TestZoneLabels(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	for zone, want := range map[string]string{"UTC": "UTC", "Asia/Tokyo": "UTC+9", "Asia/Kolkata": "UTC+5:30",
		"America/New_York": "UTC-4", "Europe/London": "UTC+1"} {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		require.Equal(t, want, console.ZoneLabel(at.In(loc)), zone)
	}
}
