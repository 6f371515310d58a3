package execlog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// CloudWatch Logs' limits on PutLogEvents.
const (
	// MaxBatchEvents is the most events of one call.
	MaxBatchEvents = 10000
	// MaxBatchBytes is the most bytes of one call: the messages' UTF-8
	// bytes and EventOverhead for each.
	MaxBatchBytes = 1048576
	// EventOverhead is what CloudWatch Logs counts for an event besides
	// its message.
	EventOverhead = 26
	// MaxEventBytes is the largest event, overhead included.
	MaxEventBytes = 256 * 1024
)

// CloudWatchAPI is the part of CloudWatch Logs' API a CloudWatchSink
// uses, in a region ("": the configured one). Its errors wrap
// ErrStreamExists and ErrNotFound where the service answered
// ResourceAlreadyExistsException and ResourceNotFoundException.
type CloudWatchAPI interface {
	CreateLogStream(ctx context.Context, region, group, stream string) error
	PutLogEvents(ctx context.Context, region, group, stream string, events []LogEvent) (*Rejected, error)
}

// LogEvent is an event as PutLogEvents takes it.
type LogEvent struct {
	Timestamp int64 // milliseconds since the epoch
	Message   string
}

// Rejected is what CloudWatch Logs refused of a PutLogEvents call (its
// RejectedLogEventsInfo): the events before TooOldEnd or ExpiredEnd, and
// from TooNewStart on, where set.
type Rejected struct {
	TooOldEnd, ExpiredEnd, TooNewStart *int32
}

// Errors of a CloudWatchAPI call the sink acts on.
var (
	ErrStreamExists = errors.New("the log stream exists already")
	ErrNotFound     = errors.New("the log group or stream does not exist")
)

// CloudWatchSink writes log events to CloudWatch Logs (or a stand-in at a
// configured endpoint) in the log group's region. It creates a stream the
// first time it writes to it; log groups must exist, as on AWS.
type CloudWatchSink struct {
	API CloudWatchAPI
	// Now is the clock event times are checked against (time.Now when
	// nil).
	Now func() time.Time

	created map[Destination]bool
}

var _ Sink = (*CloudWatchSink)(nil)

// Put writes the events in one PutLogEvents call (the Writer's batches
// keep within its limits; larger ones are split). CloudWatch Logs takes an
// event only within 14 days before and 2 hours after now, and a call's
// events within 24 hours: times outside the last 23 hours and the next
// hour (an execution on a skipped clock) are filed at the nearest bound;
// the record keeps the event's own time.
func (c *CloudWatchSink) Put(ctx context.Context, d Destination, events []Event) (int, error) {
	if c.created == nil {
		c.created = map[Destination]bool{}
	}
	if !c.created[d] {
		err := c.API.CreateLogStream(ctx, d.Region, d.Group, d.Stream)
		if err != nil && !errors.Is(err, ErrStreamExists) {
			return 0, fmt.Errorf("create log stream %s in %s: %w", d.Stream, d.Group, err)
		}
		c.created[d] = true
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	at := now()
	oldest, newest := at.Add(-23*time.Hour).UnixMilli(), at.Add(time.Hour).UnixMilli()
	in := make([]LogEvent, 0, len(events))
	rejected := 0
	for _, e := range events {
		if len(e.Message)+EventOverhead > MaxEventBytes {
			rejected++
			continue
		}
		ms := min(max(e.Time.UnixMilli(), oldest), newest)
		in = append(in, LogEvent{Timestamp: ms, Message: string(e.Message)})
	}
	slices.SortStableFunc(in, func(a, b LogEvent) int { return cmp.Compare(a.Timestamp, b.Timestamp) })
	for len(in) > 0 {
		n, size := 0, 0
		for n < len(in) && n < MaxBatchEvents && size+len(in[n].Message)+EventOverhead <= MaxBatchBytes {
			size += len(in[n].Message) + EventOverhead
			n++
		}
		rejectedInfo, err := c.API.PutLogEvents(ctx, d.Region, d.Group, d.Stream, in[:n])
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				delete(c.created, d) // deleted meanwhile: create it again on the retry
			}
			return rejected, fmt.Errorf("put log events to %s in %s: %w", d.Stream, d.Group, err)
		}
		rejected += rejectedCount(rejectedInfo, n)
		in = in[n:]
	}
	return rejected, nil
}

// rejectedCount counts the events of a call of n that CloudWatch Logs
// refused.
func rejectedCount(info *Rejected, n int) int {
	if info == nil {
		return 0
	}
	bad := make([]bool, n)
	mark := func(from, to int32) {
		for i := max(from, 0); i < to && int(i) < n; i++ {
			bad[i] = true
		}
	}
	if info.TooOldEnd != nil {
		mark(0, *info.TooOldEnd)
	}
	if info.ExpiredEnd != nil {
		mark(0, *info.ExpiredEnd)
	}
	if info.TooNewStart != nil {
		mark(*info.TooNewStart, int32(n))
	}
	count := 0
	for _, b := range bad {
		if b {
			count++
		}
	}
	return count
}

// Close does nothing.
func (c *CloudWatchSink) Close() error { return nil }
