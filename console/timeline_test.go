package console_test

import (
	"context"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/service"
)

// An execution's page draws its timeline: a row per state entry, a
// Parallel's branches under it, a retried task's failed try as a bar of
// its own, a Wait shaded, and the critical path (the branch that ended
// last, not the quick one) highlighted.
func TestTimeline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	act, err := b.svc.CreateActivity(ctx, &service.CreateActivityInput{Name: "extract"})
	require.NoError(t, err)
	sm := b.create(t, "nightly", `{"StartAt":"Par","States":{
		"Par":{"Type":"Parallel","Next":"Pause","Branches":[
			{"StartAt":"Quick","States":{"Quick":{"Type":"Pass","End":true}}},
			{"StartAt":"Extract","States":{"Extract":{"Type":"Task","Resource":"`+act.ActivityArn+`","End":true,
				"Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":1}]}}}]},
		"Pause":{"Type":"Wait","Seconds":0,"End":true}}}`)
	arn := b.start(t, sm, "run", "{}")
	task, err := b.svc.GetActivityTask(ctx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn})
	require.NoError(t, err)
	_, err = b.svc.SendTaskFailure(ctx, &service.SendTaskFailureInput{TaskToken: *task.TaskToken, Error: ptr("Flaky")})
	require.NoError(t, err)
	task, err = b.svc.GetActivityTask(ctx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn})
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond)
	_, err = b.svc.SendTaskSuccess(ctx, &service.SendTaskSuccessInput{TaskToken: *task.TaskToken, Output: "{}"})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", b.wait(t, arn))

	status, page := b.get(t, "/executions/"+url.PathEscape(arn))
	require.Equal(t, 200, status)
	require.Contains(t, page, `<section id="timeline-panel">`)
	row := func(state string) string {
		m := regexp.MustCompile(`<g class="tl-row[^"]*" data-state="` + state + `">.*?</g>`).FindString(page)
		require.NotEmpty(t, m, "row of %s", state)
		return m
	}
	require.Contains(t, row("Extract"), `class="seg seg-retry"`)
	require.Contains(t, row("Extract"), `<title>Extract · Earlier try 1 · Flaky</title>`)
	require.Contains(t, row("Pause"), `class="seg seg-wait"`)
	require.Contains(t, row("Par"), `seg-container`)
	require.Contains(t, row("Extract"), `<g class="tl-row critical"`)
	require.Contains(t, row("Par"), `<g class="tl-row critical"`)
	require.Contains(t, row("Pause"), `<g class="tl-row critical"`)
	require.Contains(t, row("Quick"), `<g class="tl-row" `)
	require.Contains(t, page, `Critical path: Par → Extract → Pause`)
	require.Regexp(t, `<text class="tl-label" x="16" y="\d+">Extract</text>`, row("Extract"), "indented under its Parallel")
}
