package console_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/console"
	"stepwise/engine"
	"stepwise/internal/testkit/testwait"
	"stepwise/service"
	"stepwise/store/sqlitestore"
)

// English words a Japanese page must not show: the statuses (AWS's and
// the graph's) and the console's own words. ARNs, JSON, code, event
// types and state names are the user's or AWS's, and stay as they are.
var untranslated = []string{
	"SUCCEEDED", "FAILED", "RUNNING", "ABORTED", "TIMED_OUT", "PENDING_REDRIVE", "ENABLED", "DISABLED",
	"succeeded", "failed", "caught", "running", "cancelled", "Succeeded", "Failed", "Caught", "Running", "Cancelled",
	"not run", "Not run", "Retries", "Duration", "Input", "Output", "Started", "Stopped", "Status", "Name", "Type",
	"Created", "Executions", "Error", "Cause", "Legend", "Graph", "Definition", "Start", "Stop", "All", "Next page",
	"None yet", "Not found", "Back", "Step", "Elapsed", "Timestamp", "Details", "Filter", "Sign in", "Sign out",
	"Schedules", "Expression", "Target", "Activities", "State", "Loading", "Time zone", "Pending", "Timed out",
	"Aborted", "Total", "Items", "Map run", "Version", "Alias", "Routing", "Updated", "Policies", "Last run",
	"Next runs", "Workers", "Tasks waiting", "Something went wrong", "Access key", "Secret", "events", "state transitions",
}

var (
	hidden = regexp.MustCompile(`(?s)<(script|pre|code)\b.*?</(script|pre|code)>`)
	tag    = regexp.MustCompile(`(?s)<[^>]*>`)
)

// visibleText is what a page shows as its own words: its text without
// tags, scripts (JSON data), and code and JSON blocks (ARNs,
// definitions, inputs).
func visibleText(page string) string {
	return html.UnescapeString(tag.ReplaceAllString(hidden.ReplaceAllString(page, " "), " "))
}

// englishIn lists the English words and phrases of a page's text: those
// of the deny list and every English message the Japanese table says
// otherwise, as whole words (a word in a hyphenated name, as
// finish-running, is a name's).
func englishIn(text string) []string {
	words := map[string]bool{}
	for _, w := range untranslated {
		words[w] = true
	}
	for key, en := range console.Messages["en"] {
		if ja := console.Messages["ja"][key]; ja != en && len(en) >= 3 {
			words[en] = true
		}
	}
	var found []string
	for w := range words {
		if regexp.MustCompile(`(?:^|[^A-Za-z_-])` + regexp.QuoteMeta(w) + `(?:$|[^A-Za-z_-])`).MatchString(text) {
			found = append(found, w)
		}
	}
	sort.Strings(found)
	return found
}

// Every page in Japanese, through the console's handler over a real
// store: the state machines, a state machine (filtered too), executions
// succeeded, caught, failed, stopped, running and with a map run, a map
// run's child, the activities, the schedules, the sign-in page, a page
// not found and a page that could not be read. None shows an English
// word of the console's.
func TestEveryPageInJapanese(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "stepwise.db"), sqlitestore.Options{})
	require.NoError(t, err)
	eng, err := engine.New(drv, engine.Config{Region: "us-east-1", Account: "123456789012", WaitTimeScale: 1})
	require.NoError(t, err)
	require.NoError(t, eng.Start(ctx))
	svc, err := service.New(drv, eng, service.Config{})
	require.NoError(t, err)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	last := time.Date(2026, 11, 27, 2, 0, 0, 0, tokyo)
	detail := &console.ScheduleDetail{ScheduleView: console.ScheduleView{Arn: "arn:aws:scheduler:us-east-1:123456789012:schedule/default/nightly",
		Group: "default", Name: "nightly", State: "ENABLED", Expression: "cron(0 2 ? * MON-FRI *)", Timezone: "Asia/Tokyo",
		LastFired: &last, Next: []time.Time{last.AddDate(0, 0, 3)}, Calendar: "jp:next",
		NotAWS: []console.Note{{Kind: "calendar", Calendar: "jp", Rule: "next"}, {Kind: "name-placeholders"}, {Kind: "input-placeholders"}}},
		FlexibleMode: "FLEXIBLE", FlexibleMinutes: 15, MaxEventAgeSeconds: 86400, MaxRetryAttempts: 185, ActionAfterCompletion: "NONE",
		Created: last, LastModified: last}
	con, err := console.NewWith(svc, console.Options{SignIn: true, Scheduler: i18nScheduler{detail}, Schedules: func(context.Context) ([]console.ScheduleView, error) {
		return []console.ScheduleView{
			{Arn: "arn:aws:scheduler:us-east-1:123456789012:schedule/default/nightly", Group: "default", Name: "nightly", State: "ENABLED",
				Expression: "cron(0 2 * * ? *)", Timezone: "Asia/Tokyo", LastFired: &last, Next: []time.Time{last.AddDate(0, 0, 1), last.AddDate(0, 0, 2)}},
			{Arn: "arn:aws:scheduler:us-east-1:123456789012:schedule/ops/weekly", Group: "ops", Name: "weekly", State: "DISABLED",
				Expression: "rate(7 days)"},
		}, nil
	}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /signin", func(w http.ResponseWriter, r *http.Request) { con.SignIn(w, r, http.StatusUnauthorized, true) })
	mux.Handle("/", con)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		eng.Stop()
		drv.Close()
	})
	b := &bundle{svc: svc, srv: srv}

	caught := b.create(t, "par", `{"StartAt": "P", "States": {
		"P": {"Type": "Parallel", "Branches": [
			{"StartAt": "Slow", "States": {"Slow": {"Type": "Wait", "Seconds": 60, "End": true}}},
			{"StartAt": "Quick", "States": {"Quick": {"Type": "Pass", "End": true}}},
			{"StartAt": "Boom", "States": {"Boom": {"Type": "Fail", "Error": "Boom", "Cause": "わざと"}}}],
			"Retry": [{"ErrorEquals": ["Nope"]}],
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Handled"}], "Next": "Never"},
		"Handled": {"Type": "Pass", "End": true},
		"Never": {"Type": "Succeed"}}}`)
	policed := b.create(t, "policed", `{"StartAt": "Fan", "States": {"Fan": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}]}}}`)
	_, err = svc.TagResource(ctx, &service.TagResourceInput{ResourceArn: policed, Tags: []service.Tag{{Key: ptr("stepwise:policy/Fan"), Value: ptr("finish-running")}}})
	require.NoError(t, err)
	caughtX := b.start(t, caught, "par-1", `{"order": 7}`)
	failing := b.create(t, "fails", `{"StartAt": "Job", "States": {"Job": {"Type": "Fail", "Error": "JobFailed", "Cause": "ジョブが失敗"}}}`)
	failedX := b.start(t, failing, "night-1127", `{}`)
	waiting := b.create(t, "waits", `{"StartAt": "Pause", "States": {"Pause": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	runningX := b.start(t, waiting, "holding", `{}`)
	stoppedX := b.start(t, waiting, "stopped", `{}`)
	_, err = svc.StopExecution(ctx, &service.StopExecutionInput{ExecutionArn: stoppedX})
	require.NoError(t, err)
	fan := b.create(t, "fan", `{"StartAt": "M", "States": {"M": {"Type": "Map", "Label": "Fan",
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Inner", "States": {
			"Inner": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "Boom"}], "Default": "Fine"},
			"Boom": {"Type": "Fail", "Error": "Two"}, "Fine": {"Type": "Pass", "End": true}}},
		"ToleratedFailureCount": 1, "End": true}}}`)
	fanX := b.start(t, fan, "fan-out", `[1, 2, 3]`)
	for _, x := range []string{caughtX, failedX, fanX} {
		b.wait(t, x)
	}
	runs, err := svc.ListMapRuns(ctx, &service.ListMapRunsInput{ExecutionArn: fanX})
	require.NoError(t, err)
	require.Len(t, runs.MapRuns, 1)
	children, err := svc.ListExecutions(ctx, &service.ListExecutionsInput{MapRunArn: runs.MapRuns[0].MapRunArn})
	require.NoError(t, err)
	require.NotEmpty(t, children.Executions)

	act, err := svc.CreateActivity(ctx, &service.CreateActivityInput{Name: "reports"})
	require.NoError(t, err)
	pollCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, _ = svc.GetActivityTask(pollCtx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: ptr("worker-7")})

	get := func(path string) (int, string) {
		req, err := http.NewRequest("GET", srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Accept-Language", "ja,en;q=0.8")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	testwait.Until(t, func() bool {
		_, page := get("/executions/" + url.PathEscape(runningX))
		return strings.Contains(page, `data-status="RUNNING"`) && strings.Contains(page, "WaitStateEntered")
	}, 30*time.Second, 10*time.Millisecond, "the waiting execution is in its Wait")

	pages := map[string]int{
		"/": 200, "/state-machines/" + url.PathEscape(caught): 200, "/state-machines/" + url.PathEscape(policed): 200, "/state-machines/" + url.PathEscape(waiting) + "?status=ABORTED": 200,
		"/activities": 200, "/tonight?tz=Asia/Tokyo": 200, "/schedule-list": 200, "/schedule-list/default/nightly": 200, "/signin": 401, "/nowhere": 404,
		"/executions/arn:aws:states:us-east-1:123456789012:execution:nope:x": 404,
	}
	for _, x := range []string{caughtX, failedX, runningX, stoppedX, fanX, children.Executions[0].ExecutionArn} {
		pages["/executions/"+url.PathEscape(x)] = 200
	}
	for path, want := range pages {
		code, page := get(path)
		require.Equal(t, want, code, path)
		require.Contains(t, page, `<html lang="ja">`, path)
		text := visibleText(page)
		require.Empty(t, englishIn(text), "%s shows English:\n%s", path, text)
	}
	// The statuses are there, in Japanese.
	_, page := get("/")
	for _, s := range []string{"実行中", "成功", "失敗", "タイムアウト", "中止"} {
		require.Contains(t, visibleText(page), s)
	}
	_, page = get("/executions/" + url.PathEscape(caughtX))
	require.Contains(t, page, `data-status="succeeded">成功</span>`)
	require.Contains(t, page, `<li data-status="caught">キャッチ済み</li>`)
	// Times are <time> elements with the instant in UTC, for the page's
	// script; a schedule's are written in its own zone.
	require.Regexp(t, `<dt>開始</dt><dd><time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC</time></dd>`, page)
	_, page = get("/schedule-list")
	require.Contains(t, page, `<td data-field="last"><time datetime="2026-11-26T17:00:00.000Z" data-zone="Asia/Tokyo">2026-11-27 02:00:00 UTC+9</time></td>`)
	require.Contains(t, page, `<div><time datetime="2026-11-27T17:00:00.000Z" data-zone="Asia/Tokyo">2026-11-28 02:00:00 UTC+9</time></div>`)
	require.Contains(t, visibleText(page), "有効")
	require.Contains(t, visibleText(page), "無効")

	// A page that cannot be read (the store is closed) says so in
	// Japanese, with the error as it is.
	drv.Close()
	code, page := get("/")
	require.Equal(t, http.StatusInternalServerError, code)
	require.Contains(t, page, `data-page="error"`)
	require.Contains(t, page, "エラーが発生しました")
	require.Empty(t, englishIn(visibleText(page)), visibleText(page))
}

// The same pages in English keep AWS's statuses and the console's words:
// the deny list finds them (the check can fail).
func TestEnglishPagesShowEnglish(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "ok", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`)
	x := b.start(t, sm, "run", `{}`)
	b.wait(t, x)
	_, page := b.get(t, "/executions/"+url.PathEscape(x))
	found := englishIn(visibleText(page))
	require.Contains(t, found, "SUCCEEDED")
	require.Contains(t, found, "Duration")
	require.Contains(t, found, "Not run")
}

// i18nScheduler is a console.Scheduler of one schedule.
type i18nScheduler struct{ d *console.ScheduleDetail }

func (s i18nScheduler) Schedule(context.Context, string, string) (*console.ScheduleDetail, error) {
	return s.d, nil
}

func (i18nScheduler) SetScheduleState(context.Context, string, string, string) error { return nil }

func (i18nScheduler) HoldNext(context.Context, string, string, bool) error { return nil }
