package e2e

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// The console's speed in the real browser.
//
//	go test -run '^$' -bench Console -benchtime 5x ./e2e/

// BenchmarkConsoleHugeExecution loads the page of a 25,000-event
// execution: from the navigation until the graph is colored and the
// history's first page is in the table.
func BenchmarkConsoleHugeExecution(b *testing.B) {
	ctx := browser(b)
	s := startServer(b, filepath.Join(b.TempDir(), "bench.db"))
	c := s.client(b)
	sm := createMachine(b, c, "loop", `{"StartAt": "Loop", "States": {
		"Loop": {"Type": "Pass", "Next": "Check"},
		"Check": {"Type": "Choice", "Choices": [{"Variable": "$.stop", "IsPresent": true, "Next": "Done"}], "Default": "Loop"},
		"Done": {"Type": "Succeed"}}}`)
	arn := startExecution(b, c, sm, "huge", `{}`)
	require.Equal(b, "FAILED", string(waitDone(b, c, arn).Status))
	page := executionURL(s, arn)
	var loadMs float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		do(b, ctx, chromedp.Navigate("about:blank"))
		start := time.Now()
		do(b, ctx, chromedp.Navigate(page), chromedp.WaitVisible(css(`#graph [data-state="Check"][data-status="failed"]`)),
			chromedp.WaitVisible(css(`table tr[data-id="1000"]`)))
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/page")
		loadMs += eval[float64](b, ctx, `performance.getEntriesByType('navigation')[0].loadEventEnd`)
	}
	b.ReportMetric(loadMs/float64(b.N), "ms-load-event")
}

// hundredStates is a definition of 100 states: Choices, Catches, a
// Parallel and a Map among a chain of Tasks.
func hundredStates() string {
	var states []string
	add := func(name, body string) { states = append(states, fmt.Sprintf("%q: %s", name, body)) }
	n := 0
	for g := 0; g < 10; g++ {
		next := fmt.Sprintf("Route%d", g+1)
		if g == 9 {
			next = "Fan"
		}
		add(fmt.Sprintf("Route%d", g), fmt.Sprintf(`{"Type": "Choice", "Choices": [
			{"Variable": "$.kind", "StringEquals": "a", "Next": "Load%d"},
			{"Variable": "$.kind", "StringEquals": "b", "Next": "Skip%d"}], "Default": "Load%d"}`, g, g, g))
		add(fmt.Sprintf("Load%d", g), fmt.Sprintf(`{"Type": "Pass", "Next": "Transform%d"}`, g))
		add(fmt.Sprintf("Transform%d", g), fmt.Sprintf(`{"Type": "Pass", "Next": "Save%d"}`, g))
		add(fmt.Sprintf("Save%d", g), fmt.Sprintf(`{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
			"Parameters": {"FunctionName": "save"}, "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Recover%d"}], "Next": "Check%d"}`, g, g))
		add(fmt.Sprintf("Recover%d", g), fmt.Sprintf(`{"Type": "Pass", "Next": "Check%d"}`, g))
		add(fmt.Sprintf("Skip%d", g), fmt.Sprintf(`{"Type": "Pass", "Next": "Check%d"}`, g))
		add(fmt.Sprintf("Check%d", g), fmt.Sprintf(`{"Type": "Wait", "Seconds": 1, "Next": %q}`, next))
		n += 7
	}
	branch := func(prefix string, k int) string {
		var inner []string
		for i := 0; i < k; i++ {
			end := fmt.Sprintf(`"Next": "%s%d"`, prefix, i+1)
			if i == k-1 {
				end = `"End": true`
			}
			inner = append(inner, fmt.Sprintf(`"%s%d": {"Type": "Pass", %s}`, prefix, i, end))
		}
		return fmt.Sprintf(`{"StartAt": "%s0", "States": {%s}}`, prefix, strings.Join(inner, ","))
	}
	add("Fan", fmt.Sprintf(`{"Type": "Parallel", "Branches": [%s, %s, %s], "Next": "Each"}`, branch("A", 5), branch("B", 5), branch("C", 5)))
	add("Each", fmt.Sprintf(`{"Type": "Map", "ItemProcessor": %s, "Next": "Finish"}`, branch("M", 12)))
	add("Finish", `{"Type": "Succeed"}`)
	n += 1 + 15 + 1 + 12 + 1
	if n != 100 {
		panic(fmt.Sprintf("hundredStates has %d states", n))
	}
	return fmt.Sprintf(`{"StartAt": "Route0", "States": {%s}}`, strings.Join(states, ",\n"))
}

// BenchmarkConsoleGraphLayout100 lays out a 100-state definition in the
// browser, as its state machine's page does, and draws it.
func BenchmarkConsoleGraphLayout100(b *testing.B) {
	ctx := browser(b)
	s := startServer(b, filepath.Join(b.TempDir(), "bench.db"))
	c := s.client(b)
	sm := createMachine(b, c, "hundred", hundredStates())
	do(b, ctx, chromedp.Navigate(s.url()+"/state-machines/"+url.PathEscape(sm)), chromedp.WaitVisible(css(`#graph [data-state="Finish"]`)))
	require.Equal(b, 100, eval[int](b, ctx, `new Set([...document.querySelectorAll('#graph [data-state]')].map(n => n.dataset.state).filter(n => !n.startsWith('__'))).size`))
	var layoutMs, renderMs float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := eval[map[string]float64](b, ctx, `(() => {
			const g = JSON.parse(document.getElementById('graph-data').textContent);
			const t0 = performance.now();
			StepwiseGraph.layout(g);
			const t1 = performance.now();
			StepwiseGraph.render(document.getElementById('graph'), g, null);
			return {layout: t1 - t0, render: performance.now() - t1};
		})()`)
		layoutMs += m["layout"]
		renderMs += m["render"]
	}
	b.ReportMetric(layoutMs/float64(b.N), "ms-layout")
	b.ReportMetric(renderMs/float64(b.N), "ms-render")
}
