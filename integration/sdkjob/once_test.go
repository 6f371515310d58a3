package sdkjob_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/sdkjob"
	"stepwise/jsonvalue"
)

// The start token names a task: the same for every dispatch of it,
// another for another task, execution, or execution of the same name
// started at another time; none outside an execution.
func TestStartToken(t *testing.T) {
	t.Parallel()
	start := time.UnixMilli(1700000000123)
	r := &integration.Request{ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:sm:e1", TaskID: "task-3", ExecutionStart: start}
	token := sdkjob.StartToken(r)
	require.Regexp(t, `^stepwise-[0-9a-f]{40}$`, token)
	require.LessOrEqual(t, len(token), 64, "ECS takes client tokens of up to 64 characters")

	again := *r
	again.Resumed, again.ExecutionStart = true, start.Add(400*time.Microsecond).UTC() // as read back from the store
	require.Equal(t, token, sdkjob.StartToken(&again))
	for _, other := range []integration.Request{
		{ExecutionArn: r.ExecutionArn, TaskID: "task-4", ExecutionStart: start},
		{ExecutionArn: r.ExecutionArn + "x", TaskID: "task-3", ExecutionStart: start},
		{ExecutionArn: r.ExecutionArn, TaskID: "task-3", ExecutionStart: start.Add(time.Millisecond)},
	} {
		require.NotEqual(t, token, sdkjob.StartToken(&other))
	}
	require.Empty(t, sdkjob.StartToken(&integration.Request{}), "TestState")
	// A synchronous Express run's ids ("sync-1", "task-1") start again
	// with every process: its tasks carry no token.
	require.Empty(t, sdkjob.StartToken(&integration.Request{ExecutionArn: "sync-1", TaskID: "task-1"}), "a synchronous run")
}

// A task looks for its job first only when it is dispatched again with
// no start recorded, in an execution.
func TestLookFirst(t *testing.T) {
	t.Parallel()
	r := &integration.Request{ExecutionArn: "arn:e", TaskID: "task-1", ExecutionStart: time.Now()}
	require.False(t, sdkjob.LookFirst(r), "a first dispatch")
	r.Resumed = true
	require.True(t, sdkjob.LookFirst(r))
	r.Submitted = "recorded"
	require.False(t, sdkjob.LookFirst(r), "its start recorded: followed")
	require.False(t, sdkjob.LookFirst(&integration.Request{Resumed: true}), "outside an execution")
}

// pager hands out numbered pages, forever, or fails.
type pager struct {
	read int
	err  error
}

type noOptions struct{}

func (p *pager) HasMorePages() bool { return true }
func (p *pager) NextPage(context.Context, ...func(*noOptions)) (int, error) {
	p.read++
	return p.read, p.err
}

// A lookup reads pages until one has what it looks for, and no more than
// MaxLookupPages of them; a page it cannot read is the caller's failure.
func TestLookup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fail := func(err error) error { return fmt.Errorf("service: %w", err) }
	at := func(n int) func(int) (*jsonvalue.Object, error) {
		return func(page int) (*jsonvalue.Object, error) {
			if page != n {
				return nil, nil
			}
			o := jsonvalue.NewObject(1)
			o.Set("Page", jsonvalue.NumberFromInt(int64(page)))
			return o, nil
		}
	}

	p := &pager{}
	found, err := sdkjob.Lookup(ctx, p, fail, at(3))
	require.NoError(t, err)
	page, _ := found.Get("Page")
	require.Equal(t, jsonvalue.NumberFromInt(3), page)
	require.Equal(t, 3, p.read)

	p = &pager{}
	found, err = sdkjob.Lookup(ctx, p, fail, at(sdkjob.MaxLookupPages+1))
	require.NoError(t, err)
	require.Nil(t, found)
	require.Equal(t, sdkjob.MaxLookupPages, p.read)

	p = &pager{err: errors.New("denied")}
	_, err = sdkjob.Lookup(ctx, p, fail, at(1))
	require.EqualError(t, err, "service: denied")
}
