package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/internal/warnrule"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// warnObserver keeps the warnings the committed steps carried.
type warnObserver struct {
	mu       sync.Mutex
	warnings []Warning
}

func (o *warnObserver) StepCommitted(s *CommittedStep) {
	ws := StepWarnings(s)
	o.mu.Lock()
	o.warnings = append(o.warnings, ws...)
	o.mu.Unlock()
}
func (o *warnObserver) BatchCommitted([]*store.Step, time.Duration, error) {}
func (o *warnObserver) Resumed(string, time.Duration)                      {}

// An execution keeps the warning rules its state machine's tags had at
// its start with its policies; a Task whose result the rule judges a
// warning succeeds as ever (the history is AWS's), and both the history
// and the committed steps say which state ended with warning.
func TestWarningsOfAnExecution(t *testing.T) {
	t.Parallel()
	obs := &warnObserver{}
	b := &testBundle{path: t.TempDir() + "/stepwise.db", tasks: newFakeTasks()}
	b.config = func(c *Config) { c.Observer = obs }
	answers := map[string]string{
		"Warn": `{"rc": 5}`, "Normal": `{"Payload": {"rc": 0}}`, "Abnormal": `{"rc": 12}`,
		"Expr": `{"status": "partial"}`, "NoRule": `{"rc": 3}`, "Item": `{"rc": 2}`,
	}
	b.tasks.auto = func(tk *task.Task) *task.Result {
		v, err := jsonvalue.ParseString(answers[tk.Request.StateName])
		require.NoError(t, err)
		return &task.Result{Output: v}
	}
	b.open(t, 0)
	task := func(name string) string {
		return `"` + name + `": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}`
	}
	sm, m := b.machine(t, "net", `{"StartAt": "All", "States": {"All": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "Warn", "States": {`+task("Warn")+`}},
		{"StartAt": "Normal", "States": {`+task("Normal")+`}},
		{"StartAt": "Abnormal", "States": {`+task("Abnormal")+`}},
		{"StartAt": "Expr", "States": {`+task("Expr")+`}},
		{"StartAt": "NoRule", "States": {`+task("NoRule")+`}},
		{"StartAt": "Each", "States": {"Each": {"Type": "Map", "End": true, "ItemsPath": "$.items",
			"ItemProcessor": {"StartAt": "Item", "States": {`+task("Item")+`}}}}}]}}}`)
	rules, err := warnrule.FromTags(map[string]string{
		"stepwise:warning/Warn": "rc:1-8", "stepwise:warning/Normal": "rc:1-8", "stepwise:warning/Abnormal": "rc:1-8",
		"stepwise:warning/Expr": `jsonata:status = "partial"`, "stepwise:warning/Item": "rc:$.rc:2",
	})
	require.NoError(t, err)
	policies, err := interp.PoliciesFromTags(map[string]string{"stepwise:policy/Each": "finish-running"})
	require.NoError(t, err)
	arn := "arn:aws:states:" + region + ":" + account + ":execution:net:e1"
	_, err = b.engine.StartExecution(context.Background(), &start.Params{
		StateMachine: sm, Machine: m, Name: "e1", Input: `{"items": [1, 2]}`, ExecutionArn: arn, Policies: policies, Warnings: rules,
	})
	require.NoError(t, err)
	row := b.waitStatus(t, arn, history.StatusSucceeded)
	for _, typ := range b.history(t, arn) {
		require.NotContains(t, typ, "Warn", "the history stays AWS's")
	}

	// The row keeps the policies, readable as ever, and the rules.
	ps, err := interp.ParsePolicies(row.Policies)
	require.NoError(t, err)
	require.Equal(t, policies, ps)

	got, err := Warnings(context.Background(), b.drv.Executor(), row)
	require.NoError(t, err)
	byState := map[string][]Warning{}
	for _, w := range got {
		require.Positive(t, w.EventID)
		byState[w.State] = append(byState[w.State], w)
	}
	require.Len(t, got, 4, "%+v", got)
	require.Equal(t, int64(5), byState["Warn"][0].RC)
	require.True(t, byState["Warn"][0].HasRC)
	require.Len(t, byState["Expr"], 1)
	require.False(t, byState["Expr"][0].HasRC)
	require.Len(t, byState["Item"], 2, "each iteration's Task is judged")
	require.Equal(t, int64(2), byState["Item"][0].RC)

	// The observers saw the same warnings as the steps committed (told
	// of just after the commit).
	testwait.Until(t, func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return len(obs.warnings) >= len(got)
	}, 30*time.Second, 5*time.Millisecond)
	obs.mu.Lock()
	seen := append([]Warning(nil), obs.warnings...)
	obs.mu.Unlock()
	require.ElementsMatch(t, got, seen)

	// The engine restarts with the execution's row as it is.
	b.close()
	b.open(t, 0)
	again, err := b.drv.Executor().ExecutionGet(context.Background(), arn)
	require.NoError(t, err)
	got2, err := Warnings(context.Background(), b.drv.Executor(), again)
	require.NoError(t, err)
	require.Equal(t, got, got2)
}

// An execution started without rules has none, and its row's policies
// are what they were.
func TestNoWarningRules(t *testing.T) {
	t.Parallel()
	b := setup(t, 0)
	b.tasks.auto = func(*task.Task) *task.Result { return &task.Result{Output: jsonvalue.NewObject(0)} }
	sm, m := b.machine(t, "plain", `{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`)
	row := b.start(t, sm, m, "e1", `{}`)
	row = b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.Empty(t, row.Policies)
	got, err := Warnings(context.Background(), b.drv.Executor(), row)
	require.NoError(t, err)
	require.Empty(t, got)
}
