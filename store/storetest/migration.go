package storetest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
	"stepwise/store/migrate"
)

// HistoryRowsMigration checks migration 016, which moved histories from a
// row per event (stepwise_event) into packed rows (stepwise_history):
// events stored before it read back as they were, beside events written
// after it, and migrating down gives the events stored before it back.
// db is the driver's database, m its migrations, ex an executor on it,
// and x an execution stored in it with no more than its first two
// events.
func HistoryRowsMigration(ctx context.Context, t *testing.T, db *sql.DB, m *migrate.Migrator, ex store.Executor, x *store.Execution) {
	t.Helper()
	down := func() {
		t.Helper()
		res, err := m.Migrate(ctx, db, migrate.DirectionDown, &migrate.Opts{TargetVersion: 15})
		require.NoError(t, err)
		require.Equal(t, []int{19, 18, 17, 16}, res.Versions)
	}
	down()
	_, err := db.ExecContext(ctx, `DELETE FROM stepwise_event`)
	require.NoError(t, err)
	at := time.Date(2026, 11, 27, 10, 0, 0, 123e6, time.UTC)
	old := []*store.Event{
		{ExecutionArn: x.Arn, ID: 1, Type: history.EventExecutionStarted, Timestamp: at, Body: []byte(`{"input":"{\"a\": \"b c\"}","name":"日本語 x"}`)},
		{ExecutionArn: x.Arn, ID: 2, Type: "PassStateEntered", Timestamp: at.Add(time.Millisecond), Body: []byte(`{"id":2}`)},
		{ExecutionArn: x.Arn, ID: 3, Type: "PassStateExited", Timestamp: at.Add(2 * time.Second), Body: []byte(` { "spaced" : true } `)},
	}
	for _, ev := range old {
		_, err := db.ExecContext(ctx, `INSERT INTO stepwise_event (execution_id, id, type, timestamp, body)
SELECT id, $2, $3, $4, $5 FROM stepwise_execution WHERE arn = $1`, x.Arn, ev.ID, string(ev.Type), ev.Timestamp.UnixMilli(), ev.Body)
		require.NoError(t, err)
	}

	res, err := m.Migrate(ctx, db, migrate.DirectionUp, nil)
	require.NoError(t, err)
	require.Equal(t, []int{16, 17, 18, 19}, res.Versions)
	got, err := ex.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
	require.NoError(t, err)
	require.Equal(t, old, got)

	// Events written since sit beside them, and pages cross both.
	more := eventFixtures(x.Arn, 4, 6)
	require.NoError(t, ex.EventInsert(ctx, more))
	got, err = ex.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn, AfterID: 2, Limit: 3})
	require.NoError(t, err)
	require.Equal(t, append([]*store.Event{old[2]}, more[:2]...), got)
	got, err = ex.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn, Reverse: true, AfterID: 5, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []*store.Event{more[0], old[2]}, got)
	require.ErrorIs(t, ex.EventInsert(ctx, eventFixtures(x.Arn, 3, 3)), store.ErrAlreadyExists)

	// Down again: the events from before come back as they were.
	down()
	rows, err := db.QueryContext(ctx, `SELECT e.id, e.type, e.timestamp, e.body FROM stepwise_event AS e
JOIN stepwise_execution AS x ON x.id = e.execution_id WHERE x.arn = $1 ORDER BY e.id`, x.Arn)
	require.NoError(t, err)
	defer rows.Close()
	var back []*store.Event
	for rows.Next() {
		ev := store.Event{ExecutionArn: x.Arn}
		var ms int64
		var typ string
		require.NoError(t, rows.Scan(&ev.ID, &typ, &ms, &ev.Body))
		ev.Type, ev.Timestamp = history.EventType(typ), time.UnixMilli(ms).UTC()
		back = append(back, &ev)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, old, back)
	_, err = m.Migrate(ctx, db, migrate.DirectionUp, nil)
	require.NoError(t, err)
}
