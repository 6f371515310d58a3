package e2e

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
)

// In a browser in Asia/Tokyo, as a night's operator reads the console:
// the executions' filter reads its times in Tokyo's time and says so; a
// failed Parallel, its failed branch state and the cancelled one beside
// it each have a duration, written one way (in the panel, the events
// table and the header); the panel numbers the branches from 1, as the
// graph does; and every zone is named one way (UTC+9).
func TestConsoleForANightsOperator(t *testing.T) {
	t.Parallel()
	ctx := browserIn(t, "Asia/Tokyo")
	s := startServer(t, filepath.Join(t.TempDir(), "ops.db"))
	c := s.client(t)
	sm := createMachine(t, c, "night", `{"StartAt": "Night", "States": {
		"Night": {"Type": "Parallel", "End": true, "Branches": [
			{"StartAt": "Long", "States": {"Long": {"Type": "Wait", "Seconds": 30, "End": true}}},
			{"StartAt": "Short", "States": {"Short": {"Type": "Wait", "Seconds": 1, "Next": "Job"},
				"Job": {"Type": "Fail", "Error": "JobFailed", "Cause": "ジョブが異常終了"}}}]}}}`)
	arn := startExecution(t, c, sm, "night-20261127", `{}`)
	x := waitDone(t, c, arn)
	require.Equal(t, "FAILED", string(x.Status))
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	start := aws.ToTime(x.StartDate).In(tokyo)

	// The filter, in Tokyo's time: the minute the execution started.
	do(t, ctx, chromedp.Navigate(s.url()+"/state-machines/"+sm), chromedp.WaitVisible(css(`#execution-search`)))
	require.Equal(t, "Asia/Tokyo (UTC+9)", eval[string](t, ctx, `document.querySelector('[data-field="filter-zone"]').textContent`))
	require.Equal(t, "Asia/Tokyo", eval[string](t, ctx, `document.querySelector('#execution-search input[name="tz"]').value`))
	from, to := start.Truncate(time.Minute), start.Truncate(time.Minute).Add(time.Minute)
	eval[bool](t, ctx, `document.querySelector('#execution-search input[name="from"]').value = '`+from.Format("2006-01-02T15:04:05")+`';
		document.querySelector('#execution-search input[name="to"]').value = '`+to.Format("2006-01-02T15:04:05")+`'; true`)
	do(t, ctx, chromedp.Click(css(`#execution-search button[type="submit"]`)))
	testwait.Until(t, func() bool {
		return eval[bool](t, ctx, `location.search.includes('tz=Asia%2FTokyo') && !!document.querySelector('[data-execution="night-20261127"]')`)
	}, 30*time.Second, 50*time.Millisecond, "the execution found by its start in Tokyo's time")

	// Durations, one way: the header, the events table, the panel.
	english := regexp.MustCompile(`^(\d+\.\d{1,3}s|\d+m \d+s)$`)
	japanese := regexp.MustCompile(`^(\d+\.\d{1,3}秒|\d+分\d+秒)$`)
	do(t, ctx, chromedp.Navigate(executionURL(s, arn)), chromedp.WaitVisible(css(`#graph [data-state="Night"]`)))
	require.Regexp(t, english, eval[string](t, ctx, `[...document.querySelectorAll('dl.facts dt')].find(e => e.textContent === 'Duration').nextElementSibling.textContent`))
	for _, e := range eval[[]string](t, ctx, `[...document.querySelectorAll('#history td[data-ms]')].map(e => e.textContent)`) {
		require.Regexp(t, english, e)
	}
	for _, state := range []string{"Night", "Job", "Long"} {
		do(t, ctx, chromedp.Click(css(`#graph [data-state="`+state+`"]`)),
			chromedp.WaitVisible(css(`#state-details .details-head h2`)))
		testwait.Until(t, func() bool {
			return eval[string](t, ctx, `document.querySelector('#state-details .details-head h2').textContent`) == state
		}, 30*time.Second, 50*time.Millisecond, "the panel of "+state)
		testwait.Until(t, func() bool {
			d := eval[string](t, ctx, `(([...document.querySelectorAll('#state-details dl.facts dt')].find(e => e.textContent === 'Duration') || {}).nextElementSibling || {}).textContent || ''`)
			return english.MatchString(d)
		}, 10*time.Second, 50*time.Millisecond, "a duration for "+state)
	}
	// The Parallel's branches, numbered as the graph numbers them.
	do(t, ctx, chromedp.Click(css(`#graph [data-state="Night"]`)))
	testwait.Until(t, func() bool {
		return eval[string](t, ctx, `[...document.querySelectorAll('#state-details ol.runs li')].map(e => e.textContent.split(' ').slice(0, 2).join(' ')).join(',')`) == "Branch 1,Branch 2"
	}, 30*time.Second, 50*time.Millisecond, "the branches numbered from 1")
	require.Contains(t, eval[string](t, ctx, `document.querySelector('#graph').textContent`), "Night · 1")

	// In Japanese: the same durations, in Japanese.
	do(t, ctx, chromedp.Click(css(`a[data-lang="ja"]`)), chromedp.WaitVisible(css(`html[lang="ja"] #graph [data-state="Night"]`)))
	require.Regexp(t, japanese, eval[string](t, ctx, `[...document.querySelectorAll('dl.facts dt')].find(e => e.textContent === '所要時間').nextElementSibling.textContent`))
	do(t, ctx, chromedp.Click(css(`#graph [data-state="Job"]`)), chromedp.WaitVisible(css(`#state-details dl.facts`)))
	testwait.Until(t, func() bool {
		d := eval[string](t, ctx, `(([...document.querySelectorAll('#state-details dl.facts dt')].find(e => e.textContent === '所要時間') || {}).nextElementSibling || {}).textContent || ''`)
		return japanese.MatchString(d)
	}, 30*time.Second, 50*time.Millisecond, "the failed state's duration in Japanese")
	// One name for Tokyo's zone: the times and the header.
	require.True(t, eval[bool](t, ctx, `[...document.querySelectorAll('time')].every(e => e.textContent.endsWith(' UTC+9'))`))
	require.Contains(t, eval[string](t, ctx, `document.querySelector('[data-field="time-zone"]').textContent`), "(UTC+9)")
}
