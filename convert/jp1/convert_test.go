package jp1

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func convertFile(t *testing.T, path string) *App {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	units, err := Parse(src)
	require.NoError(t, err)
	app, err := Convert(units, Options{Stack: "batch"})
	require.NoError(t, err)
	return app
}

func definition(t *testing.T, app *App, name string) map[string]any {
	t.Helper()
	var def map[string]any
	require.NoError(t, json.Unmarshal(app.Files["statemachine/"+name+".asl.json"], &def), name)
	return def
}

func TestConvertNet(t *testing.T) {
	t.Parallel()
	app := convertFile(t, "testdata/nightly.ajs")
	require.Equal(t, []string{"nightly-SUB", "nightly", "monthly"}, app.Nets)
	def := definition(t, app, "nightly")
	states := def["States"].(map[string]any)

	// The run's parameters first: an input without env gets an empty one.
	require.Equal(t, "Run parameters", def["StartAt"])
	choice := states["Run parameters"].(map[string]any)
	require.Equal(t, "Parts", choice["Default"])
	require.Equal(t, []any{map[string]any{"Variable": "$.env", "IsPresent": false, "Next": "No run parameters"}}, choice["Choices"])
	require.Equal(t, map[string]any{"Type": "Pass", "Result": map[string]any{}, "ResultPath": "$.env", "Next": "Parts"}, states["No run parameters"])

	// Two parts: W shares no relation with the rest.
	parts := states["Parts"].(map[string]any)["Branches"].([]any)
	require.Len(t, parts, 2)
	main := parts[0].(map[string]any)
	require.Equal(t, "A", main["StartAt"])
	st := main["States"].(map[string]any)
	// The diamond: A, then B and C side by side, then D, then the nested net.
	require.Equal(t, "Part 1 Stage 2", st["A"].(map[string]any)["Next"])
	stage := st["Part 1 Stage 2"].(map[string]any)
	require.Equal(t, "Parallel", stage["Type"])
	require.Equal(t, "D", stage["Next"])
	branches := stage["Branches"].([]any)
	require.Len(t, branches, 2)
	require.Equal(t, "B", branches[0].(map[string]any)["StartAt"])
	require.Equal(t, "SUB", st["D"].(map[string]any)["Next"])
	sub := st["SUB"].(map[string]any)
	require.Equal(t, "arn:aws:states:::states:startExecution.sync:2", sub["Resource"])
	require.Equal(t, "${NetNightlySUBArn}", sub["Parameters"].(map[string]any)["StateMachineArn"])
	require.Equal(t, map[string]any{"env.$": "$.env", "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$": "$$.Execution.Id"}, sub["Parameters"].(map[string]any)["Input"])
	require.Equal(t, true, sub["End"])

	// B's command line, work path and environment.
	b := branches[0].(map[string]any)["States"].(map[string]any)["B"].(map[string]any)
	require.Equal(t, map[string]any{"unit": "/batch/nightly/B", "command": "/bin/echo b", "runEnv.$": "$.env", "workdir": "/tmp", "env": map[string]any{"STAGE": "b"}},
		b["Parameters"].(map[string]any)["Payload"])
	// C's recovery: R in its Catch, then the branch fails.
	cStates := branches[1].(map[string]any)["States"].(map[string]any)
	c := cStates["C"].(map[string]any)
	require.Equal(t, float64(1), c["Parameters"].(map[string]any)["Payload"].(map[string]any)["abnormalThreshold"])
	catch := c["Catch"].([]any)[0].(map[string]any)
	require.Equal(t, "R (recovery of C)", catch["Next"])
	require.Equal(t, "echo recover", cStates["R (recovery of C)"].(map[string]any)["Parameters"].(map[string]any)["Payload"].(map[string]any)["command"])
	require.Equal(t, "C failed", cStates["R (recovery of C)"].(map[string]any)["Next"])
	require.Equal(t, "Fail", cStates["C failed"].(map[string]any)["Type"])

	// The file-watch job is a Pass.
	w := parts[1].(map[string]any)["States"].(map[string]any)["W"].(map[string]any)
	require.Equal(t, "Pass", w["Type"])

	// The nested net.
	subDef := definition(t, app, "nightly-SUB")
	require.Equal(t, "Run parameters", subDef["StartAt"])
	require.Equal(t, "S1", subDef["States"].(map[string]any)["Run parameters"].(map[string]any)["Default"])

	tpl := string(app.Files["template.yaml"])
	// Policies on the Parallel states; no tag for the exclusive schedules.
	require.Contains(t, tpl, `"stepwise:policy/Part 1 Stage 2": "finish-running"`)
	require.Contains(t, tpl, `"stepwise:policy/Parts": "finish-running"`)
	require.NotContains(t, tpl, "exclusive")
	require.Contains(t, tpl, `NetNightlySUBArn: {"Ref": "NetNightlySUB"}`)
}

func countOf(s, sub string) int {
	n := 0
	for i := 0; ; {
		j := indexFrom(s, sub, i)
		if j < 0 {
			return n
		}
		n++
		i = j + len(sub)
	}
}

func indexFrom(s, sub string, i int) int {
	for ; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestConvertSchedules(t *testing.T) {
	t.Parallel()
	app := convertFile(t, "testdata/nightly.ajs")
	tpl := string(app.Files["template.yaml"])
	require.Contains(t, tpl, `ScheduleExpression: "cron(30 2 * * ? *)"`)
	require.Contains(t, tpl, `ScheduleExpressionTimezone: "Asia/Tokyo"`)
	require.Contains(t, tpl, `ScheduleExpression: "cron(0 23 L * ? *)"`)
	require.Contains(t, tpl, `- {Key: "stepwise:calendar/nightly-1", Value: "batch:next"}`)
	require.Equal(t, "# The calendar of the JP1/AJS3 job group /batch: its closed days (cl=).\nweekend sun sat\n2026-01-01\n2026-11-23\n",
		string(app.Files["calendars/batch.txt"]))
}

func TestConvertReport(t *testing.T) {
	t.Parallel()
	app := convertFile(t, "testdata/nightly.ajs")
	report := string(app.Files["report.md"])
	for _, line := range []string{
		"| /batch/nightly/C | un | `\"batch\"` | not carried over |",
		"| /batch/nightly | shd | `3` | a shifted slot moves to the nearest business day, however far |",
		"| /batch/nightly/W | ty | `flwj` |",
		"| /batch/nightly/W | flwf | `\"/data/in.csv\"` | not carried over |",
		"| /batch/nightly | ejn | `monthly` | an exclusive schedule (the net does not run on the days monthly runs) is not carried over",
		"| /batch/monthly | ejn | `nightly` | an exclusive schedule",
		"| /batch/monthly | schedule rule 2 | `sd=*3 st= cy=(1,m)` | a start date counted from the base day",
	} {
		require.Contains(t, report, line)
	}
}

func TestCronOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r         map[string]string
		expr, why string
	}{
		{map[string]string{"sd": "2026/12/01", "st": "09:15"}, "at(2026-12-01T09:15:00)", ""},
		{map[string]string{"sd": "2026/11/30", "st": "06:00", "cy": "(1,w)"}, "cron(0 6 ? * MON *)", ""},
		{map[string]string{"sd": "mo", "cy": "(1,w)"}, "cron(0 0 ? * MON *)", ""},
		{map[string]string{"sd": "fr:b", "cy": "(1,m)"}, "cron(0 0 ? * FRIL *)", ""},
		{map[string]string{"sd": "+tu:2", "cy": "(1,m)"}, "cron(0 0 ? * TUE#2 *)", ""},
		{map[string]string{"sd": "4/1", "st": "05:00", "cy": "(1,y)"}, "cron(0 5 1 4 ? *)", ""},
		{map[string]string{"sd": "15", "cy": "(1,m)"}, "cron(0 0 15 * ? *)", ""},
		{map[string]string{"sd": "en", "st": "26:00", "cy": "(1,d)"}, "cron(0 2 * * ? *)", ""},
		{map[string]string{"sd": "en", "cy": "(2,d)"}, "", "a cycle of every 2 days is not a cron expression"},
		{map[string]string{"sd": "en", "st": "+01:00", "cy": "(1,d)"}, "", "a start time relative to the registration is not a schedule"},
		{map[string]string{"sd": "@2", "cy": "(1,m)"}, "", "a start date counted from the base day (+, * open days, @ closed days) is not carried over"},
	} {
		expr, why := cronOf(tc.r)
		require.Equal(t, tc.expr, expr, tc.r)
		require.Equal(t, tc.why, why, tc.r)
	}
}

func TestConvertErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{"unit=n;{ty=n;ar=(f=A,t=B);unit=A;{ty=j;te=a;}}", "line 1, column 14: ar=(f=A,t=B) names B, which is not a unit of /n"},
		{"unit=n;{ty=n;ar=(f=A,t=B);ar=(f=B,t=A);unit=A;{ty=j;te=a;}unit=B;{ty=j;te=b;}}", "net /n: its relations make a cycle through A, B"},
		{"unit=n;{ty=n;ar=f=A;}", "line 1, column 14: ar=f=A: write ar=(f=FROM,t=TO[,seq|con])"},
		{"unit=g;{ty=g;}", "no job net (ty=n) in the file"},
		{"unit=n;{ty=n;unit=A;{te=a;}}", "line 1, column 14: unit /n/A has no ty="},
	} {
		units, err := Parse([]byte(tc.src))
		require.NoError(t, err, tc.src)
		_, err = Convert(units, Options{})
		require.EqualError(t, err, tc.want, tc.src)
	}
}
