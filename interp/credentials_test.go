package interp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
)

// A Task's Credentials name the role to assume: literally, by a path into
// the task's input, or by a JSONata expression. The role is recorded in
// TaskScheduled's taskCredentials and handed to the task runner.
func TestTaskCredentialsRole(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, creds, lang, want string
	}{
		{"Literal", `{"RoleArn": "arn:aws:iam::111111111111:role/fixed"}`, "JSONPath", "arn:aws:iam::111111111111:role/fixed"},
		{"Path", `{"RoleArn.$": "$.role"}`, "JSONPath", "arn:aws:iam::222222222222:role/from-input"},
		{"Intrinsic", `{"RoleArn.$": "States.Format('arn:aws:iam::{}:role/r', $.account)"}`, "JSONPath", "arn:aws:iam::333333333333:role/r"},
		{"JSONataLiteral", `{"RoleArn": "arn:aws:iam::111111111111:role/fixed"}`, "JSONata", "arn:aws:iam::111111111111:role/fixed"},
		{"JSONataExpr", `{"RoleArn": "{% $states.input.role %}"}`, "JSONata", "arn:aws:iam::222222222222:role/from-input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, `{"QueryLanguage": "`+tt.lang+`", "StartAt": "T", "States": {"T": {`+taskState+`, "Credentials": `+tt.creds+`, "End": true}}}`,
				`{"role": "arn:aws:iam::222222222222:role/from-input", "account": "333333333333"}`, interp.Options{})
			tasks := b.only(t, interp.RunTask)
			require.Len(t, tasks, 1)
			require.Equal(t, tt.want, tasks[0].Task.RoleArn)
			var scheduled *history.TaskScheduledEventDetails
			for _, e := range b.events {
				if e.TaskScheduledEventDetails != nil {
					scheduled = e.TaskScheduledEventDetails
				}
			}
			require.NotNil(t, scheduled)
			require.Equal(t, &history.TaskCredentials{RoleArn: tt.want}, scheduled.TaskCredentials)
		})
	}
}

func TestTaskWithoutCredentialsRecordsNone(t *testing.T) {
	t.Parallel()
	b := setup(t, `{"StartAt": "T", "States": {"T": {`+taskState+`, "End": true}}}`, `{}`, interp.Options{})
	require.Empty(t, b.only(t, interp.RunTask)[0].Task.RoleArn)
	for _, e := range b.events {
		if e.TaskScheduledEventDetails != nil {
			require.Nil(t, e.TaskScheduledEventDetails.TaskCredentials)
		}
	}
}

// A role that does not resolve to a string fails the state, before the
// task is scheduled.
func TestTaskCredentialsThatDoNotResolveFail(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, creds, lang, error, cause string
	}{
		{"MissingPath", `{"RoleArn.$": "$.nope"}`, "JSONPath", failure.Runtime,
			`The JSONPath '$.nope' specified for the field 'RoleArn.$' could not be found in the input '{"n":1}'`},
		{"NotAString", `{"RoleArn.$": "$.n"}`, "JSONPath", failure.Runtime,
			`The value for the field 'RoleArn' must be a string, but was number: 1`},
		{"JSONataNotAString", `{"RoleArn": "{% $states.input.n %}"}`, "JSONata", failure.QueryEvaluationError,
			`The JSONata expression '$states.input.n' specified for the field 'RoleArn' returned an unexpected result type. Expected 'string', but was 'number' for value: 1`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, `{"QueryLanguage": "`+tt.lang+`", "StartAt": "T", "States": {"T": {`+taskState+`, "Credentials": `+tt.creds+`, "End": true}}}`,
				`{"n": 1}`, interp.Options{})
			require.Empty(t, b.only(t, interp.RunTask))
			require.Equal(t, history.StatusFailed, b.x.Status)
			require.Equal(t, tt.error, b.x.Failure.Name)
			require.Equal(t, "An error occurred while executing the state 'T' (entered at the event id #2). "+tt.cause, b.x.Failure.Cause)
			require.NotContains(t, b.types(), string(history.EventTaskScheduled))
		})
	}
}
