package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A row written before notices were packed (migration 007) is read as the
// one notice it holds; a damaged packed row is an error, not a guess.
func TestOutboxRows(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "stepwise.db"), Options{})
	require.NoError(t, err)
	defer d.Close()
	_, err = d.write.ExecContext(ctx, `INSERT INTO stepwise_outbox (created_at, body) VALUES (1767225600000, '{"old":1}')`)
	require.NoError(t, err)
	got, err := d.Executor().OutboxList(ctx, 0, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, `{"old":1}`, string(got[0].Body))
	require.Equal(t, int64(1767225600000), got[0].CreatedAt.UnixMilli())

	_, err = d.write.ExecContext(ctx, `INSERT INTO stepwise_outbox (created_at, notices, body) VALUES (1767225600000, 2, x'0203616263')`)
	require.NoError(t, err)
	_, err = d.Executor().OutboxList(ctx, got[0].ID, 10)
	require.ErrorContains(t, err, "damaged", "two notices announced, one there")
}
