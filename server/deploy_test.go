package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/deploy"
	"stepwise/integration/lambda"
)

// A deploy runs code from the server's folders: one from another
// machine is refused before its body is read.
func TestDeployTakenFromThisMachineOnly(t *testing.T) {
	h := &deployHandler{}
	r := httptest.NewRequest(http.MethodPost, DeployPath, strings.NewReader(`{}`))
	r.RemoteAddr = "192.0.2.7:50000"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusForbidden, w.Code)
	require.Contains(t, w.Body.String(), "deploys are taken from this machine only")

	r = httptest.NewRequest(http.MethodPost, DeployPath, strings.NewReader(`not json`))
	r.RemoteAddr = "127.0.0.1:50000"
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, w.Body.String(), "a deploy request is JSON")
}

// A template's function does not replace, nor its deletion remove, one
// given by serve --function.
func TestTemplateFunctionsLeaveGivenOnes(t *testing.T) {
	local, err := lambda.NewLocal(map[string]string{"price": "cat"}, 0, nil)
	require.NoError(t, err)
	t.Cleanup(local.Close)
	fns := newDeployer(&config.Serve{}, nil, nil, nil, local, nil).Functions
	dir := t.TempDir()
	err = fns.PutFunction(context.Background(), &deploy.Function{Name: "price", Runtime: "python3.12", Handler: "app.handler", Code: dir})
	require.ErrorContains(t, err, "function price is given by serve --function")
	require.NoError(t, fns.DeleteFunction(context.Background(), "price"))
	require.NotNil(t, local.Lookup("price"))
	require.Equal(t, "cat", local.Lookup("price").Command)

	// A given one is not there to the deploy's claim: PutFunction says why.
	there, err := fns.HasFunction(context.Background(), "price")
	require.NoError(t, err)
	require.False(t, there)

	require.NoError(t, fns.PutFunction(context.Background(), &deploy.Function{Name: "other", Runtime: "python3.12", Handler: "app.handler", Code: dir}))
	require.NotNil(t, local.Lookup("other"))
	there, err = fns.HasFunction(context.Background(), "other")
	require.NoError(t, err)
	require.True(t, there)
	require.NoError(t, fns.DeleteFunction(context.Background(), "other"))
	require.Nil(t, local.Lookup("other"))
	there, err = fns.HasFunction(context.Background(), "other")
	require.NoError(t, err)
	require.False(t, there)
	err = fns.PutFunction(context.Background(), &deploy.Function{Name: "j", Runtime: "java21", Handler: "a.B", Code: dir})
	require.ErrorContains(t, err, "runtime java21 does not run here")
}
