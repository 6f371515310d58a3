package cli

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
)

// The heap is returned at the first look if there is spare heap (the
// start's garbage), then only in a quiet period with spare heap: not while
// the server allocates, not when there is little to return, and once per
// quiet stretch.
func TestReturnIdleMemory(t *testing.T) {
	t.Parallel()

	var mu sync.Mutex
	readings := []heapReading{
		{allocs: 0, spare: 0},                // the reading at start
		{allocs: 40 << 20, spare: 30 << 20},  // the first look: the start's garbage
		{allocs: 40 << 20, spare: 0},         // read after the release
		{allocs: 100 << 20, spare: 64 << 20}, // busy: allocating
		{allocs: 101 << 20, spare: 2 << 20},  // quiet, little spare
		{allocs: 102 << 20, spare: 64 << 20}, // quiet, spare: release
		{allocs: 102 << 20, spare: 0},        // read after the release
		{allocs: 102<<20 + 4096, spare: 0},   // quiet, nothing to return
		{allocs: 300 << 20, spare: 90 << 20}, // busy again
	}
	var reads int
	var releasedAt []int // reads before each release
	read := func() heapReading {
		mu.Lock()
		defer mu.Unlock()
		reads++
		if reads > len(readings) { // busy from then on
			return heapReading{allocs: uint64(reads) << 30, spare: 90 << 20}
		}
		return readings[reads-1]
	}
	release := func() {
		mu.Lock()
		defer mu.Unlock()
		releasedAt = append(releasedAt, reads)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		returnIdleMemory(ctx, time.Millisecond, read, release)
	}()
	testwait.Until(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return reads > len(readings)+2
	}, 10*time.Second, time.Millisecond)
	cancel()
	<-done
	require.Equal(t, []int{2, 6}, releasedAt, "released at the first look and after the quiet reading with spare heap")
}

// readHeap reads the runtime's numbers: allocating moves allocs on.
func TestReadHeap(t *testing.T) {
	before := readHeap()
	sink = make([]byte, 1<<20)
	require.GreaterOrEqual(t, readHeap().allocs-before.allocs, uint64(1<<20))
}

var sink []byte

// Garbage the collector has not yet collected counts as spare heap: a
// quiet server at a high GC percent holds mostly that.
func TestReadHeapCountsGarbage(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	before := readHeap()
	for range 32 {
		sink = make([]byte, 1<<20) // each replaces the last: garbage
	}
	sink = nil
	after := readHeap()
	require.Greater(t, after.spare, before.spare+16<<20, "31 MiB of garbage is spare heap")
}
