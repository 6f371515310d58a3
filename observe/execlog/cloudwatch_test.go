package execlog_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/observe/execlog"
)

// cloudWatch is a func-field fake of execlog.CloudWatchAPI.
type cloudWatch struct {
	create func(region, group, stream string) error
	put    func(region string, events []execlog.LogEvent) (*execlog.Rejected, error)
}

func (c *cloudWatch) CreateLogStream(_ context.Context, region, group, stream string) error {
	return c.create(region, group, stream)
}

func (c *cloudWatch) PutLogEvents(_ context.Context, region, group, stream string, events []execlog.LogEvent) (*execlog.Rejected, error) {
	return c.put(region, events)
}

// The sink creates a stream once (one that exists will do), writes in the
// log group's region, oldest first, with times CloudWatch Logs takes, and
// refuses events past its size limit.
func TestCloudWatchSink(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	var creates int
	var puts [][]execlog.LogEvent
	api := &cloudWatch{
		create: func(region, group, stream string) error {
			creates++
			require.Equal(t, "eu-west-1", region)
			require.Equal(t, "g", group)
			if creates > 1 {
				return fmt.Errorf("create: %w", execlog.ErrStreamExists)
			}
			return nil
		},
		put: func(region string, events []execlog.LogEvent) (*execlog.Rejected, error) {
			require.Equal(t, "eu-west-1", region)
			puts = append(puts, events)
			return nil, nil
		},
	}
	sink := &execlog.CloudWatchSink{API: api, Now: func() time.Time { return now }}
	d := execlog.Destination{Group: "g", Stream: "states/sm/2026-05-04-12-00/0a1b2c3d", Region: "eu-west-1"}
	events := []execlog.Event{
		{Time: now.Add(-time.Second), Message: []byte(`{"id":"2"}`)},
		{Time: now.Add(-2 * time.Second), Message: []byte(`{"id":"1"}`)},
		{Time: now.Add(30 * 24 * time.Hour), Message: []byte(`{"id":"3"}`)}, // a skipped clock's
		{Time: now.Add(-30 * 24 * time.Hour), Message: []byte(`{"id":"0"}`)},
		{Time: now, Message: []byte(strings.Repeat("x", execlog.MaxEventBytes))},
	}
	rejected, err := sink.Put(context.Background(), d, events)
	require.NoError(t, err)
	require.Equal(t, 1, rejected, "the event past 256 KiB")
	_, err = sink.Put(context.Background(), d, events[:1])
	require.NoError(t, err)
	require.Equal(t, 1, creates, "the stream is created once")
	require.Len(t, puts, 2)
	var ids []string
	var times []int64
	for _, e := range puts[0] {
		ids = append(ids, e.Message)
		times = append(times, e.Timestamp)
	}
	require.Equal(t, []string{`{"id":"0"}`, `{"id":"1"}`, `{"id":"2"}`, `{"id":"3"}`}, ids)
	require.Equal(t, []int64{now.Add(-23 * time.Hour).UnixMilli(), now.Add(-2 * time.Second).UnixMilli(),
		now.Add(-time.Second).UnixMilli(), now.Add(time.Hour).UnixMilli()}, times)

	// A stream deleted meanwhile is created again on the next attempt; a
	// stream that exists already will do.
	api.put = func(region string, events []execlog.LogEvent) (*execlog.Rejected, error) {
		return nil, fmt.Errorf("The specified log stream does not exist: %w", execlog.ErrNotFound)
	}
	_, err = sink.Put(context.Background(), d, events[:1])
	require.True(t, errors.Is(err, execlog.ErrNotFound), "%v", err)
	api.put = func(region string, events []execlog.LogEvent) (*execlog.Rejected, error) {
		one := int32(1)
		return &execlog.Rejected{TooNewStart: &one}, nil
	}
	rejected, err = sink.Put(context.Background(), d, events[:3])
	require.NoError(t, err)
	require.Equal(t, 2, creates)
	require.Equal(t, 2, rejected, "what CloudWatch Logs refused")
}
