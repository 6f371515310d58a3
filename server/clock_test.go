package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/engine"
)

// clockBundle is a server whose clock skips (serve --time-skip), its
// schedules fired, with a state machine "nightly" (a Pass) and a schedule
// "nightly" starting it at 02:00 UTC every night.
type clockBundle struct {
	parts *apiParts
	api   *Server
}

func setupClock(t *testing.T) *clockBundle {
	t.Helper()
	p := newClockParts(t, engine.Config{TimeSkip: true})
	b := &clockBundle{parts: p, api: p.api(t, false, nil)}
	b.machine(t, "nightly", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
	rec := b.serve(http.MethodPost, "/schedules/nightly", fmt.Sprintf(`{"ScheduleExpression": "cron(0 2 * * ? *)",
		"FlexibleTimeWindow": {"Mode": "OFF"}, "Target": {"Arn": %q, "RoleArn": "arn:aws:iam::123456789012:role/r"}}`, b.smArn("nightly")))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return b
}

// newClockParts are apiParts whose server runs time as cfg says.
func newClockParts(t *testing.T, cfg engine.Config) *apiParts {
	t.Helper()
	p := newAPIParts(t)
	p.cfg.AllowedHosts = []string{"example.com"} // httptest.NewRequest's host
	p.cfg.TimeSkip, p.cfg.WaitTimeScale = cfg.TimeSkip, cfg.WaitTimeScale
	if cfg.TimeSkip {
		p.cfg.WaitTimeScale = config.DefaultWaitTimeScale // which time-skip replaces
	}
	return p
}

func (b *clockBundle) smArn(name string) string {
	return fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", b.parts.cfg.Region, b.parts.cfg.Account, name)
}

func (b *clockBundle) serve(method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	b.api.Handler().ServeHTTP(rec, req)
	return rec
}

// call calls the Step Functions API.
func (b *clockBundle) call(t *testing.T, op, body string) map[string]any {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	rec := httptest.NewRecorder()
	b.api.self.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, "%s: %s", op, rec.Body.String())
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out
}

func (b *clockBundle) machine(t *testing.T, name, def string) {
	t.Helper()
	b.call(t, "CreateStateMachine", fmt.Sprintf(`{"name": %q, "roleArn": "arn:aws:iam::123456789012:role/r", "definition": %q}`, name, def))
}

// night is an execution a slot started: its slot (from its name) and its
// start date.
type night struct{ slot, started time.Time }

func (n night) String() string {
	return n.slot.Format(time.RFC3339) + " started at " + n.started.Format(time.RFC3339Nano)
}

// nights are the executions of the schedule "nightly", in the order of
// their slots.
func (b *clockBundle) nights(t *testing.T) []night {
	t.Helper()
	out := b.call(t, "ListExecutions", fmt.Sprintf(`{"stateMachineArn": %q, "maxResults": 1000}`, b.smArn("nightly")))
	var ns []night
	for _, x := range out["executions"].([]any) {
		x := x.(map[string]any)
		slot, err := time.Parse("nightly-20060102T150405", x["name"].(string))
		require.NoError(t, err)
		sec := x["startDate"].(float64)
		ns = append(ns, night{slot: slot, started: time.UnixMilli(int64(sec * 1000)).UTC()})
	}
	slices.SortFunc(ns, func(a, b night) int { return a.slot.Compare(b.slot) })
	return ns
}

// requireAtSlots checks that each night's execution started at its slot
// (within the real time its firing took).
func requireAtSlots(t *testing.T, ns []night) {
	t.Helper()
	for i, n := range ns {
		require.Equal(t, 2, n.slot.Hour(), "night %d: %v", i, n.slot)
		require.False(t, n.started.Before(n.slot), "night %d started at %v, before its slot %v", i, n.started, n.slot)
		require.Less(t, n.started.Sub(n.slot), time.Second, "night %d started at %v, its slot %v", i, n.started, n.slot)
		if i > 0 {
			require.Equal(t, 24*time.Hour, n.slot.Sub(ns[i-1].slot), "nights %v", ns)
		}
	}
}

// TestTimeSkipIdleScheduleStays: an idle server whose clock skips, with
// a nightly schedule, stays where it is: no night runs, the clock reads
// real time.
func TestTimeSkipIdleScheduleStays(t *testing.T) {
	t.Parallel()
	b := setupClock(t)
	time.Sleep(1500 * time.Millisecond) // three looks at the schedules
	require.Empty(t, b.nights(t))
	drift := b.parts.eng.Now().Sub(time.Now())
	require.Less(t, drift, time.Second, "the idle clock ran %v ahead of real time", drift)
}

// TestTimeSkipWaitRunsNights: a Wait of two days jumps the skipping
// clock through two nights: the nightly schedule starts two executions,
// each at its slot, in order, and no more.
func TestTimeSkipWaitRunsNights(t *testing.T) {
	t.Parallel()
	b := setupClock(t)
	b.api.sched.Look(context.Background()) // the schedule's alarm is armed before the Wait begins
	b.machine(t, "twodays", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 172800, "End": true}}}`)
	x := b.call(t, "StartExecution", fmt.Sprintf(`{"stateMachineArn": %q, "name": "x"}`, b.smArn("twodays")))
	require.Eventually(t, func() bool {
		d := b.call(t, "DescribeExecution", fmt.Sprintf(`{"executionArn": %q}`, x["executionArn"]))
		return d["status"] == "SUCCEEDED"
	}, 30*time.Second, 20*time.Millisecond)
	time.Sleep(time.Second) // for a clock that runs away to do so
	ns := b.nights(t)
	require.Len(t, ns, 2, "nights %v", ns)
	requireAtSlots(t, ns)
}

// TestClockAdvanceRoute: POST /stepwise/clock advances the skipping
// clock: a day runs exactly one night, at its slot; to a time before the
// clock's reading is refused; GET reads the clock.
func TestClockAdvanceRoute(t *testing.T) {
	t.Parallel()
	b := setupClock(t)
	before := b.parts.eng.Now()
	rec := b.serve(http.MethodPost, ClockPath, `{"advance": "24h"}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var resp ClockResponse
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.True(t, resp.Virtual)
	require.GreaterOrEqual(t, resp.Now.Sub(before), 24*time.Hour)
	require.Less(t, resp.Now.Sub(before), 24*time.Hour+time.Minute)
	ns := b.nights(t)
	require.Len(t, ns, 1, "nights %v", ns)
	requireAtSlots(t, ns)

	rec = b.serve(http.MethodGet, ClockPath, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.False(t, resp.Now.Before(before.Add(24*time.Hour)))

	rec = b.serve(http.MethodPost, ClockPath, fmt.Sprintf(`{"to": %q}`, before.Format(time.RFC3339)))
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "the clock never goes back: "+before.UTC().Truncate(time.Second).Format(time.RFC3339)+" is before its reading")
	require.Len(t, b.nights(t), 1)

	for body, want := range map[string]string{
		`{}`:                           `names one of \"advance\"`,
		`{"advance": "1h", "to": "x"}`: `names one of \"advance\"`,
		`{"advance": "a day"}`:         `advance: \"a day\" is not a duration`,
		`{"advance": "-1h"}`:           `advance: \"-1h\": the clock only moves forward`,
		`{"to": "tomorrow"}`:           `to: \"tomorrow\" is not an RFC 3339 time`,
		`{"by": "1h"}`:                 `unknown field \"by\"`,
	} {
		rec = b.serve(http.MethodPost, ClockPath, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, body)
		require.Contains(t, rec.Body.String(), want, body)
	}
}

// TestClockAdvanceConcurrent: two advances by a day at the same time
// move the clock by two days: the second counts from where the first
// left it.
func TestClockAdvanceConcurrent(t *testing.T) {
	t.Parallel()
	b := setupClock(t)
	before := b.parts.eng.Now()
	codes := make(chan string, 2)
	for range 2 {
		go func() {
			rec := b.serve(http.MethodPost, ClockPath, `{"advance": "24h"}`)
			codes <- fmt.Sprint(rec.Code, " ", rec.Body.String())
		}()
	}
	for range 2 {
		require.Regexp(t, "^200 ", <-codes)
	}
	moved := b.parts.eng.Now().Sub(before)
	require.GreaterOrEqual(t, moved, 48*time.Hour)
	require.Less(t, moved, 48*time.Hour+time.Minute)
	ns := b.nights(t)
	require.Len(t, ns, 2, "nights %v", ns)
	requireAtSlots(t, ns)
}

// TestClockAdvanceRealTime: a server in real time refuses an advance.
func TestClockAdvanceRealTime(t *testing.T) {
	t.Parallel()
	api := newClockParts(t, engine.Config{WaitTimeScale: 1}).api(t, false, nil)
	rec := httptest.NewRecorder()
	api.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, ClockPath, strings.NewReader(`{"advance": "1h"}`)))
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	var resp ClockResponse
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &resp))
	require.False(t, resp.Virtual)
	require.Equal(t, engine.ErrRealClock.Error(), resp.Error)
	require.Less(t, resp.Now.Sub(time.Now()), time.Minute)
}

// TestClockSigned: with credentials, the clock's routes take requests
// signed for "states" only.
func TestClockSigned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newClockParts(t, engine.Config{TimeSkip: true})
	auth := &apiAuth{keys: map[string]string{"AKIDCLOCK": "secret"}}
	api := p.api(t, false, auth)
	send := func(method, body, service string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, ClockPath, strings.NewReader(body))
		if service != "" {
			sum := sha256.Sum256([]byte(body))
			creds := aws.Credentials{AccessKeyID: "AKIDCLOCK", SecretAccessKey: "secret"}
			require.NoError(t, v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), service, p.cfg.Region, time.Now()))
		}
		rec := httptest.NewRecorder()
		api.Handler().ServeHTTP(rec, req)
		return rec
	}
	before := p.eng.Now()
	for _, service := range []string{"", "scheduler"} {
		rec := send(http.MethodPost, `{"advance": "1h"}`, service)
		require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"error":"clock: `)
		rec = send(http.MethodGet, "", service)
		require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	}
	require.Less(t, p.eng.Now().Sub(before), time.Hour)
	rec := send(http.MethodPost, `{"advance": "1h"}`, "states")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.GreaterOrEqual(t, p.eng.Now().Sub(before), time.Hour)
	rec = send(http.MethodGet, "", "states")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
