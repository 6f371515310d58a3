package outboxrow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

// What Pack packs, Unpack reads back, with each notice's time; bytes that
// are not a row never panic.
func TestRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	steps := []*store.Step{
		{Outbox: []*store.OutboxEvent{{CreatedAt: at, Body: []byte("one")}}},
		{},
		{Outbox: []*store.OutboxEvent{{CreatedAt: at.Add(time.Second), Body: []byte("")}, {CreatedAt: at, Body: []byte("three")}}},
	}
	row, ok := Pack(steps)
	require.True(t, ok)
	require.Equal(t, 3, row.Notices)
	require.Equal(t, at, row.CreatedAt)
	got, err := Unpack(7, row.CreatedAt.UnixMilli(), row.Notices, row.Body, nil)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, want := range []*store.OutboxEvent{steps[0].Outbox[0], steps[2].Outbox[0], steps[2].Outbox[1]} {
		require.Equal(t, int64(7), got[i].ID)
		require.Equal(t, want.CreatedAt, got[i].CreatedAt)
		require.Equal(t, string(want.Body), string(got[i].Body))
	}
	SetIDs(steps, 9)
	require.Equal(t, int64(9), steps[2].Outbox[1].ID)

	_, ok = Pack([]*store.Step{{}})
	require.False(t, ok, "no notices, no row")
	_, err = Unpack(7, 0, 4, row.Body, nil)
	require.ErrorContains(t, err, "damaged", "more notices announced than held")
}

func FuzzUnpack(f *testing.F) {
	row, _ := Pack([]*store.Step{{Outbox: []*store.OutboxEvent{{CreatedAt: time.UnixMilli(1), Body: []byte("x")}}}})
	f.Add(1, row.Body)
	f.Fuzz(func(t *testing.T, notices int, body []byte) {
		if notices < 0 || notices > 1000 {
			return
		}
		_, _ = Unpack(1, 0, notices, body, nil)
	})
}
