package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

func exerciseInputs(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	input := func(arn string, seq int64) *store.Input {
		return &store.Input{ExecutionArn: arn, Seq: seq, At: baseTime.Add(time.Duration(seq) * time.Second), Body: []byte(fmt.Sprintf(`{"seq":%d}`, seq))}
	}

	t.Run("InputInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndListsBySeq", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, history.StatusRunning)
			require.NoError(t, b.exec.InputInsert(ctx, []*store.Input{input(x.Arn, 3), input(y.Arn, 1)}))
			require.NoError(t, b.exec.InputInsert(ctx, []*store.Input{input(x.Arn, 1), input(x.Arn, 2)}))
			require.NoError(t, b.exec.InputInsert(ctx, nil))

			got, err := b.exec.InputList(ctx, x.Arn)
			require.NoError(t, err)
			require.Equal(t, []*store.Input{input(x.Arn, 1), input(x.Arn, 2), input(x.Arn, 3)}, got)

			got, err = b.exec.InputList(ctx, executionArn(x.StateMachineArn, "nope"))
			require.NoError(t, err)
			require.Empty(t, got)
		})

		t.Run("SeqTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.InputInsert(ctx, []*store.Input{input(x.Arn, 1)}))
			err := b.exec.InputInsert(ctx, []*store.Input{input(x.Arn, 2), input(x.Arn, 1)})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err := b.exec.InputList(ctx, x.Arn)
			require.NoError(t, err)
			require.Len(t, got, 1)
		})
	})
}
