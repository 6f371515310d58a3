package engine

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// timerQueue holds the armed timers of the executions this engine runs, in
// memory; the store holds them durably. It calls fire for each timer when
// it is due.
type timerQueue struct {
	now   func() time.Time
	mu    sync.Mutex
	h     timerHeap
	byKey map[timerKey]*timerEntry
	wake  chan struct{}
}

type timerKey struct{ arn, id string }

type timerEntry struct {
	key   timerKey
	due   time.Time
	index int
}

func newTimerQueue(now func() time.Time) *timerQueue {
	return &timerQueue{now: now, byKey: map[timerKey]*timerEntry{}, wake: make(chan struct{}, 1)}
}

func (q *timerQueue) add(arn, id string, due time.Time) {
	q.mu.Lock()
	k := timerKey{arn, id}
	if e, ok := q.byKey[k]; ok {
		e.due = due
		heap.Fix(&q.h, e.index)
	} else {
		e := &timerEntry{key: k, due: due}
		q.byKey[k] = e
		heap.Push(&q.h, e)
	}
	q.mu.Unlock()
	q.poke()
}

func (q *timerQueue) remove(arn, id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e, ok := q.byKey[timerKey{arn, id}]; ok {
		heap.Remove(&q.h, e.index)
		delete(q.byKey, e.key)
	}
}

func (q *timerQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.h.Len()
}

func (q *timerQueue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run fires due timers until ctx ends.
func (q *timerQueue) run(ctx context.Context, fire func(arn, id string)) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		q.mu.Lock()
		var due []timerKey
		now := q.now()
		for q.h.Len() > 0 && !q.h[0].due.After(now) {
			e := heap.Pop(&q.h).(*timerEntry)
			delete(q.byKey, e.key)
			due = append(due, e.key)
		}
		wait := time.Hour
		if q.h.Len() > 0 {
			wait = q.h[0].due.Sub(now)
		}
		q.mu.Unlock()
		for _, k := range due {
			fire(k.arn, k.id)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		case <-t.C:
		}
	}
}

type timerHeap []*timerEntry

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(v any) {
	e := v.(*timerEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
