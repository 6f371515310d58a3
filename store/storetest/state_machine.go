package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

func exerciseStateMachines(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("StateMachineInsert", func(t *testing.T) {
		t.Parallel()

		t.Run("InsertsAndGets", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			in := stateMachineFixture("orders")
			in.Description = "takes orders"
			in.LoggingConfiguration = `{"level":"ALL"}`
			in.TracingConfiguration = `{"enabled":true}`
			in.EncryptionConfiguration = `{"type":"AWS_OWNED_KEY"}`
			in.UpdatedAt = baseTime.Add(time.Second)
			sm, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.NoError(t, err)
			require.Equal(t, in, sm)

			got, err := b.exec.StateMachineGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, in, got)

			rev, err := b.exec.RevisionGet(ctx, in.Arn, "rev-1")
			require.NoError(t, err)
			require.Equal(t, &store.Revision{
				StateMachineArn: in.Arn,
				RevisionID:      "rev-1",
				Definition:      in.Definition,
				RoleArn:         roleArn,
				CreatedAt:       baseTime,
			}, rev)
		})

		t.Run("TruncatesTimesToMillisecondsUTC", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			in := stateMachineFixture("orders")
			in.CreatedAt = time.Date(2026, 3, 4, 7, 6, 7, 8_765_432, time.FixedZone("X", 2*3600))
			in.UpdatedAt = in.CreatedAt
			want := time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)

			sm, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.NoError(t, err)
			require.Equal(t, want, sm.CreatedAt)

			got, err := b.exec.StateMachineGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, want, got.CreatedAt)
			require.Equal(t, want, got.UpdatedAt)
		})

		t.Run("NameTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			b.insertStateMachine(ctx, t, "orders")
			in := stateMachineFixture("orders")
			in.Arn = stateMachineArn("other")
			_, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			_, err = b.exec.StateMachineGet(ctx, in.Arn)
			require.ErrorIs(t, err, store.ErrNotFound)
		})

		t.Run("ArnTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			b.insertStateMachine(ctx, t, "orders")
			in := stateMachineFixture("orders")
			in.Name = "other"
			_, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
		})
	})

	t.Run("StateMachineGet", func(t *testing.T) {
		t.Parallel()

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, err := b.exec.StateMachineGet(ctx, stateMachineArn("nope"))
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})

	t.Run("StateMachineUpdate", func(t *testing.T) {
		t.Parallel()

		t.Run("WithoutRevision", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			upd := *sm
			upd.Description = "now described"
			upd.RoleArn = roleArn + "2"
			upd.LoggingConfiguration = `{"level":"ERROR"}`
			upd.TracingConfiguration = `{"enabled":false}`
			upd.EncryptionConfiguration = `{"type":"CUSTOMER_MANAGED_KMS_KEY"}`
			upd.Status = "DELETING"
			upd.UpdatedAt = baseTime.Add(time.Minute)
			got, err := b.exec.StateMachineUpdate(ctx, &store.StateMachineUpdateParams{StateMachine: &upd})
			require.NoError(t, err)
			require.Equal(t, &upd, got)

			got, err = b.exec.StateMachineGet(ctx, sm.Arn)
			require.NoError(t, err)
			require.Equal(t, &upd, got)

			_, err = b.exec.RevisionGet(ctx, sm.Arn, "rev-2")
			require.ErrorIs(t, err, store.ErrNotFound)
		})

		t.Run("NewRevision", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			upd := *sm
			upd.RevisionID = "rev-2"
			upd.Definition = definition("second")
			upd.RoleArn = roleArn + "2"
			upd.UpdatedAt = baseTime.Add(time.Minute)
			got, err := b.exec.StateMachineUpdate(ctx, &store.StateMachineUpdateParams{StateMachine: &upd, NewRevision: true})
			require.NoError(t, err)
			require.Equal(t, &upd, got)

			got, err = b.exec.StateMachineGet(ctx, sm.Arn)
			require.NoError(t, err)
			require.Equal(t, &upd, got)

			rev1, err := b.exec.RevisionGet(ctx, sm.Arn, "rev-1")
			require.NoError(t, err)
			require.Equal(t, sm.Definition, rev1.Definition)
			require.Equal(t, roleArn, rev1.RoleArn)

			rev2, err := b.exec.RevisionGet(ctx, sm.Arn, "rev-2")
			require.NoError(t, err)
			require.Equal(t, &store.Revision{
				StateMachineArn: sm.Arn,
				RevisionID:      "rev-2",
				Definition:      definition("second"),
				RoleArn:         roleArn + "2",
				CreatedAt:       baseTime.Add(time.Minute),
			}, rev2)
		})

		t.Run("RevisionTaken", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			upd := *sm
			upd.Definition = definition("second")
			upd.Description = "changed"
			_, err := b.exec.StateMachineUpdate(ctx, &store.StateMachineUpdateParams{StateMachine: &upd, NewRevision: true})
			require.ErrorIs(t, err, store.ErrAlreadyExists)
			if !b.afterError() {
				return
			}
			// Nothing of the update stuck.
			got, err := b.exec.StateMachineGet(ctx, sm.Arn)
			require.NoError(t, err)
			require.Equal(t, sm, got)
		})

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			_, err := b.exec.StateMachineUpdate(ctx, &store.StateMachineUpdateParams{StateMachine: stateMachineFixture("nope")})
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})

	t.Run("StateMachineDelete", func(t *testing.T) {
		t.Parallel()

		t.Run("KeepsRevisionsDropsTags", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			other := b.insertStateMachine(ctx, t, "other")
			require.NoError(t, b.exec.TagPut(ctx, sm.Arn, []store.Tag{{Key: "team", Value: "a"}}))
			require.NoError(t, b.exec.TagPut(ctx, other.Arn, []store.Tag{{Key: "team", Value: "b"}}))

			require.NoError(t, b.exec.StateMachineDelete(ctx, sm.Arn))

			_, err := b.exec.StateMachineGet(ctx, sm.Arn)
			require.ErrorIs(t, err, store.ErrNotFound)
			rev, err := b.exec.RevisionGet(ctx, sm.Arn, "rev-1")
			require.NoError(t, err)
			require.Equal(t, sm.Definition, rev.Definition)
			tags, err := b.exec.TagList(ctx, sm.Arn)
			require.NoError(t, err)
			require.Empty(t, tags)

			sms, err := b.exec.StateMachineList(ctx, &store.StateMachineListParams{})
			require.NoError(t, err)
			require.Equal(t, []string{"other"}, stateMachineNames(sms))
			tags, err = b.exec.TagList(ctx, other.Arn)
			require.NoError(t, err)
			require.Equal(t, []store.Tag{{Key: "team", Value: "b"}}, tags)
		})

		t.Run("NameReusable", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			require.NoError(t, b.exec.StateMachineDelete(ctx, sm.Arn))

			in := stateMachineFixture("orders")
			in.RevisionID = "rev-new"
			in.Definition = definition("again")
			_, err := b.exec.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: in})
			require.NoError(t, err)
			got, err := b.exec.StateMachineGet(ctx, in.Arn)
			require.NoError(t, err)
			require.Equal(t, definition("again"), got.Definition)
			rev, err := b.exec.RevisionGet(ctx, in.Arn, "rev-1")
			require.NoError(t, err)
			require.Equal(t, definition("orders"), rev.Definition)
		})

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			require.ErrorIs(t, b.exec.StateMachineDelete(ctx, stateMachineArn("nope")), store.ErrNotFound)
		})
	})

	t.Run("StateMachineList", func(t *testing.T) {
		t.Parallel()

		t.Run("ByName", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sms, err := b.exec.StateMachineList(ctx, &store.StateMachineListParams{Limit: 10})
			require.NoError(t, err)
			require.Empty(t, sms)

			for _, name := range []string{"c", "a", "d", "b", "e"} {
				b.insertStateMachine(ctx, t, name)
			}

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{})
			require.NoError(t, err)
			require.Equal(t, []string{"a", "b", "c", "d", "e"}, stateMachineNames(sms))
			require.Equal(t, definition("a"), sms[0].Definition)

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{Limit: 2})
			require.NoError(t, err)
			require.Equal(t, []string{"a", "b"}, stateMachineNames(sms))

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{AfterName: "b", Limit: 2})
			require.NoError(t, err)
			require.Equal(t, []string{"c", "d"}, stateMachineNames(sms))

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{AfterName: "d", Limit: 2})
			require.NoError(t, err)
			require.Equal(t, []string{"e"}, stateMachineNames(sms))

			sms, err = b.exec.StateMachineList(ctx, &store.StateMachineListParams{AfterName: "e"})
			require.NoError(t, err)
			require.Empty(t, sms)
		})
	})

	t.Run("RevisionGet", func(t *testing.T) {
		t.Parallel()

		t.Run("NotFound", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")
			_, err := b.exec.RevisionGet(ctx, sm.Arn, "rev-9")
			require.ErrorIs(t, err, store.ErrNotFound)
			_, err = b.exec.RevisionGet(ctx, stateMachineArn("nope"), "rev-1")
			require.ErrorIs(t, err, store.ErrNotFound)
		})
	})
}
