package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"stepwise/store"
	"stepwise/store/sqlitestore"
)

// TestScheduleRoutes checks that the Scheduler API is served on the
// API's port, before the console's "GET /", and that a server with
// credentials wants its requests signed for "scheduler".
func TestScheduleRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	parts := newAPIParts(t)
	cfg := parts.cfg

	get := func(h http.Handler, path string, sign string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if sign != "" {
			sum := sha256.Sum256(nil)
			creds := aws.Credentials{AccessKeyID: "AKIDROUTES", SecretAccessKey: "secret"}
			require.NoError(t, v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), sign, cfg.Region, time.Now()))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}

	open := parts.api(t, false, nil)
	rec := get(open.Handler(), "/schedules", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"Schedules":[]}`, rec.Body.String())
	rec = get(open.Handler(), "/schedule-groups/default", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = get(open.Handler(), "/", "")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Header().Get("Content-Type"), "text/html")

	auth := &apiAuth{keys: map[string]string{"AKIDROUTES": "secret"}}
	closed := parts.api(t, false, auth)
	rec = get(closed.Handler(), "/schedules", "")
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "MissingAuthenticationTokenException", rec.Header().Get("X-Amzn-ErrorType"))
	rec = get(closed.Handler(), "/schedules", "states")
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	rec = get(closed.Handler(), "/schedules", "scheduler")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestLastFired: the floor of a kept clock is the latest slot any
// schedule fired, across pages of schedules.
func TestLastFired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "stepwise.db"), sqlitestore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, drv.Close()) })
	exec := drv.Executor()
	last, err := lastFired(ctx, exec)
	require.NoError(t, err)
	require.True(t, last.IsZero())

	base := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	latest := base.Add(90 * time.Minute)
	for i := range 1200 {
		s := &store.Schedule{GroupName: "default", Name: fmt.Sprintf("s%04d", i), State: "ENABLED", Body: `{}`,
			ClientToken: "t", CreatedAt: base, UpdatedAt: base}
		require.NoError(t, exec.ScheduleInsert(ctx, s))
		switch i {
		case 3:
			require.NoError(t, exec.ScheduleFired(ctx, "default", s.Name, base.Add(time.Minute)))
		case 1100: // on the third page
			require.NoError(t, exec.ScheduleFired(ctx, "default", s.Name, latest))
		}
	}
	last, err = lastFired(ctx, exec)
	require.NoError(t, err)
	require.Equal(t, latest, last)
}
