package cli

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Garbage collector settings of the server, unless GOGC / GOMEMLIMIT say
// otherwise. A step allocates many short-lived values, so collecting less
// often buys throughput; the soft memory limit makes the collector work
// harder again well before memory gets tight.
const (
	serverGCPercent   = 400
	serverMemoryLimit = 1 << 30
)

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serverMemoryLimit)
	}
}

// A server that has gone quiet gives back the heap it no longer uses.
// Under load the heap grows to several times what is live (serverGCPercent),
// and the runtime's scavenger returns little of it while the collector's
// goal stays that high: a server at rest after a burst would hold twice
// the memory it needs until the next burst. Every idleMemoryEvery, if
// the server allocated less than quietAllocs since the last look and the
// heap holds more than spareHeap it could return, the heap is collected
// and returned to the system (a collection of a quiet heap: a few
// milliseconds). What it could return is the heap free or unused and the
// garbage not yet collected (objects the last collection did not find
// live): with the collector's goal at serverGCPercent a quiet heap is
// mostly such garbage. The start of the server is a burst of its own
// (reading the database, the models, the definitions): the first look
// returns its garbage even if the server is busy by then.
const (
	idleMemoryEvery = 2 * time.Second
	quietAllocs     = 4 << 20
	spareHeap       = 8 << 20
)

// heapReading is what returnIdleMemory reads of the heap.
type heapReading struct {
	allocs uint64 // bytes allocated since the start
	spare  uint64 // bytes of heap free, unused or garbage, not yet returned
}

var heapMetrics = []metrics.Sample{
	{Name: "/gc/heap/allocs:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/gc/heap/live:bytes"},
}

// readHeap reads the runtime's heap metrics.
func readHeap() heapReading {
	s := make([]metrics.Sample, len(heapMetrics))
	copy(s, heapMetrics)
	metrics.Read(s)
	var garbage uint64
	if objects, live := s[3].Value.Uint64(), s[4].Value.Uint64(); objects > live {
		garbage = objects - live
	}
	return heapReading{allocs: s[0].Value.Uint64(), spare: s[1].Value.Uint64() + s[2].Value.Uint64() + garbage}
}

// returnIdleMemory calls release every period in which the server was
// quiet and had spare heap, and at the first look if it had spare heap,
// until ctx ends.
func returnIdleMemory(ctx context.Context, period time.Duration, read func() heapReading, release func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	last := read()
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := read()
		quiet := first || now.allocs-last.allocs < quietAllocs
		first = false
		if quiet && now.spare > spareHeap {
			release()
			now = read()
		}
		last = now
	}
}
