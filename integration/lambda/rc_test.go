package lambda_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/internal/warnrule"
	"stepwise/jsonvalue"
)

// A local shell job given as rc:CODES:COMMAND: its exit code is its
// return code, in the result where a state's rc rule reads it; an exit
// of 0 or one of CODES succeeds, any other fails the invoke as ever.
func TestLocalShellJobReturnCode(t *testing.T) {
	t.Parallel()
	reg := localRegistry(t, map[string]string{
		"warn":  `rc:1-8:echo '{"rows": 12}'; exit 4`,
		"ok":    `rc:1-8:echo done`,
		"abend": `rc:1-8:echo oops >&2; exit 9`,
		"plain": `echo '{"rows": 12}'; exit 4`,
	}, 0)
	rule, err := warnrule.Parse("rc:1-8")
	require.NoError(t, err)

	res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "warn"}`)
	require.Nil(t, res.Failure)
	require.JSONEq(t, `{"rc": 4, "output": {"rows": 12}}`, jsonvalue.String(get(t, res.Output, "Payload")))
	j := rule.Judge(res.Output)
	require.True(t, j.Warning, "the state's rule reads $.Payload.rc")
	require.Equal(t, int64(4), j.RC)

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "ok"}`)
	require.Nil(t, res.Failure)
	require.JSONEq(t, `{"rc": 0, "stdout": "done\n"}`, jsonvalue.String(get(t, res.Output, "Payload")))
	require.False(t, rule.Judge(res.Output).Warning)

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "abend"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "Runtime.ExitError", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "exit status 9")

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "plain"}`)
	require.NotNil(t, res.Failure, "without rc:, a non-zero exit is a function error")
	require.Equal(t, "Runtime.ExitError", res.Failure.Name)

	_, err = integration.New(integration.Config{Functions: map[string]string{"a": "rc:9-1:true"}})
	require.ErrorContains(t, err, "local function a: rc:9-1: the range 9-1 ends before it starts")
	_, err = integration.New(integration.Config{Functions: map[string]string{"a": "rc:1-8: "}})
	require.ErrorContains(t, err, `local function a: "rc:1-8: " has no command: write rc:CODES:COMMAND`)
	_, err = integration.New(integration.Config{Functions: map[string]string{"a": "rc:x:true"}})
	require.ErrorContains(t, err, `local function a: rc:x: "x" is not a return code`)
}
