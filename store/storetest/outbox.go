package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/stepwisetype"
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
			y := executionFixture(x.StateMachineArn, "x2", baseTime, stepwisetype.StatusRunning)
			first, second, third := notice(1), notice(2), notice(3)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{
				{Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: x.Version, Status: stepwisetype.StatusSucceeded,
					StopDate: &baseTime, LastEventID: 3}, Input: &store.Input{ExecutionArn: x.Arn, Seq: 1, At: baseTime, Body: []byte(`{}`)},
					Outbox: []*store.OutboxEvent{first}},
				{Insert: y, Outbox: []*store.OutboxEvent{second, third}},
			}))
			got, err := b.exec.OutboxList(ctx, 0, 10)
			require.NoError(t, err)
			require.Equal(t, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`}, bodies(got), "in the steps' order")
			require.Equal(t, baseTime, got[0].CreatedAt)
			require.Positive(t, got[0].ID, "the store sets the IDs")
			require.Less(t, got[0].ID, got[1].ID)
			require.Less(t, got[1].ID, got[2].ID)
			require.Equal(t, []int64{got[0].ID, got[1].ID, got[2].ID}, []int64{first.ID, second.ID, third.ID},
				"StepWrite sets the IDs it assigned on the notices it wrote")
			got, err = b.exec.OutboxList(ctx, got[0].ID, 1)
			require.NoError(t, err)
			require.Equal(t, []string{`{"n":2}`}, bodies(got), "after an ID, at most limit")
		})

		t.Run("NotWrittenWhenTheStepFails", func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if b.inTx {
				t.Skip("a failed write aborts the transaction")
			}
			x := b.newExecution(ctx, t, "x1")
			err := b.exec.StepWrite(ctx, []*store.Step{
				{Update: &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: x.Version + 7, Status: stepwisetype.StatusSucceeded,
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
			var evs []*store.OutboxEvent
			for i := range 5 {
				evs = append(evs, notice(i))
			}
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{{Input: &store.Input{ExecutionArn: x.Arn, Seq: 1, At: baseTime, Body: []byte(`{}`)}, Outbox: evs}}))
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
