package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCalendarFlag checks that serve's --calendar files reach the
// Scheduler API: a group's tag may name them, and no other.
func TestCalendarFlag(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "jp.txt")
	require.NoError(t, os.WriteFile(path, []byte("2026-11-23 # Labor Thanksgiving Day\n"), 0o600))
	parts := newAPIParts(t)
	parts.cfg.Calendars = map[string]string{"jp": path}
	api := parts.api(t, false, nil)
	tag := func(value string) *httptest.ResponseRecorder {
		body := `{"Tags":[{"Key":"stepwise:calendar","Value":"` + value + `"}]}`
		req := httptest.NewRequest(http.MethodPost, "/tags/arn:aws:scheduler:"+parts.cfg.Region+":"+parts.cfg.Account+":schedule-group/default", strings.NewReader(body))
		rec := httptest.NewRecorder()
		api.Handler().ServeHTTP(rec, req)
		return rec
	}
	rec := tag("jp:next")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = tag("us:next")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), `names the calendar \"us\", which the server does not have; its calendars: jp.`)

	parts.cfg.Calendars = map[string]string{"jp": filepath.Join(t.TempDir(), "none.txt")}
	_, err := parts.new(t, false, nil)
	require.ErrorContains(t, err, "calendar jp: stat ")
	require.ErrorContains(t, err, "none.txt: no such file or directory")
}
