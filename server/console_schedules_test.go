package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/security/authn"
	"stepwise/scheduler"
)

// scheduleFormRequests are the requests of the console's schedule form
// (TestCrossOriginGuard): disabling the schedule "keep". One that does
// not say it comes from the console's page is refused with its own
// words; with credentials and no session, the gate sends it to sign in.
func (b *guardBundle) scheduleFormRequests() []guardRequest {
	r := guardRequest{method: http.MethodPost, path: "/schedule-list/" + b.group + "/keep",
		body: url.Values{"state": {"DISABLED"}}.Encode(), refusal: formRefusal}
	r.reached = func(t *testing.T, ct string, rec *httptest.ResponseRecorder) {
		switch {
		case rec.Code == http.StatusForbidden:
			require.Equal(t, notFromConsole+"\n", rec.Body.String())
		case b.api.gate != nil:
			require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
			require.True(t, strings.HasPrefix(rec.Header().Get("Location"), authn.SignInPath+"?"), rec.Header().Get("Location"))
		case ct != "application/x-www-form-urlencoded":
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String()) // no state given
		case rec.Code == http.StatusNotFound:
			// Another route's request deleted it.
			require.False(t, b.scheduleExists(t, "keep"))
		default:
			require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
			sc, err := b.api.sched.GetSchedule(context.Background(), b.group, "keep")
			require.NoError(t, err)
			require.Equal(t, "DISABLED", sc.State)
		}
	}
	return []guardRequest{r}
}

// The server's console shows a schedule of the universal target: the
// state machine its request names, the executions named by its template
// and not the others; the form disables it from the console's page only,
// and with credentials only with a session.
func TestConsoleSchedule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, auth := range []*apiAuth{nil, {keys: map[string]string{"AKIDCONSOLE": "secret"}}} {
		b := &guardBundle{api: newAPIParts(t).api(t, false, auth)}
		sm := b.self(t, "CreateStateMachine", b.machineBody("jobnet"))["stateMachineArn"].(string)
		input := `{"StateMachineArn": "` + sm + `", "Name": "jobnet-<stepwise.scheduled-date>", "Input": "{}"}`
		_, err := b.api.sched.CreateSchedule(ctx, &scheduler.Schedule{Name: "nightly", ScheduleExpression: "cron(0 2 * * ? *)",
			FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "OFF"},
			Target:             &scheduler.Target{Arn: scheduler.UniversalStartExecution, RoleArn: "arn:aws:iam::123456789012:role/r", Input: &input}})
		require.NoError(t, err)
		b.self(t, "StartExecution", `{"stateMachineArn": "`+sm+`", "name": "jobnet-20261127"}`)
		b.self(t, "StartExecution", `{"stateMachineArn": "`+sm+`", "name": "by-hand"}`)

		send := func(method, path string, header http.Header, body string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(method, "http://"+guardHost+path, strings.NewReader(body))
			req.Header = header.Clone()
			if auth != nil {
				rec := httptest.NewRecorder()
				form := url.Values{"access_key_id": {"AKIDCONSOLE"}, "secret_access_key": {"secret"}}
				signIn := httptest.NewRequest(http.MethodPost, "http://"+guardHost+authn.SignInPath, strings.NewReader(form.Encode()))
				signIn.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				b.api.Handler().ServeHTTP(rec, signIn)
				for _, c := range rec.Result().Cookies() {
					req.AddCookie(c)
				}
			}
			rec := httptest.NewRecorder()
			b.api.Handler().ServeHTTP(rec, req)
			return rec
		}
		state := func() string {
			sc, err := b.api.sched.GetSchedule(ctx, "default", "nightly")
			require.NoError(t, err)
			return sc.State
		}

		rec := send(http.MethodGet, "/schedule-list", http.Header{}, "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `<td><a href="/state-machines/`+url.PathEscape(sm)+`">`, "the state machine the request names")
		rec = send(http.MethodGet, "/schedule-list/default/nightly", http.Header{}, "")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		page := rec.Body.String()
		require.Contains(t, page, `<td data-field="target"><a href="/state-machines/`+url.PathEscape(sm)+`">`)
		require.Contains(t, page, `<code>jobnet-…</code>`)
		require.Contains(t, page, `<tr data-execution="jobnet-20261127">`)
		require.NotContains(t, page, `<tr data-execution="by-hand">`)
		require.Contains(t, page, `The execution name uses Stepwise&#39;s placeholders`)

		form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
		body := url.Values{"state": {"DISABLED"}}.Encode()
		// Not from the console's page: refused, the schedule unchanged.
		rec = send(http.MethodPost, "/schedule-list/default/nightly", form.Clone(), body)
		require.Equal(t, http.StatusForbidden, rec.Code)
		require.Equal(t, "ENABLED", state())
		cross := form.Clone()
		cross.Set("Origin", "http://evil.example")
		rec = send(http.MethodPost, "/schedule-list/default/nightly", cross, body)
		require.Equal(t, http.StatusForbidden, rec.Code)
		require.Equal(t, "ENABLED", state())
		// From the page: disabled.
		own := form.Clone()
		own.Set("Origin", "http://"+guardHost)
		rec = send(http.MethodPost, "/schedule-list/default/nightly", own, body)
		require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
		require.Equal(t, "/schedule-list/default/nightly", rec.Header().Get("Location"))
		require.Equal(t, "DISABLED", state())
		if auth != nil {
			// Without a session: to the sign-in page, unchanged.
			req := httptest.NewRequest(http.MethodPost, "http://"+guardHost+"/schedule-list/default/nightly", strings.NewReader(url.Values{"state": {"ENABLED"}}.Encode()))
			req.Header = own.Clone()
			rec = httptest.NewRecorder()
			b.api.Handler().ServeHTTP(rec, req)
			require.Equal(t, http.StatusSeeOther, rec.Code)
			require.True(t, strings.HasPrefix(rec.Header().Get("Location"), authn.SignInPath+"?"), rec.Header().Get("Location"))
			require.Equal(t, "DISABLED", state())
		}
	}
}

func TestExecutionsOf(t *testing.T) {
	t.Parallel()
	sm := "arn:aws:states:us-east-1:123456789012:stateMachine:jobnet"
	universal := func(req string) *scheduler.Target {
		return &scheduler.Target{Arn: scheduler.UniversalStartExecution, Input: &req}
	}
	for _, tt := range []struct {
		sc            scheduler.Schedule
		machine, name string
	}{
		{scheduler.Schedule{Name: "nightly", GroupName: "default", Target: &scheduler.Target{Arn: sm}}, sm, "nightly-"},
		{scheduler.Schedule{Name: "nightly", GroupName: "etl", Target: &scheduler.Target{Arn: sm}}, sm, "etl.nightly-"},
		{scheduler.Schedule{Name: "n", GroupName: "default", Target: universal(`{"StateMachineArn": "` + sm + `", "Name": "net-<stepwise.scheduled-date>"}`)}, sm, "net-"},
		{scheduler.Schedule{Name: "n", GroupName: "default", Target: universal(`{"StateMachineArn": "` + sm + `", "Name": "<aws.scheduler.execution-id>"}`)}, sm, ""},
		{scheduler.Schedule{Name: "n", GroupName: "default", Target: universal(`{"StateMachineArn": "` + sm + `"}`)}, sm, "n-"},
		{scheduler.Schedule{Name: "n", GroupName: "default", Target: universal(`not json`)}, "", ""},
	} {
		machine, name := executionsOf(&tt.sc)
		require.Equal(t, tt.machine, machine, tt.sc.Name)
		require.Equal(t, tt.name, name, tt.sc.Name)
	}
}
