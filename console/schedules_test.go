package console_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/console"
	"stepwise/scheduler"
	"stepwise/server/servertest"
)

// schedules is the console's Scheduler over a real scheduler.Service,
// as the server wires it (cmd/stepwise/cli has the whole of it).
type schedules struct{ sched *scheduler.Service }

func (s schedules) list(ctx context.Context) ([]console.ScheduleView, error) {
	list, err := s.sched.Overview(ctx, 3)
	if err != nil {
		return nil, err
	}
	var out []console.ScheduleView
	for _, o := range list {
		out = append(out, console.ScheduleView{Arn: o.Arn, Group: o.Group, Name: o.Name, State: o.State, Expression: o.Expression,
			Timezone: o.Timezone, Target: o.Target, LastFired: o.LastFired, Next: o.Next, Calendar: o.Calendar, NotAWS: notes(o.NotAWS),
			Held: o.Held, Skipped: o.Skipped})
	}
	return out, nil
}

func (s schedules) Schedule(ctx context.Context, group, name string) (*console.ScheduleDetail, error) {
	sc, err := s.get(ctx, group, name)
	if err != nil {
		return nil, err
	}
	list, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	d := &console.ScheduleDetail{FlexibleMode: sc.FlexibleTimeWindow.Mode, MaxRetryAttempts: sc.MaximumRetryAttempts(),
		MaxEventAgeSeconds: int(sc.MaximumEventAge().Seconds()), StateMachine: sc.Target.Arn, ExecutionPrefix: sc.Name + "-"}
	if sc.Target.DeadLetterConfig != nil {
		d.DeadLetterArn = *sc.Target.DeadLetterConfig.Arn
	}
	if m := sc.FlexibleTimeWindow.MaximumWindowInMinutes; m != nil {
		d.FlexibleMinutes = *m
	}
	for _, v := range list {
		if v.Group == group && v.Name == name {
			d.ScheduleView = v
		}
	}
	return d, nil
}

func (s schedules) SetScheduleState(ctx context.Context, group, name, state string) error {
	sc, err := s.get(ctx, group, name)
	if err != nil {
		return err
	}
	sc.State = state
	_, err = s.sched.UpdateSchedule(ctx, sc)
	return err
}

func (s schedules) HoldNext(ctx context.Context, group, name string, hold bool) error {
	if _, err := s.get(ctx, group, name); err != nil {
		return err
	}
	var err error
	if hold {
		_, err = s.sched.HoldNext(ctx, group, name)
	} else {
		_, err = s.sched.ReleaseHold(ctx, group, name)
	}
	return err
}

func (s schedules) get(ctx context.Context, group, name string) (*scheduler.Schedule, error) {
	sc, err := s.sched.GetSchedule(ctx, group, name)
	var e *scheduler.Error
	if errors.As(err, &e) && e.Code == "ResourceNotFoundException" {
		return nil, console.ErrNoSchedule
	}
	return sc, err
}

// setupSchedules runs the console over a real store, engine, service and
// scheduler whose clock is now, with a calendar jp whose 2026-11-27 is a
// day off.
func setupSchedules(t *testing.T, now time.Time) (*bundle, *scheduler.Service) {
	t.Helper()
	st := servertest.New(t)
	svc := st.Service()
	cal := filepath.Join(t.TempDir(), "jp.txt")
	require.NoError(t, os.WriteFile(cal, []byte("2026-11-26 # a day off\n"), 0o600))
	calendars, err := scheduler.LoadCalendars(map[string]string{"jp": cal})
	require.NoError(t, err)
	sched := scheduler.New(st.Store().Executor(), scheduler.Config{Region: "us-east-1", Account: "123456789012", Calendars: calendars,
		Now: func() time.Time { return now }})
	s := schedules{sched: sched}
	con, err := console.NewWith(svc, console.Options{Schedules: s.list, Scheduler: s})
	require.NoError(t, err)
	b := &bundle{svc: svc}
	b.srv = httptest.NewServer(con)
	t.Cleanup(b.srv.Close)
	return b, sched
}

func (b *bundle) post(t *testing.T, path string, form url.Values) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.srv.URL)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// A schedule's page: its definition, its calendar and what AWS would not
// do, its next runs in its calendar, the executions it started (and not
// the others of its target); Disable and Enable change its state as
// UpdateSchedule does, and its next runs with it.
func TestSchedulePage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	b, sched := setupSchedules(t, now)
	ctx := context.Background()
	sm := b.create(t, "jobnet", passDef)
	require.NoError(t, sched.TagResource(ctx, sched.GroupArn("default"), []scheduler.Tag{{Key: "stepwise:calendar", Value: "jp:next"}}))
	win, dlq := 15, "arn:aws:sqs:us-east-1:123456789012:dlq"
	_, err := sched.CreateSchedule(ctx, &scheduler.Schedule{Name: "nightly", ScheduleExpression: "cron(0 2 ? * MON-FRI *)",
		ScheduleExpressionTimezone: "Asia/Tokyo", FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "FLEXIBLE", MaximumWindowInMinutes: &win},
		Target: &scheduler.Target{Arn: sm, RoleArn: "arn:aws:iam::123456789012:role/r", DeadLetterConfig: &scheduler.DeadLetterConfig{Arn: &dlq}}})
	require.NoError(t, err)
	ours := b.start(t, sm, "nightly-20261125T020000", `{}`)
	other := b.start(t, sm, "by-hand", `{}`)
	b.wait(t, ours)
	b.wait(t, other)

	// The list links each schedule to its page and names its calendar.
	code, list := b.get(t, "/schedule-list")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, list, `<a href="/schedule-list/default/nightly">nightly</a>`)
	require.Contains(t, list, `<code>jp:next</code>`)
	require.Contains(t, list, `<a class="hint" data-field="not-aws" href="/schedule-list/default/nightly#not-aws">Unlike on AWS (1)</a>`)

	code, page := b.get(t, "/schedule-list/default/nightly")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, page, `<span class="badge" data-field="state" data-state="ENABLED">Enabled</span>`)
	require.Contains(t, page, `<code data-field="expression">cron(0 2 ? * MON-FRI *)</code>`)
	require.Contains(t, page, `<td data-field="timezone">Asia/Tokyo</td>`)
	require.Contains(t, page, `<td data-field="calendar"><code>jp:next</code></td>`)
	require.Contains(t, page, `<td data-field="flexible">Within 15 min</td>`)
	require.Contains(t, page, `<td data-field="retry">Maximum retry attempts 185, Maximum event age 86400 s</td>`)
	require.Contains(t, page, `<td data-field="dlq"><code>`+dlq+`</code></td>`)
	require.Contains(t, page, `The calendar jp (rule next, from the group&#39;s tags) moves a slot that falls on a day off to the next business day`)
	// Weekdays at 02:00 in Tokyo (17:00 UTC the day before): Thursday
	// the 26th is a day off, so its slot moves to Friday's, which fires
	// once; then Monday and Tuesday.
	require.Contains(t, page, `<ol id="next-runs"><li><time datetime="2026-11-26T17:00:00.000Z" data-zone="Asia/Tokyo">2026-11-27 02:00:00 UTC+9</time></li><li><time datetime="2026-11-29T17:00:00.000Z" data-zone="Asia/Tokyo">2026-11-30 02:00:00 UTC+9</time></li><li><time datetime="2026-11-30T17:00:00.000Z" data-zone="Asia/Tokyo">2026-12-01 02:00:00 UTC+9</time></li>`)
	require.Contains(t, page, `<tr data-execution="nightly-20261125T020000">`)
	require.NotContains(t, page, `<tr data-execution="by-hand">`)
	require.Contains(t, page, `<button type="submit" data-action="disable">Disable</button>`)

	// In Japanese.
	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/schedule-list/default/nightly", nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Language", "ja")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	ja, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(ja), `data-state="ENABLED">有効</span>`)
	require.Contains(t, string(ja), `<button type="submit" data-action="disable">無効にする</button>`)
	require.Contains(t, string(ja), `<td data-field="flexible">最大 15 分</td>`)

	// Disable: back to the page, DISABLED, no next runs.
	resp = b.post(t, "/schedule-list/default/nightly", url.Values{"state": {"DISABLED"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/schedule-list/default/nightly", resp.Header.Get("Location"))
	sc, err := sched.GetSchedule(ctx, "default", "nightly")
	require.NoError(t, err)
	require.Equal(t, "DISABLED", sc.State)
	require.Equal(t, "Asia/Tokyo", sc.ScheduleExpressionTimezone, "the other settings stay")
	require.Equal(t, 15, *sc.FlexibleTimeWindow.MaximumWindowInMinutes)
	require.Equal(t, dlq, *sc.Target.DeadLetterConfig.Arn)
	_, page = b.get(t, "/schedule-list/default/nightly")
	require.Contains(t, page, `<span class="badge" data-field="state" data-state="DISABLED">Disabled</span>`)
	require.Contains(t, page, `<button type="submit" data-action="enable">Enable</button>`)
	require.Contains(t, page, `<ol id="next-runs"></ol>`)

	// Enable again.
	resp = b.post(t, "/schedule-list/default/nightly", url.Values{"state": {"ENABLED"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	sc, err = sched.GetSchedule(ctx, "default", "nightly")
	require.NoError(t, err)
	require.Equal(t, "ENABLED", sc.State)

	// What is not right is refused, with the reason.
	resp = b.post(t, "/schedule-list/default/nightly", url.Values{"state": {"PAUSED"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp = b.post(t, "/schedule-list/default/nope", url.Values{"state": {"DISABLED"}})
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	code, _ = b.get(t, "/schedule-list/default/nope")
	require.Equal(t, http.StatusNotFound, code)
}

// notes words the scheduler's differences as the server does.
func notes(ds []scheduler.Difference) []console.Note {
	out := make([]console.Note, len(ds))
	for i, d := range ds {
		out[i] = console.Note{Kind: d.Kind, Calendar: d.Calendar, Rule: d.Rule, Detail: d.Detail}
	}
	return out
}

// "Skip next run" holds the schedule's next run: the page says which run
// is held and offers to take the hold back; once the run's time has
// passed it is listed as skipped, and the run after it fires.
func TestScheduleHoldNext(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	b, sched := setupSchedules(t, now)
	ctx := context.Background()
	sm := b.create(t, "jobnet", passDef)
	_, err := sched.CreateSchedule(ctx, &scheduler.Schedule{Name: "nightly", ScheduleExpression: "cron(0 2 * * ? *)",
		FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "OFF"},
		Target:             &scheduler.Target{Arn: sm, RoleArn: "arn:aws:iam::123456789012:role/r"}})
	require.NoError(t, err)
	_, page := b.get(t, "/schedule-list/default/nightly")
	require.Contains(t, page, `<input type="hidden" name="hold" value="next"><button type="submit" data-action="hold-next">Skip next run</button>`)

	resp := b.post(t, "/schedule-list/default/nightly", url.Values{"hold": {"next"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, page = b.get(t, "/schedule-list/default/nightly")
	require.Contains(t, page, `<p data-field="held">Held: this run is skipped, the ones after it fire: <time datetime="2026-11-26T02:00:00.000Z"`)
	require.Contains(t, page, `data-action="release-hold">Run it after all</button>`)

	req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/schedule-list/default/nightly", nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Language", "ja")
	jresp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	ja, err := io.ReadAll(jresp.Body)
	jresp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(ja), `data-action="release-hold">保留を解除</button>`)

	// Released, then held again from the Japanese page's button.
	resp = b.post(t, "/schedule-list/default/nightly", url.Values{"hold": {"release"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, page = b.get(t, "/schedule-list/default/nightly")
	require.Contains(t, page, `data-action="hold-next">Skip next run</button>`)
	resp = b.post(t, "/schedule-list/default/nightly", url.Values{"hold": {"next"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	started := 0
	cfg := scheduler.FireConfig{Now: func() time.Time { return time.Date(2026, 11, 26, 2, 0, 30, 0, time.UTC) },
		Starter: scheduler.StarterFunc(func(context.Context, *scheduler.StartExecution) error { started++; return nil })}
	require.NoError(t, sched.FireDue(ctx, cfg))
	require.Zero(t, started)
	_, page = b.get(t, "/schedule-list/default/nightly")
	require.Contains(t, page, `<p data-field="skipped">Skipped by a hold: <time datetime="2026-11-26T02:00:00.000Z"`)

	resp = b.post(t, "/schedule-list/default/nightly", url.Values{"hold": {"later"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp = b.post(t, "/schedule-list/default/nope", url.Values{"hold": {"next"}})
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}
