package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

func exerciseSchedules(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	groupArn := func(name string) string { return "arn:aws:scheduler:us-east-1:123456789012:schedule-group/" + name }
	schedule := func(group, name, state string) *store.Schedule {
		return &store.Schedule{GroupName: group, Name: name, State: state, Body: `{"ScheduleExpression":"rate(1 minute)"}`,
			ClientToken: "tok-" + name, CreatedAt: baseTime, UpdatedAt: baseTime}
	}

	t.Run("ScheduleGroups", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		for _, name := range []string{"b", "a", "ab", "c"} {
			require.NoError(t, b.exec.ScheduleGroupInsert(ctx, &store.ScheduleGroup{Name: name, Arn: groupArn(name), ClientToken: "t", CreatedAt: baseTime, UpdatedAt: baseTime}))
		}
		g, err := b.exec.ScheduleGroupGet(ctx, "ab")
		require.NoError(t, err)
		require.Equal(t, &store.ScheduleGroup{Name: "ab", Arn: groupArn("ab"), ClientToken: "t", CreatedAt: baseTime, UpdatedAt: baseTime}, g)
		_, err = b.exec.ScheduleGroupGet(ctx, "zz")
		require.ErrorIs(t, err, store.ErrNotFound)

		all, err := b.exec.ScheduleGroupList(ctx, "", "", 0)
		require.NoError(t, err)
		require.Len(t, all, 4)
		require.Equal(t, []string{"a", "ab", "b", "c"}, []string{all[0].Name, all[1].Name, all[2].Name, all[3].Name})
		page, err := b.exec.ScheduleGroupList(ctx, "a", "a", 5)
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.Equal(t, "ab", page[0].Name)

		// Deleting a group deletes its schedules and tags, not others'.
		require.NoError(t, b.exec.ScheduleInsert(ctx, schedule("a", "s1", "ENABLED")))
		require.NoError(t, b.exec.ScheduleInsert(ctx, schedule("b", "s1", "ENABLED")))
		require.NoError(t, b.exec.TagPut(ctx, groupArn("a"), []store.Tag{{Key: "k", Value: "v"}}))
		require.NoError(t, b.exec.ScheduleGroupDelete(ctx, "a"))
		_, err = b.exec.ScheduleGroupGet(ctx, "a")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.exec.ScheduleGet(ctx, "a", "s1")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.exec.ScheduleGet(ctx, "b", "s1")
		require.NoError(t, err)
		tags, err := b.exec.TagList(ctx, groupArn("a"))
		require.NoError(t, err)
		require.Empty(t, tags)

		err = b.exec.ScheduleGroupInsert(ctx, &store.ScheduleGroup{Name: "b", Arn: groupArn("b"), CreatedAt: baseTime, UpdatedAt: baseTime})
		require.ErrorIs(t, err, store.ErrAlreadyExists)
		if !b.afterError() {
			return
		}
		require.ErrorIs(t, b.exec.ScheduleGroupDelete(ctx, "a"), store.ErrNotFound)
	})

	t.Run("Schedules", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		for _, s := range []*store.Schedule{
			schedule("default", "beta", "ENABLED"),
			schedule("default", "alpha", "DISABLED"),
			schedule("g2", "alpha", "ENABLED"),
			schedule("default", "alpine", "ENABLED"),
		} {
			require.NoError(t, b.exec.ScheduleInsert(ctx, s))
		}
		got, err := b.exec.ScheduleGet(ctx, "default", "alpha")
		require.NoError(t, err)
		require.Equal(t, schedule("default", "alpha", "DISABLED"), got)
		_, err = b.exec.ScheduleGet(ctx, "g2", "beta")
		require.ErrorIs(t, err, store.ErrNotFound)

		names := func(ss []*store.Schedule) []string {
			out := make([]string, len(ss))
			for i, s := range ss {
				out[i] = s.GroupName + "/" + s.Name
			}
			return out
		}
		all, err := b.exec.ScheduleList(ctx, &store.ScheduleListParams{})
		require.NoError(t, err)
		require.Equal(t, []string{"default/alpha", "default/alpine", "default/beta", "g2/alpha"}, names(all))
		page, err := b.exec.ScheduleList(ctx, &store.ScheduleListParams{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []string{"default/alpha", "default/alpine"}, names(page))
		page, err = b.exec.ScheduleList(ctx, &store.ScheduleListParams{AfterGroup: "default", AfterName: "alpine", Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []string{"default/beta", "g2/alpha"}, names(page))
		page, err = b.exec.ScheduleList(ctx, &store.ScheduleListParams{NamePrefix: "alp", State: "ENABLED"})
		require.NoError(t, err)
		require.Equal(t, []string{"default/alpine", "g2/alpha"}, names(page))
		page, err = b.exec.ScheduleList(ctx, &store.ScheduleListParams{GroupName: "g2"})
		require.NoError(t, err)
		require.Equal(t, []string{"g2/alpha"}, names(page))

		later := baseTime.Add(time.Hour)
		upd := schedule("default", "alpha", "ENABLED")
		upd.Body, upd.UpdatedAt, upd.ClientToken = `{"ScheduleExpression":"rate(2 minutes)"}`, later, "ignored"
		require.NoError(t, b.exec.ScheduleUpdate(ctx, upd))
		// Failed attempts at the next slot are kept, in a list too, until
		// the slot fires.
		attempted := baseTime.Add(2*time.Minute + 3*time.Second)
		require.NoError(t, b.exec.ScheduleAttempted(ctx, "default", "alpha", 2, attempted))
		got, err = b.exec.ScheduleGet(ctx, "default", "alpha")
		require.NoError(t, err)
		require.Equal(t, 2, got.Attempts)
		require.Equal(t, &attempted, got.AttemptedAt)
		listed, err := b.exec.ScheduleList(ctx, &store.ScheduleListParams{GroupName: "default", NamePrefix: "alpha", Limit: 1})
		require.NoError(t, err)
		require.Len(t, listed, 1)
		require.Equal(t, 2, listed[0].Attempts)
		require.Equal(t, &attempted, listed[0].AttemptedAt)
		slot := baseTime.Add(2 * time.Minute)
		require.NoError(t, b.exec.ScheduleFired(ctx, "default", "alpha", slot))
		got, err = b.exec.ScheduleGet(ctx, "default", "alpha")
		require.NoError(t, err)
		require.Equal(t, "ENABLED", got.State)
		require.Equal(t, upd.Body, got.Body)
		require.Equal(t, "tok-alpha", got.ClientToken)
		require.Equal(t, baseTime, got.CreatedAt)
		require.Equal(t, later, got.UpdatedAt)
		require.Equal(t, &slot, got.LastFired)
		require.Zero(t, got.Attempts, "firing the slot clears its attempts")
		require.Nil(t, got.AttemptedAt)
		require.NoError(t, b.exec.ScheduleAttempted(ctx, "default", "alpha", 1, attempted))
		require.NoError(t, b.exec.ScheduleUpdate(ctx, upd))
		got, err = b.exec.ScheduleGet(ctx, "default", "alpha")
		require.NoError(t, err)
		require.Zero(t, got.Attempts, "a changed schedule tries afresh")
		require.Nil(t, got.AttemptedAt)

		require.NoError(t, b.exec.ScheduleDelete(ctx, "default", "alpha"))
		_, err = b.exec.ScheduleGet(ctx, "default", "alpha")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, b.exec.ScheduleDelete(ctx, "default", "alpha"), store.ErrNotFound)
		require.ErrorIs(t, b.exec.ScheduleUpdate(ctx, upd), store.ErrNotFound)
		require.ErrorIs(t, b.exec.ScheduleFired(ctx, "default", "alpha", slot), store.ErrNotFound)
		require.ErrorIs(t, b.exec.ScheduleAttempted(ctx, "default", "alpha", 1, slot), store.ErrNotFound)

		err = b.exec.ScheduleInsert(ctx, schedule("default", "beta", "ENABLED"))
		require.ErrorIs(t, err, store.ErrAlreadyExists)
	})
}
