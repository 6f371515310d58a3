// Package recent remembers, for a short while, what a hot path read from
// the store (a state machine's row, its failure policies, that an
// activity exists), so that it need not read it again and again. A node
// forgets its own changes at once; another node's are seen once the TTL
// has passed.
package recent

import (
	"sync"
	"time"
)

// Cache is the values read lately, by name. Make one with New.
type Cache[V any] struct {
	ttl time.Duration
	max int
	now func() time.Time
	mu  sync.Mutex
	m   map[string]entry[V]
	gen uint64 // counts Forget calls
}

type entry[V any] struct {
	v    V
	read time.Time
}

// New returns a cache that trusts a read for ttl by the clock now
// (time.Now when nil) and holds at most max names (it starts over when
// full).
func New[V any](ttl time.Duration, max int, now func() time.Time) *Cache[V] {
	if now == nil {
		now = time.Now
	}
	return &Cache[V]{ttl: ttl, max: max, now: now}
}

// Get returns the value read for name less than TTL ago.
func (c *Cache[V]) Get(name string) (V, bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[name]
	if !ok || now.Sub(e.read) >= c.ttl {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Has reports whether a value was read for name less than TTL ago.
func (c *Cache[V]) Has(name string) bool {
	_, ok := c.Get(name)
	return ok
}

// Look begins a read of the store: Put, given what Look returned, keeps
// the value unless a Forget came meanwhile (a read that raced a change
// must not bring the old value back).
func (c *Cache[V]) Look() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// Put keeps v for name, as read by the read Look began.
func (c *Cache[V]) Put(name string, v V, look uint64) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if look != c.gen {
		return
	}
	if c.m == nil || len(c.m) >= c.max {
		c.m = map[string]entry[V]{}
	}
	c.m[name] = entry[V]{v: v, read: now}
}

// Forget drops name: it changed (or is about to).
func (c *Cache[V]) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, name)
}
