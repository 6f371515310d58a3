package quota

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/sfnapi"
)

func TestParse(t *testing.T) {
	t.Parallel()

	t.Run("Specs", func(t *testing.T) {
		t.Parallel()
		limits, err := Parse("", []string{"StartExecution=5/1", "StateTransition=10/2.5"})
		require.NoError(t, err)
		require.Equal(t, map[string]Limit{
			"StartExecution": {Bucket: 5, Refill: 1},
			StateTransition:  {Bucket: 10, Refill: 2.5},
		}, limits)
	})

	t.Run("NoneIsNil", func(t *testing.T) {
		t.Parallel()
		limits, err := Parse("", nil)
		require.NoError(t, err)
		require.Nil(t, limits)
	})

	t.Run("AWS", func(t *testing.T) {
		t.Parallel()
		limits, err := Parse("aws", nil)
		require.NoError(t, err)
		require.Equal(t, Limit{Bucket: 1300, Refill: 300}, limits["StartExecution"])
		require.Equal(t, Limit{Bucket: 5000, Refill: 5000}, limits[StateTransition])
		require.Equal(t, Limit{Bucket: 300, Refill: 15}, limits["DescribeExecution"])
		_, ok := limits["StartSyncExecution"]
		require.False(t, ok, "AWS does not throttle StartSyncExecution by a bucket")
		for op := range limits {
			require.True(t, op == StateTransition || IsOperation(op), op)
		}
		require.Len(t, sfnapi.Operations, 37, "the API's operations")
	})

	t.Run("SpecOverridesAWS", func(t *testing.T) {
		t.Parallel()
		limits, err := Parse("aws", []string{"StartExecution=5/1"})
		require.NoError(t, err)
		require.Equal(t, Limit{Bucket: 5, Refill: 1}, limits["StartExecution"])
		require.Equal(t, Limit{Bucket: 300, Refill: 15}, limits["DescribeExecution"])
		require.Equal(t, Limit{Bucket: 1300, Refill: 300}, awsDefaults["StartExecution"], "the table is not changed")
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		for _, tt := range []struct {
			preset string
			specs  []string
			err    string
		}{
			{"gcp", nil, `quotas "gcp": the only preset is "aws" (AWS's default quotas)`},
			{"", []string{"StartExecution"}, `quota "StartExecution": give it as OPERATION=BUCKET/REFILL_PER_SECOND, e.g. StartExecution=1300/300`},
			{"", []string{"StartExecution=5"}, `quota "StartExecution=5": give it as OPERATION=BUCKET/REFILL_PER_SECOND, e.g. StartExecution=1300/300`},
			{"", []string{"StartExecutions=5/1"}, `quota "StartExecutions=5/1": "StartExecutions" is neither a Step Functions API operation (e.g. StartExecution) nor StateTransition`},
			{"", []string{"=5/1"}, `quota "=5/1": "" is neither a Step Functions API operation (e.g. StartExecution) nor StateTransition`},
			{"", []string{"StartExecution=0/1"}, `quota "StartExecution=0/1": bucket "0": must be a whole number of tokens, at least 1`},
			{"", []string{"StartExecution=1.5/1"}, `quota "StartExecution=1.5/1": bucket "1.5": must be a whole number of tokens, at least 1`},
			{"", []string{"StartExecution=1,300/300"}, `quota "StartExecution=1,300/300": bucket "1,300": must be a whole number of tokens, at least 1`},
			{"", []string{"StartExecution=5/0"}, `quota "StartExecution=5/0": refill "0": must be a positive number of tokens per second`},
			{"", []string{"StartExecution=5/-1"}, `quota "StartExecution=5/-1": refill "-1": must be a positive number of tokens per second`},
			{"", []string{"StartExecution=5/NaN"}, `quota "StartExecution=5/NaN": refill "NaN": must be a positive number of tokens per second`},
			{"", []string{"StartExecution=5/Inf"}, `quota "StartExecution=5/Inf": refill "Inf": must be a positive number of tokens per second`},
			{"", []string{"StartExecution=5/1/2"}, `quota "StartExecution=5/1/2": refill "1/2": must be a positive number of tokens per second`},
			{"aws", []string{"StartExecution=5/1", "StartExecution=6/1"}, `quota "StartExecution=6/1": StartExecution is given twice`},
		} {
			_, err := Parse(tt.preset, tt.specs)
			require.EqualError(t, err, tt.err, "%q %q", tt.preset, tt.specs)
		}
	})
}

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// recorder records what the hooks were told.
type recorder struct {
	mu        sync.Mutex
	throttle  []string
	consumed  map[string]float64
	throttled []string
}

func (r *recorder) hook(q *Quotas) {
	r.consumed = map[string]float64{}
	q.OnThrottle = func(op string) { r.mu.Lock(); r.throttle = append(r.throttle, op); r.mu.Unlock() }
	q.OnConsume = func(op string, n float64) { r.mu.Lock(); r.consumed[op] += n; r.mu.Unlock() }
	q.OnThrottled = func(arn string) { r.mu.Lock(); r.throttled = append(r.throttled, arn); r.mu.Unlock() }
}

type testBundle struct {
	q     *Quotas
	clock *fakeClock
	rec   *recorder
}

func setup(t *testing.T, limits map[string]Limit) *testBundle {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	q := New(limits)
	q.now = clock.now
	rec := &recorder{}
	rec.hook(q)
	return &testBundle{q: q, clock: clock, rec: rec}
}

func TestAllow(t *testing.T) {
	t.Parallel()

	t.Run("BucketThenRefill", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]Limit{"StartExecution": {Bucket: 5, Refill: 1}})
		for i := range 5 {
			ok, _ := b.q.Allow("StartExecution")
			require.True(t, ok, "request %d", i+1)
		}
		ok, after := b.q.Allow("StartExecution")
		require.False(t, ok)
		require.Equal(t, time.Second, after)

		b.clock.advance(400 * time.Millisecond)
		ok, after = b.q.Allow("StartExecution")
		require.False(t, ok, "a refused request takes nothing, and 0.4 tokens are not one")
		require.Equal(t, 600*time.Millisecond, after)

		b.clock.advance(600 * time.Millisecond)
		ok, _ = b.q.Allow("StartExecution")
		require.True(t, ok)

		require.Equal(t, []string{"StartExecution", "StartExecution"}, b.rec.throttle)
		require.Equal(t, map[string]float64{"StartExecution": 6}, b.rec.consumed)
	})

	t.Run("BucketIsCapped", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]Limit{"DescribeExecution": {Bucket: 2, Refill: 100}})
		b.clock.advance(time.Hour)
		allowed := 0
		for range 10 {
			if ok, _ := b.q.Allow("DescribeExecution"); ok {
				allowed++
			}
		}
		require.Equal(t, 2, allowed)
	})

	t.Run("OtherOperationsAreFree", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]Limit{"StartExecution": {Bucket: 1, Refill: 1}, StateTransition: {Bucket: 1, Refill: 1}})
		for range 100 {
			ok, _ := b.q.Allow("DescribeExecution")
			require.True(t, ok)
			ok, _ = b.q.Allow(StateTransition)
			require.True(t, ok, "StateTransition is no API operation")
		}
		require.Empty(t, b.rec.consumed)
	})

	t.Run("Nil", func(t *testing.T) {
		t.Parallel()
		var q *Quotas
		ok, after := q.Allow("StartExecution")
		require.True(t, ok)
		require.Zero(t, after)
		require.Zero(t, q.ReserveTransitions("arn", 10))
		require.False(t, q.Transitions())
	})
}

func TestReserveTransitions(t *testing.T) {
	t.Parallel()
	const arn = "arn:aws:states:us-east-1:123456789012:stateMachine:chain"

	t.Run("WaitsForTheDebt", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]Limit{StateTransition: {Bucket: 10, Refill: 5}})
		require.True(t, b.q.Transitions())
		require.Zero(t, b.q.ReserveTransitions(arn, 4))
		require.Zero(t, b.q.ReserveTransitions(arn, 6))
		require.Empty(t, b.rec.throttled)

		// The bucket is empty: 3 transitions are 0.6 s of refill.
		require.Equal(t, 600*time.Millisecond, b.q.ReserveTransitions(arn, 3))
		require.Equal(t, []string{arn, arn, arn}, b.rec.throttled)
		// The next step waits behind that one.
		require.Equal(t, 800*time.Millisecond, b.q.ReserveTransitions(arn, 1))
		require.Len(t, b.rec.throttled, 4)
		require.Equal(t, []string{StateTransition, StateTransition, StateTransition, StateTransition}, b.rec.throttle)
		require.Equal(t, map[string]float64{StateTransition: 14}, b.rec.consumed)
	})

	t.Run("OnlyTransitionsWithoutATokenAreThrottled", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]Limit{StateTransition: {Bucket: 10, Refill: 5}})
		require.Zero(t, b.q.ReserveTransitions(arn, 8))
		require.Equal(t, time.Second, b.q.ReserveTransitions(arn, 7))
		require.Len(t, b.rec.throttled, 5, "2 of the 7 found a token")
	})

	t.Run("MoreThanABucketful", func(t *testing.T) {
		t.Parallel()
		// A 40-state chain in one step against a bucket of 10 refilled at
		// 5 a second: 30 transitions of debt, 6 s.
		b := setup(t, map[string]Limit{StateTransition: {Bucket: 10, Refill: 5}})
		require.Equal(t, 6*time.Second, b.q.ReserveTransitions(arn, 40))
		require.Len(t, b.rec.throttled, 30)
		b.clock.advance(6 * time.Second)
		require.Zero(t, b.q.ReserveTransitions(arn, 0))
		require.Equal(t, 200*time.Millisecond, b.q.ReserveTransitions(arn, 1))
	})

	t.Run("NoQuota", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]Limit{"StartExecution": {Bucket: 1, Refill: 1}})
		require.False(t, b.q.Transitions())
		require.Zero(t, b.q.ReserveTransitions(arn, 1000))
		require.Empty(t, b.rec.consumed)
	})

	t.Run("Concurrent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, map[string]Limit{StateTransition: {Bucket: 100, Refill: 10}})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 50 {
					b.q.ReserveTransitions(arn, 1)
				}
			})
		}
		wg.Wait()
		// 400 transitions, 100 from the bucket: 300 of debt at 10 a second.
		require.Equal(t, 30*time.Second+100*time.Millisecond, b.q.ReserveTransitions(arn, 1))
		require.Len(t, b.rec.throttled, 301)
	})
}

func BenchmarkAllow(b *testing.B) {
	q := New(map[string]Limit{"StartExecution": {Bucket: 1 << 30, Refill: 1 << 30}})
	for b.Loop() {
		q.Allow("StartExecution")
	}
}

func BenchmarkReserveTransitions(b *testing.B) {
	q := New(map[string]Limit{StateTransition: {Bucket: 1 << 30, Refill: 1 << 30}})
	for b.Loop() {
		q.ReserveTransitions("arn:aws:states:us-east-1:123456789012:stateMachine:bench", 11)
	}
}
