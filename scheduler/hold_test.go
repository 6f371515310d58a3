package scheduler_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/scheduler"
)

// holdCall sends Stepwise's hold-next request (POST to hold, DELETE to
// release) and returns its status and JSON body.
func holdCall(t *testing.T, b *bundle, method, name string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+"/schedules/"+name+"/hold-next", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(body, &out), string(body))
	return resp.StatusCode, out
}

// TestHoldNextSkipsOneRun: a held schedule skips its next slot only,
// recorded as skipped; the hold and the record are kept in the store, so
// a scheduler started again (a restart, another node) honours them, and
// the slot after fires.
func TestHoldNextSkipsOneRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	_, err := b.client.CreateSchedule(ctx, createInput("nightly")) // 09:00 every day
	require.NoError(t, err)

	status, out := holdCall(t, b, http.MethodPost, "nightly")
	require.Equal(t, http.StatusOK, status, out)
	nine := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	require.Equal(t, float64(nine.Unix()), out["HeldRun"])
	status, out = holdCall(t, b, http.MethodPost, "nightly") // held already: the same run
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, float64(nine.Unix()), out["HeldRun"])
	status, out = holdCall(t, b, http.MethodPost, "nosuch")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "Schedule nosuch does not exist.", out["Message"])

	ov, err := b.svc.Overview(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, nine, *ov[0].Held)

	sfn := &fakeSFN{}
	now := nine.Add(30 * time.Second)
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }}
	restarted := func() *scheduler.Service {
		return scheduler.New(b.exec, scheduler.Config{Region: region, Account: account, Now: func() time.Time { return now }})
	}
	require.NoError(t, restarted().FireDue(ctx, cfg))
	require.Empty(t, sfn.names_(), "the held run does not start")
	ov, err = restarted().Overview(ctx, 2)
	require.NoError(t, err)
	require.Nil(t, ov[0].Held)
	require.Equal(t, []time.Time{nine}, ov[0].Skipped)
	require.Equal(t, nine.AddDate(0, 0, 1), ov[0].Next[0])

	now = now.AddDate(0, 0, 1)
	require.NoError(t, restarted().FireDue(ctx, cfg))
	require.Equal(t, []string{"nightly-20261125T090000"}, sfn.names_(), "the run after fires")

	// A hold taken back: the run fires after all.
	status, _ = holdCall(t, b, http.MethodPost, "nightly")
	require.Equal(t, http.StatusOK, status)
	status, out = holdCall(t, b, http.MethodDelete, "nightly")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, true, out["Released"])
	now = now.AddDate(0, 0, 1)
	require.NoError(t, restarted().FireDue(ctx, cfg))
	require.Equal(t, []string{"nightly-20261125T090000", "nightly-20261126T090000"}, sfn.names_())
}

// TestHoldNextStoppedBetween: a stop between recording the held slot as
// fired and as skipped leaves the hold behind its slot: the next look
// records it as skipped, and nothing starts.
func TestHoldNextStoppedBetween(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	_, err := b.client.CreateSchedule(ctx, createInput("nightly"))
	require.NoError(t, err)
	at, err := b.svc.HoldNext(ctx, "", "nightly")
	require.NoError(t, err)
	require.NoError(t, b.exec.ScheduleFired(ctx, "default", "nightly", at))

	sfn := &fakeSFN{}
	now := at.Add(time.Minute)
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }}
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Empty(t, sfn.names_())
	ov, err := b.svc.Overview(ctx, 1)
	require.NoError(t, err)
	require.Nil(t, ov[0].Held)
	require.Equal(t, []time.Time{at}, ov[0].Skipped)
}
