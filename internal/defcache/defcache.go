// Package defcache holds parsed state machine definitions, by state
// machine ARN and revision, for the service and the engine to share: a
// definition is parsed once per process, and at most Size are kept (the
// least recently used go first).
package defcache

import (
	"container/list"
	"sync"

	"stepwise/asl"
)

// DefaultSize is how many parsed definitions a cache keeps.
const DefaultSize = 1024

// Cache is a bounded cache of parsed definitions, safe for concurrent use.
// The zero value is not usable; call New.
type Cache struct {
	mu    sync.Mutex
	size  int
	order *list.List               // most recently used first; values are *entry
	byKey map[string]*list.Element // key → its element in order
}

type entry struct {
	key string
	m   *asl.StateMachine
}

// New returns a cache keeping at most size definitions (DefaultSize when
// size is not positive).
func New(size int) *Cache {
	if size <= 0 {
		size = DefaultSize
	}
	return &Cache{size: size, order: list.New(), byKey: map[string]*list.Element{}}
}

// Key is the key of a revision of a state machine.
func Key(stateMachineArn, revision string) string { return stateMachineArn + "@" + revision }

// Get returns the definition cached under key, parsing and caching it with
// parse when it is not there. A failed parse is not cached.
func (c *Cache) Get(key string, parse func() (*asl.StateMachine, error)) (*asl.StateMachine, error) {
	c.mu.Lock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		m := el.Value.(*entry).m
		c.mu.Unlock()
		return m, nil
	}
	c.mu.Unlock()
	m, err := parse()
	if err != nil {
		return nil, err
	}
	c.Put(key, m)
	return m, nil
}

// Put caches m under key.
func (c *Cache) Put(key string, m *asl.StateMachine) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		el.Value.(*entry).m = m
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&entry{key: key, m: m})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*entry).key)
	}
}

// Len is how many definitions the cache holds.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
