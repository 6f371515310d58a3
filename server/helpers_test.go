package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/engine"
	"stepwise/store"
)

// apiParts is the configuration of the tests' servers, and the engine and
// store of the last one api made.
type apiParts struct {
	cfg config.Serve
	eng *engine.Engine
	drv store.Driver
}

// newAPIParts starts from serve's defaults, with the hosts of the tests'
// requests (httptest.NewRequest's, guardHost), which a server without
// credentials answers only when given them, a virtual clock that fires
// every timer at once (a wait-time scale of 0) and no execution logs.
func newAPIParts(t *testing.T) *apiParts {
	t.Helper()
	p := &apiParts{cfg: config.DefaultServe()}
	p.cfg.AllowedHosts = []string{"example.com", "stepwise.test"}
	p.cfg.WaitTimeScale = 0
	p.cfg.ExecutionLogs.To = config.ExecutionLogsOff
	return p
}

// apiAuth are the access keys (id → secret) of a server with
// credentials.
type apiAuth struct{ keys map[string]string }

// new assembles a server of the parts' configuration on a new SQLite
// file, with the metrics when met is set and the credentials of auth
// when set; it is closed when the test ends.
func (p *apiParts) new(t *testing.T, met bool, auth *apiAuth, opts ...Option) (*Server, error) {
	t.Helper()
	cfg := p.cfg
	dir := t.TempDir()
	cfg.DB = filepath.Join(dir, "stepwise.db")
	if auth != nil {
		cfg.Credentials = credentialsFile(t, dir, auth.keys)
	}
	s, err := New(cfg, append([]Option{WithMetrics(met)}, opts...)...)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s, nil
}

// api is new, started and its executions resumed.
func (p *apiParts) api(t *testing.T, met bool, auth *apiAuth, opts ...Option) *Server {
	t.Helper()
	s, err := p.new(t, met, auth, opts...)
	require.NoError(t, err)
	require.NoError(t, s.Start(context.Background()))
	<-s.Engine().Resumed()
	p.eng, p.drv = s.Engine(), s.Store()
	return s
}

// credentialsFile writes a shared-credentials file of keys into dir.
func credentialsFile(t *testing.T, dir string, keys map[string]string) string {
	t.Helper()
	var b strings.Builder
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range keys {
			if !yield(id) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "[%s]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n", id, id, keys[id])
	}
	path := filepath.Join(dir, "credentials")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}
