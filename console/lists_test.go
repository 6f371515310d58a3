package console_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/service"
)

const passDef = `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`

var (
	machineRowRE   = regexp.MustCompile(`<tr data-state-machine="([^"]*)">`)
	executionRowRE = regexp.MustCompile(`<tr data-execution="([^"]*)">`)
	moreRE         = regexp.MustCompile(`<a class="more" href="([^"]*)">`)
)

func rows(re *regexp.Regexp, page string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// The state machines' list: a name prefix (in any case) keeps the
// machines it starts, and each shows its newest execution.
func TestMachinesSearchAndLastRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	night := b.create(t, "jobnet-night", `{"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Boom"}}}`)
	b.create(t, "jobnet-day", passDef)
	b.create(t, "report", passDef)
	require.Equal(t, "SUCCEEDED", b.wait(t, b.start(t, night[:strings.LastIndexByte(night, ':')+1]+"report", "r1", `{}`)))
	require.Equal(t, "FAILED", b.wait(t, b.start(t, night, "first", `{}`)))
	require.Equal(t, "FAILED", b.wait(t, b.start(t, night, "second", `{}`)))

	code, page := b.get(t, "/")
	require.Equal(t, http.StatusOK, code)
	require.ElementsMatch(t, []string{"jobnet-night", "jobnet-day", "report"}, rows(machineRowRE, page))

	code, page = b.get(t, "/?q=JobNet")
	require.Equal(t, http.StatusOK, code)
	require.ElementsMatch(t, []string{"jobnet-night", "jobnet-day"}, rows(machineRowRE, page))
	require.Contains(t, page, `name="q" value="JobNet"`)
	require.Contains(t, page, `<span class="hint" data-field="matches">2 / 3</span>`)
	// The newest execution, linked, with its status.
	nightRow := page[strings.Index(page, `<tr data-state-machine="jobnet-night">`):]
	nightRow = nightRow[:strings.Index(nightRow, "</tr>")]
	last := regexp.MustCompile(`<td data-field="last-run"><a href="/executions/([^"]*)"><span class="status" data-status="failed">FAILED</span></a> `).FindStringSubmatch(nightRow)
	require.NotNil(t, last, nightRow)
	arn, err := url.PathUnescape(last[1])
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(arn, ":second"), arn)
	dayRow := page[strings.Index(page, `<tr data-state-machine="jobnet-day">`):]
	require.Contains(t, dayRow[:strings.Index(dayRow, "</tr>")], `<td data-field="last-run">—</td>`)

	code, page = b.get(t, "/?q=nothing")
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, rows(machineRowRE, page))
	require.Contains(t, page, "Nothing matches.")
}

// A state machine's executions filtered by status, name prefix and the
// time they started, and paged with the filter kept.
func TestExecutionFiltersAndPaging(t *testing.T) {
	t.Parallel()
	b := setup(t)
	sm := b.create(t, "nightly", `{"StartAt": "C", "States": {"C": {"Type": "Choice",
		"Choices": [{"Variable": "$.fail", "BooleanEquals": true, "Next": "F"}], "Default": "S"},
		"F": {"Type": "Fail", "Error": "Boom"}, "S": {"Type": "Succeed"}}}`)
	var arns []string
	for i := range 53 {
		arns = append(arns, b.start(t, sm, fmt.Sprintf("night-%02d", i), `{"fail": false}`))
	}
	boom := b.start(t, sm, "Night-boom", `{"fail": true}`)
	day := b.start(t, sm, "day-1", `{"fail": false}`)
	for _, a := range append(arns, boom, day) {
		b.wait(t, a)
	}
	page := func(query string) (int, string) { return b.get(t, "/state-machines/"+url.PathEscape(sm)+"?"+query) }

	// A name prefix, in any case, paged by 50 with the filter kept.
	code, p := page("prefix=night")
	require.Equal(t, http.StatusOK, code)
	first := rows(executionRowRE, p)
	require.Len(t, first, 50)
	more := moreRE.FindStringSubmatch(p)
	require.NotNil(t, more)
	next := html.UnescapeString(more[1])
	require.True(t, strings.HasPrefix(next, "?prefix=night&next="), next)
	code, p = page(next[1:])
	require.Equal(t, http.StatusOK, code)
	second := rows(executionRowRE, p)
	require.Len(t, second, 4)
	all := append(first, second...)
	require.NotContains(t, all, "day-1")
	require.Contains(t, all, "Night-boom")
	for _, a := range arns {
		require.Contains(t, all, a[strings.LastIndexByte(a, ':')+1:])
	}
	require.Nil(t, moreRE.FindStringSubmatch(p))
	require.Contains(t, p, `value="night"`)

	// A status.
	code, p = page("status=FAILED")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"Night-boom"}, rows(executionRowRE, p))
	code, p = page("status=SUCCEEDED&prefix=NIGHT-0")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, rows(executionRowRE, p), 10)

	// Started between: from the start of night-10 to that of night-12,
	// both included (RFC 3339 to the millisecond).
	at := func(arn string) time.Time {
		x, err := b.svc.DescribeExecution(context.Background(), &service.DescribeExecutionInput{ExecutionArn: arn})
		require.NoError(t, err)
		return time.Time(x.StartDate)
	}
	from, to := at(arns[10]), at(arns[12])
	code, p = page("from=" + url.QueryEscape(from.Format(time.RFC3339Nano)) + "&to=" + url.QueryEscape(to.Format(time.RFC3339Nano)))
	require.Equal(t, http.StatusOK, code)
	got := rows(executionRowRE, p)
	require.NotEmpty(t, got)
	for _, name := range []string{"night-10", "night-11", "night-12"} {
		require.Contains(t, got, name)
	}
	for _, name := range got {
		x := at(sm[:strings.Index(sm, ":stateMachine:")] + ":execution:nightly:" + name)
		require.False(t, x.Before(from) || x.After(to), "%s started at %s, outside [%s, %s]", name, x, from, to)
	}
	// A window before everything: nothing; after everything (a whole
	// day, in a zone): all.
	code, p = page("to=2000-01-01")
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, rows(executionRowRE, p))
	require.Contains(t, p, "Nothing matches.")
	today := time.Now().In(time.FixedZone("JST", 9*3600)).Format("2006-01-02")
	code, p = page("from=2000-01-01T00:00&to=" + today + "&tz=Asia/Tokyo&prefix=day")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"day-1"}, rows(executionRowRE, p))

	// Bad filters say what is wrong.
	for query, want := range map[string]string{
		"from=yesterday":                `The start of the window is not right: &#34;yesterday&#34; is not a date`,
		"to=2026-13-01":                 `The end of the window is not right:`,
		"from=2026-11-02&to=2026-11-01": `The window&#39;s start must be before its end.`,
		"tz=Mars/Base":                  `Unknown time zone: Mars/Base`,
		"status=NOPE":                   `statusFilter`,
		"next=garbage&prefix=night":     `Invalid token`,
	} {
		code, p = page(query)
		require.Equal(t, http.StatusBadRequest, code, query)
		require.Contains(t, p, want, query)
		require.Empty(t, rows(executionRowRE, p), query)
	}
}

// An EXPRESS state machine is listed, and its page shows, without
// executions (AWS lists none of them).
func TestExpressMachinePages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	out, err := b.svc.CreateStateMachine(context.Background(), &service.CreateStateMachineInput{Name: "fast", Type: "EXPRESS",
		Definition: passDef, RoleArn: "arn:aws:iam::123456789012:role/r"})
	require.NoError(t, err)
	code, page := b.get(t, "/?q=fa")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []string{"fast"}, rows(machineRowRE, page))
	code, page = b.get(t, "/state-machines/"+url.PathEscape(out.StateMachineArn)+"?prefix=x")
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, rows(executionRowRE, page))
}
