package sqlitestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/store"
)

// The pages commits append to the WAL reach the database file without
// the writer's own checkpoint, which SQLite runs only once the WAL holds
// 1,000 pages: once the WAL holds half as much, the checkpointer copies
// them beside the writer. The data reads the same, and after Close the
// WAL is gone as before.
func TestCheckpointer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stepwise.db")
	d, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	defer d.Close()
	size := func(p string) int64 {
		fi, err := os.Stat(p)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	// Whatever Open wrote is copied first.
	time.Sleep(50 * time.Millisecond)
	before := size(path)

	_, err = d.Executor().StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: &store.StateMachine{
		Arn: "arn:aws:states:us-east-1:123456789012:stateMachine:bench", Name: "bench", Type: "STANDARD", Status: "ACTIVE",
		RevisionID: "r1", Definition: `{}`, RoleArn: "role", CreatedAt: baseTime, UpdatedAt: baseTime,
	}})
	require.NoError(t, err)
	input := `"` + strings.Repeat("i", 12<<10) + `"`
	var arns []string
	for i := range 10 {
		tx, err := d.Begin(ctx)
		require.NoError(t, err)
		var steps []*store.Step
		for j := range 20 {
			arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:bench:%04d-%04d", i, j)
			arns = append(arns, arn)
			steps = append(steps, &store.Step{Insert: &store.Execution{
				Arn: arn, StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:bench", RevisionID: "r1",
				Name: arn[len(arn)-9:], Status: history.StatusRunning, Input: input, StartDate: baseTime, RoleArn: "role", Version: 1, LastEventID: 1,
			}, Events: []*store.Event{{ExecutionArn: arn, ID: 1, Type: "ExecutionStarted", Timestamp: baseTime, Body: []byte(`{}`)}}})
		}
		require.NoError(t, tx.StepWrite(ctx, steps))
		require.NoError(t, tx.Commit(ctx))
	}
	wal := size(path + "-wal")
	require.Positive(t, wal)
	require.Greater(t, wal, int64(checkpointFrom))
	require.Less(t, wal, int64(1000*4096), "the writer's own checkpoint would run")
	require.Eventually(t, func() bool { return size(path) > before }, 20*time.Second, 10*time.Millisecond,
		"the database file stays at %d bytes: the WAL's pages were not copied", before)

	for _, arn := range arns {
		x, err := d.Executor().ExecutionGet(ctx, arn)
		require.NoError(t, err)
		require.Equal(t, arn, x.Arn)
	}
	require.NoError(t, d.Close())
	_, err = os.Stat(path + "-wal")
	require.ErrorIs(t, err, os.ErrNotExist)
	d, err = Open(ctx, path, Options{})
	require.NoError(t, err)
	for _, arn := range arns {
		_, err := d.Executor().ExecutionGet(ctx, arn)
		require.NoError(t, err)
	}
}
