package service_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/internal/warnrule"
	"stepwise/service"
	"stepwise/store"
)

// A warning tag must hold a rule and name a Task state of the
// definition, at CreateStateMachine, TagResource and UpdateStateMachine;
// a start takes the rules its state machine's tags set then.
func TestWarningTags(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const def = `{"StartAt": "Job", "States": {
		"Job": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "f"}, "Next": "Each"},
		"Each": {"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "Inner", "States": {
			"Inner": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "f"}, "End": true}}}}}}`
	tag := func(k, v string) service.Tag { return service.Tag{Key: ptr("stepwise:warning/" + k), Value: ptr(v)} }
	create := func(name string, tags ...service.Tag) error {
		_, err := b.svc.CreateStateMachine(b.ctx, &service.CreateStateMachineInput{Name: name, Definition: def, RoleArn: roleArn, Tags: tags})
		return err
	}
	requireAPIError(t, create("a", tag("Job", "rc:9-1")), "ValidationException",
		`Invalid warning rule: the tag "stepwise:warning/Job": the rule "rc:9-1": the range 9-1 ends before it starts`)
	requireAPIError(t, create("b", tag("Job", "exit:1")), "ValidationException",
		`Invalid warning rule: the tag "stepwise:warning/Job": the rule "exit:1" is neither rc:<codes> (rc:1-8), rc:<path>:<codes> (rc:$.Payload.code:1-8) nor jsonata:<expression>`)
	err := create("c", tag("Job", "jsonata:("))
	requireAPIError(t, err, "ValidationException", "")
	require.ErrorContains(t, err, `Invalid warning rule: the tag "stepwise:warning/Job": the jsonata rule's expression: `)
	requireAPIError(t, create("d", tag("Nope", "rc:1-8")), "ValidationException",
		`Invalid warning rule: the tag "stepwise:warning/Nope" names the state "Nope", which the definition does not have`)
	requireAPIError(t, create("e", tag("Each", "rc:1-8")), "ValidationException",
		`Invalid warning rule: the tag "stepwise:warning/Each" names the state "Each", a Map state: a warning rule judges a Task's result`)
	require.NoError(t, create("ok", tag("Job", "rc:1-8"), tag("Inner", "rc:$.Payload.code:1-8")))
	sm := smPrefix + "ok"

	_, err = b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: sm, Tags: []service.Tag{tag("Job", "rc:")}})
	requireAPIError(t, err, "ValidationException", `Invalid warning rule: the tag "stepwise:warning/Job": the rule "rc:" has no codes: write them as 1-8 or 1-8,20`)
	_, err = b.svc.TagResource(b.ctx, &service.TagResourceInput{ResourceArn: sm, Tags: []service.Tag{tag("Gone", "rc:1")}})
	requireAPIError(t, err, "ValidationException", `Invalid warning rule: the tag "stepwise:warning/Gone" names the state "Gone", which the definition does not have`)

	smaller := `{"StartAt": "Other", "States": {"Other": {"Type": "Pass", "End": true}}}`
	_, err = b.svc.UpdateStateMachine(b.ctx, &service.UpdateStateMachineInput{StateMachineArn: sm, Definition: &smaller})
	requireAPIError(t, err, "ValidationException", `Invalid warning rule: the tag "stepwise:warning/Inner" names the state "Inner", which the definition does not have`)

	prev := b.engine.StartExecutionFunc
	var seen []warnrule.Rules
	b.engine.StartExecutionFunc = func(ctx context.Context, p *start.Params) (*store.Execution, error) {
		seen = append(seen, p.Warnings)
		return prev(ctx, p)
	}
	out, err := b.svc.StartExecution(b.ctx, &service.StartExecutionInput{StateMachineArn: sm})
	require.NoError(t, err)
	require.Len(t, seen, 1)
	require.Equal(t, "rc:1-8", seen[0]["Job"].String())
	require.Equal(t, "rc:$.Payload.code:1-8", seen[0]["Inner"].String())

	// The fake engine records no rules: none is judged.
	ws, err := b.svc.ExecutionWarnings(b.ctx, out.ExecutionArn)
	require.NoError(t, err)
	require.Empty(t, ws)
	_, err = b.svc.ExecutionWarnings(b.ctx, out.ExecutionArn+"x")
	requireAPIError(t, err, "ExecutionDoesNotExist", "")
}
