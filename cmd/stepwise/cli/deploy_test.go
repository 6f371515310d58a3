package cli

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDefaultStackName(t *testing.T) {
	for path, want := range map[string]string{
		"/apps/order-flow/template.yaml": "order-flow",
		"/apps/order_flow/template.json": "order-flow",
		"/apps/x/nightly.yaml":           "nightly",
		"/apps/2026/template.yml":        "stepwise",
		"/apps/x/my app.v2.json":         "my-app-v2",
	} {
		require.Equal(t, want, defaultStackName(path), path)
	}
}

func TestParseParameterOverrides(t *testing.T) {
	got, err := parseParameterOverrides([]string{"Stage=dev", "ParameterKey=Table,ParameterValue=a=b", "Empty="})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"Stage": "dev", "Table": "a=b", "Empty": ""}, got)
	for _, bad := range []string{"Stage", "=x", "ParameterKey=K"} {
		_, err := parseParameterOverrides([]string{bad})
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), bad)
	}
}

// --adopt is a deploy's: with --delete it is refused before the server
// is asked.
func TestDeployAdoptIsNotForADelete(t *testing.T) {
	t.Parallel()
	c := &deployCommand{adopt: true, delete: true, endpoint: "http://127.0.0.1:1"}
	err := c.run(context.Background(), "template.yaml")
	var usage *UsageError
	require.ErrorAs(t, err, &usage)
	require.EqualError(t, err, "--adopt takes over resources in a deploy; --delete deletes what the stack has")
}
