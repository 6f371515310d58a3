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

func exerciseOutbox(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	notice := func(i int) *store.OutboxEvent {
		return &store.OutboxEvent{CreatedAt: baseTime, Body: []byte(fmt.Sprintf(`{"n":%d}`, i))}
	}
	bodies := func(evs []*store.OutboxEvent) []string {
		var out []string
		for _, ev := range evs {
			out = append(out, string(ev.Body))
		}
		return out
	}

	t.Run("Outbox", func(t *testing.T) {
		t.Parallel()

		t.Run("WrittenWithSteps", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := executionFixture(x.StateMachineArn, "x2", baseTime, history.StatusRunning)
			first, second, third := notice(1), notice(2), notice(3)
			second.CreatedAt = baseTime.Add(time.Second)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{
				{Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: x.Version, Status: history.StatusSucceeded,
					StopDate: &baseTime, LastEventID: 3}, Input: &store.Input{ExecutionArn: x.Arn, Seq: 1, At: baseTime, Body: []byte(`{}`)},
					Outbox: []*store.OutboxEvent{first}},
				{Insert: y, Outbox: []*store.OutboxEvent{second, third}},
			}))
			require.Positive(t, first.ID, "StepWrite sets the IDs")
			require.Equal(t, []int64{first.ID, first.ID}, []int64{second.ID, third.ID}, "the notices of one StepWrite share an ID")
			got, err := b.exec.OutboxList(ctx, 0, 10)
			require.NoError(t, err)
			require.Equal(t, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`}, bodies(got), "in the steps' order")
			require.Equal(t, []time.Time{baseTime, baseTime.Add(time.Second), baseTime}, []time.Time{got[0].CreatedAt, got[1].CreatedAt, got[2].CreatedAt})
			for _, ev := range got {
				require.Equal(t, first.ID, ev.ID)
			}

			z := executionFixture(x.StateMachineArn, "x3", baseTime, history.StatusRunning)
			fourth := notice(4)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{{Insert: z, Outbox: []*store.OutboxEvent{fourth}}}))
			require.Equal(t, first.ID+1, fourth.ID, "the next commit's ID follows")
			got, err = b.exec.OutboxList(ctx, 0, 1)
			require.NoError(t, err)
			require.Equal(t, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`}, bodies(got), "whole IDs, past limit")
			got, err = b.exec.OutboxList(ctx, first.ID, 10)
			require.NoError(t, err)
			require.Equal(t, []string{`{"n":4}`}, bodies(got), "after an ID")
			require.Equal(t, fourth.ID, got[0].ID)
		})

		t.Run("WrittenWithoutAStep", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			first := notice(1)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{{Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: x.Version,
				Status: history.StatusSucceeded, StopDate: &baseTime, LastEventID: 3},
				Input: &store.Input{ExecutionArn: x.Arn, Seq: 1, At: baseTime, Body: []byte(`{}`)}, Outbox: []*store.OutboxEvent{first}}}))
			late, later := notice(2), notice(3)
			require.NoError(t, b.exec.OutboxWrite(ctx, []*store.OutboxEvent{late, later}))
			require.Equal(t, first.ID+1, late.ID, "the next ID")
			require.Equal(t, late.ID, later.ID, "one ID for the write")
			require.NoError(t, b.exec.OutboxWrite(ctx, nil))
			got, err := b.exec.OutboxList(ctx, first.ID, 10)
			require.NoError(t, err)
			require.Equal(t, []string{`{"n":2}`, `{"n":3}`}, bodies(got))
		})

		t.Run("NotWrittenWhenTheStepFails", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if b.inTx {
				t.Skip("a failed write aborts the transaction")
			}
			x := b.newExecution(ctx, t, "x1")
			err := b.exec.StepWrite(ctx, []*store.Step{
				{Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: x.Version + 7, Status: history.StatusSucceeded,
					StopDate: &baseTime, LastEventID: 3}, Outbox: []*store.OutboxEvent{notice(1)}},
			})
			require.Error(t, err)
			got, err := b.exec.OutboxList(ctx, 0, 10)
			require.NoError(t, err)
			require.Empty(t, got, "a step that was not written leaves no notice")
		})

		t.Run("CursorsAndDelete", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			for i := range 5 { // five commits, five IDs
				require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{{Input: &store.Input{ExecutionArn: x.Arn, Seq: int64(i + 1), At: baseTime, Body: []byte(`{}`)},
					Outbox: []*store.OutboxEvent{notice(i)}}}))
			}
			evs, err := b.exec.OutboxList(ctx, 0, 10)
			require.NoError(t, err)
			require.Len(t, evs, 5)

			c, err := b.exec.OutboxCursor(ctx, "webhook:a")
			require.NoError(t, err)
			require.Zero(t, c, "no cursor yet")
			require.NoError(t, b.exec.OutboxCursorSet(ctx, "webhook:a", evs[2].ID))
			require.NoError(t, b.exec.OutboxCursorSet(ctx, "file:b", evs[0].ID))
			require.NoError(t, b.exec.OutboxCursorSet(ctx, "webhook:a", evs[3].ID))
			c, err = b.exec.OutboxCursor(ctx, "webhook:a")
			require.NoError(t, err)
			require.Equal(t, evs[3].ID, c)
			c, err = b.exec.OutboxCursor(ctx, "file:b")
			require.NoError(t, err)
			require.Equal(t, evs[0].ID, c)

			if !b.inTx { // a failed call would end the transaction's use
				_, err := b.exec.OutboxDelete(ctx, evs[3].ID, 0)
				require.Error(t, err, "a limit must be positive")
			}
			n, err := b.exec.OutboxDelete(ctx, evs[3].ID, 2)
			require.NoError(t, err)
			require.Equal(t, 2, n, "at most limit")
			n, err = b.exec.OutboxDelete(ctx, evs[3].ID, 10)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			got, err := b.exec.OutboxList(ctx, 0, 10)
			require.NoError(t, err)
			require.Equal(t, []string{`{"n":4}`}, bodies(got), "only the notices after throughID stay")
		})
	})
}
