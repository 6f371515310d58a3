package node

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

// flappingNodes is a NodeStore whose database is down in the given
// windows (seconds since start): a renewal then fails at once, or hangs
// until its context ends.
type flappingNodes struct {
	store.NodeStore
	start time.Time
	down  [][2]float64
	hang  bool
	tries atomic.Int64
	ok    atomic.Int64
}

func (f *flappingNodes) NodeRenew(ctx context.Context, _ store.Fence, _ time.Duration) error {
	f.tries.Add(1)
	at := time.Since(f.start).Seconds()
	for _, w := range f.down {
		if at >= w[0] && at < w[1] {
			if f.hang {
				<-ctx.Done()
				return ctx.Err()
			}
			return errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
		}
	}
	f.ok.Add(1)
	return nil
}

// A database that flaps (down for most of every renewal period, up
// between for a fifth of a lease) never costs the node its lease: a
// failed renewal is tried again soon, not a third of a lease later.
func TestLeaseRidesOutAFlappingDatabase(t *testing.T) {
	t.Parallel()
	for _, hang := range []bool{false, true} {
		t.Run(map[bool]string{false: "refused", true: "hanging"}[hang], func(t *testing.T) {
			t.Parallel()
			// A lease of 2 s is renewed at 0.67, 1.33 and 2 s: each falls in
			// an outage, as a renewal every third of a lease would.
			nodes := &flappingNodes{start: time.Now(), hang: hang,
				down: [][2]float64{{0.5, 0.9}, {1.1, 1.5}, {1.7, 2.8}}}
			c := New(nil, nodes, Config{ID: "n1", Lease: 2 * time.Second})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			go func() { c.KeepLease(ctx); close(done) }()
			select {
			case <-c.Lost():
				t.Fatalf("lost the lease: %v (%d tries, %d renewed)", c.LostErr(), nodes.tries.Load(), nodes.ok.Load())
			case <-time.After(3200 * time.Millisecond):
			}
			cancel()
			<-done
			require.GreaterOrEqual(t, nodes.ok.Load(), int64(2), "renewed between the outages")
		})
	}
}

// An outage longer than the lease loses it, after trying all along.
func TestLeaseLostToALongOutage(t *testing.T) {
	t.Parallel()
	nodes := &flappingNodes{start: time.Now(), down: [][2]float64{{0.2, 60}}}
	c := New(nil, nodes, Config{ID: "n1", Lease: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.KeepLease(ctx)
	select {
	case <-c.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the lease outlived an outage longer than it")
	}
	at := time.Since(nodes.start)
	require.GreaterOrEqual(t, at, time.Second, "not before the lease ran out")
	require.Less(t, at, 3*time.Second)
	require.Regexp(t, `^not renewed for (1|1\.\d+|2(\.\d+)?)s \(\d+ tries failed\)`, c.LostErr().Error())
	require.Greater(t, nodes.tries.Load(), int64(10), "tried again and again while the lease ran")
}
