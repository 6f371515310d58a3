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

func eventFixture(arn string, id int64) *store.Event {
	return &store.Event{
		ExecutionArn: arn,
		ID:           id,
		Type:         history.EventType(fmt.Sprintf("Type%d", id)),
		Timestamp:    baseTime.Add(time.Duration(id) * time.Millisecond),
		Body:         []byte(fmt.Sprintf(`{"id":%d,"type":"Type%d"}`, id, id)),
	}
}

func eventFixtures(arn string, from, to int64) []*store.Event {
	var evs []*store.Event
	for id := from; id <= to; id++ {
		evs = append(evs, eventFixture(arn, id))
	}
	return evs
}

func exerciseHistory(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("EventInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndLists", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			evs := eventFixtures(x.Arn, 1, 3)
			require.NoError(t, b.exec.EventInsert(ctx, evs))
			require.NoError(t, b.exec.EventInsert(ctx, nil))

			got, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
			require.NoError(t, err)
			require.Equal(t, evs, got)
		})

		t.Run("IDTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 1, 3)))
			err := b.exec.EventInsert(ctx, eventFixtures(x.Arn, 3, 5))
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			// All or none.
			got, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
			require.NoError(t, err)
			require.Equal(t, []int64{1, 2, 3}, eventIDs(got))
		})

		t.Run("LargeBatch", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			evs := eventFixtures(x.Arn, 1, 1500)
			require.NoError(t, b.exec.EventInsert(ctx, evs))
			got, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
			require.NoError(t, err)
			require.Equal(t, evs, got)

			// A clash at the very end of a large batch stores none of it.
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 1501, 2999)))
			err = b.exec.EventInsert(ctx, append(eventFixtures(x.Arn, 3001, 4000), eventFixture(x.Arn, 1)))
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			got, err = b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn, Reverse: true, Limit: 1})
			require.NoError(t, err)
			require.Equal(t, []int64{2999}, eventIDs(got))
		})
	})

	t.Run("EventList", func(t *testing.T) {
		t.Parallel()

		t.Run("ForwardAndReverse", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			x := b.newExecution(ctx, t, "x1")
			y := b.insertExecution(ctx, t, x.StateMachineArn, "x2", baseTime, history.StatusRunning)
			// Out of order, and interleaved with another execution's.
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 4, 5)))
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(y.Arn, 1, 9)))
			require.NoError(t, b.exec.EventInsert(ctx, eventFixtures(x.Arn, 1, 3)))

			list := func(p store.EventListParams) []int64 {
				t.Helper()
				p.ExecutionArn = x.Arn
				evs, err := b.exec.EventList(ctx, &p)
				require.NoError(t, err)
				for _, ev := range evs {
					require.Equal(t, x.Arn, ev.ExecutionArn)
				}
				return eventIDs(evs)
			}
			require.Equal(t, []int64{1, 2, 3, 4, 5}, list(store.EventListParams{}))
			require.Equal(t, []int64{1, 2}, list(store.EventListParams{Limit: 2}))
			require.Equal(t, []int64{3, 4}, list(store.EventListParams{AfterID: 2, Limit: 2}))
			require.Equal(t, []int64{5}, list(store.EventListParams{AfterID: 4, Limit: 2}))
			require.Empty(t, list(store.EventListParams{AfterID: 5}))
			require.Equal(t, []int64{5, 4, 3, 2, 1}, list(store.EventListParams{Reverse: true}))
			require.Equal(t, []int64{5, 4}, list(store.EventListParams{Reverse: true, Limit: 2}))
			require.Equal(t, []int64{3, 2}, list(store.EventListParams{Reverse: true, AfterID: 4, Limit: 2}))
			require.Equal(t, []int64{1}, list(store.EventListParams{Reverse: true, AfterID: 2, Limit: 2}))
			require.Empty(t, list(store.EventListParams{Reverse: true, AfterID: 1}))

			evs, err := b.exec.EventList(ctx, &store.EventListParams{ExecutionArn: executionArn(x.StateMachineArn, "nope")})
			require.NoError(t, err)
			require.Empty(t, evs)
		})
	})
}
