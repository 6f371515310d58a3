package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
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

// A deploy runs code from the server's folders: one from another
// machine is refused before its body is read.
func TestDeployTakenFromThisMachineOnly(t *testing.T) {
	h := &deployHandler{}
	r := httptest.NewRequest(http.MethodPost, deployPath, strings.NewReader(`{}`))
	r.RemoteAddr = "192.0.2.7:50000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusForbidden, w.Code)
	require.Contains(t, w.Body.String(), "deploys are taken from this machine only")

	r = httptest.NewRequest(http.MethodPost, deployPath, strings.NewReader(`not json`))
	r.RemoteAddr = "127.0.0.1:50000"
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, w.Body.String(), "a deploy request is JSON")
}
