package maprun

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// itemStore keeps map items as the store does: rows by (map run, index),
// listed in index order from an index.
type itemStore struct {
	store.Executor // nil: a call the spool should not make panics
	mu             sync.Mutex
	rows           map[int64]string
}

// itemDriver is the store's driver over an itemStore.
type itemDriver struct {
	store.Driver
	st *itemStore
}

func (d itemDriver) Executor() store.Executor { return d.st }

func (s *itemStore) MapItemsPut(_ context.Context, _ string, first int64, items []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, it := range items {
		s.rows[first+int64(i)] = it
	}
	return nil
}

func (s *itemStore) MapItemsList(_ context.Context, _ string, from int64, limit int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var idx []int64
	for i := range s.rows {
		if i >= from {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	var out []string
	for _, i := range idx[:min(limit, len(idx))] {
		out = append(out, s.rows[i])
	}
	return out, nil
}

func (s *itemStore) MapItemsDelete(context.Context, string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.rows)
	return nil
}

// batches hands over items 0..n-1 (as {"id": i}) per batches of size.
type batches struct{ n, size int }

func (b batches) StreamItems(_ context.Context, _ *task.Task, emit func([]any) error) error {
	for from := 0; from < b.n; from += b.size {
		var items []any
		for i := from; i < min(from+b.size, b.n); i++ {
			items = append(items, item(i))
		}
		if err := emit(items); err != nil {
			return err
		}
	}
	return nil
}

func item(i int) any {
	o := jsonvalue.NewObject(1)
	o.Set("id", jsonvalue.NumberFromInt(int64(i)))
	return o
}

// The spool keeps the items a page to a row, whatever the batches they
// are read in, and its reader gives back any run of them from any index;
// a spool of an item to a row (kept so by earlier versions) reads the
// same.
func TestSpoolPages(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, 1, SpoolPage - 1, SpoolPage, SpoolPage + 1, 3*SpoolPage + 17} {
		for _, size := range []int{1, 7, SpoolPage, 1000} {
			t.Run(fmt.Sprintf("items=%d/batch=%d", n, size), func(t *testing.T) {
				st := &itemStore{rows: map[int64]string{}}
				st.rows[5] = `"left from an earlier read"`
				sp := Spool{Store: itemDriver{st: st}, Items: batches{n, size}}
				var res task.Result
				sp.spool(ctx, &task.Task{Request: &interp.TaskRequest{Reader: &interp.ReaderConfig{Spool: mapRunArn}}},
					func(r task.Result) { res = r })
				require.Nil(t, res.Failure)
				count, ok := interp.SpooledCount(res.Output)
				require.True(t, ok)
				require.EqualValues(t, n, count)
				require.Len(t, st.rows, (n+SpoolPage-1)/SpoolPage, "a row a page")
				checkReads(t, st, n)
			})
		}
	}
	t.Run("an item to a row", func(t *testing.T) {
		const n = 250
		st := &itemStore{rows: map[int64]string{}}
		for i := range n {
			st.rows[int64(i)] = jsonvalue.String(item(i))
		}
		checkReads(t, st, n)
	})
}

// checkReads reads the n items of a spool from every index, a few at a
// time and as the planner does.
func checkReads(t *testing.T, st *itemStore, n int) {
	t.Helper()
	for _, limit := range []int{1, 37, 1000} {
		r := &spoolReader{ctx: context.Background(), ex: st, arn: mapRunArn}
		for from := 0; from <= n; from++ {
			got, err := r.read(int64(from), limit)
			require.NoError(t, err)
			want := min(limit, n-from)
			require.Len(t, got, want, "from %d limit %d", from, limit)
			for i, v := range got {
				require.Equal(t, jsonvalue.String(item(from+i)), jsonvalue.String(v), "from %d limit %d", from, limit)
			}
		}
	}
}
