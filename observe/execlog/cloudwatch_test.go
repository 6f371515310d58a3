package execlog_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/stretchr/testify/require"

	"stepwise/observe/execlog"
)

// cloudWatch is a func-field fake of execlog.CloudWatchAPI.
type cloudWatch struct {
	create func(in *cloudwatchlogs.CreateLogStreamInput, region string) error
	put    func(in *cloudwatchlogs.PutLogEventsInput, region string) (*cloudwatchlogs.PutLogEventsOutput, error)
}

func regionOf(opts []func(*cloudwatchlogs.Options)) string {
	var o cloudwatchlogs.Options
	for _, f := range opts {
		f(&o)
	}
	return o.Region
}

func (c *cloudWatch) CreateLogStream(_ context.Context, in *cloudwatchlogs.CreateLogStreamInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.CreateLogStreamOutput, error) {
	return &cloudwatchlogs.CreateLogStreamOutput{}, c.create(in, regionOf(opts))
}

func (c *cloudWatch) PutLogEvents(_ context.Context, in *cloudwatchlogs.PutLogEventsInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.PutLogEventsOutput, error) {
	return c.put(in, regionOf(opts))
}

// The sink creates a stream once (one that exists will do), writes in the
// log group's region, oldest first, with times CloudWatch Logs takes, and
// refuses events past its size limit.
func TestCloudWatchSink(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	var creates int
	var puts []*cloudwatchlogs.PutLogEventsInput
	api := &cloudWatch{
		create: func(in *cloudwatchlogs.CreateLogStreamInput, region string) error {
			creates++
			require.Equal(t, "eu-west-1", region)
			require.Equal(t, "g", aws.ToString(in.LogGroupName))
			if creates > 1 {
				return &types.ResourceAlreadyExistsException{}
			}
			return nil
		},
		put: func(in *cloudwatchlogs.PutLogEventsInput, region string) (*cloudwatchlogs.PutLogEventsOutput, error) {
			require.Equal(t, "eu-west-1", region)
			puts = append(puts, in)
			return &cloudwatchlogs.PutLogEventsOutput{}, nil
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
	for _, e := range puts[0].LogEvents {
		ids = append(ids, aws.ToString(e.Message))
		times = append(times, aws.ToInt64(e.Timestamp))
	}
	require.Equal(t, []string{`{"id":"0"}`, `{"id":"1"}`, `{"id":"2"}`, `{"id":"3"}`}, ids)
	require.Equal(t, []int64{now.Add(-23 * time.Hour).UnixMilli(), now.Add(-2 * time.Second).UnixMilli(),
		now.Add(-time.Second).UnixMilli(), now.Add(time.Hour).UnixMilli()}, times)

	// A stream deleted meanwhile is created again on the next attempt; a
	// stream that exists already will do.
	api.put = func(in *cloudwatchlogs.PutLogEventsInput, region string) (*cloudwatchlogs.PutLogEventsOutput, error) {
		return nil, &types.ResourceNotFoundException{Message: aws.String("The specified log stream does not exist.")}
	}
	_, err = sink.Put(context.Background(), d, events[:1])
	var missing *types.ResourceNotFoundException
	require.True(t, errors.As(err, &missing), "%v", err)
	api.put = func(in *cloudwatchlogs.PutLogEventsInput, region string) (*cloudwatchlogs.PutLogEventsOutput, error) {
		return &cloudwatchlogs.PutLogEventsOutput{RejectedLogEventsInfo: &types.RejectedLogEventsInfo{TooNewLogEventStartIndex: aws.Int32(1)}}, nil
	}
	rejected, err = sink.Put(context.Background(), d, events[:3])
	require.NoError(t, err)
	require.Equal(t, 2, creates)
	require.Equal(t, 2, rejected, "what CloudWatch Logs refused")
}
