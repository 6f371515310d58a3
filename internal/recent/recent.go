// Package recent remembers, for a short while, the names of things found
// to exist (state machines' activities, say), so that a hot path need not
// read them from the store again and again. A node forgets its own
// deletes at once; another node's are seen once TTL has passed.
package recent

import (
	"sync"
	"time"
)

// Set is the names found lately. Its zero value is not usable: make one
// with New.
type Set struct {
	ttl  time.Duration
	max  int
	mu   sync.Mutex
	at   map[string]time.Time // name → when it was found
	gen  uint64               // counts Forget calls
	seen func() time.Time
}

// New returns a set that trusts a find for ttl by the clock now (time.Now
// when nil) and holds at most max names (it starts over when full).
func New(ttl time.Duration, max int, now func() time.Time) *Set {
	if now == nil {
		now = time.Now
	}
	return &Set{ttl: ttl, max: max, seen: now}
}

// Has reports whether name was found less than TTL ago.
func (s *Set) Has(name string) bool {
	now := s.seen()
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.at[name]
	return ok && now.Sub(at) < s.ttl
}

// Look begins a lookup of name in the store: Found, given what Look
// returned, remembers the name unless it was forgotten meanwhile (a
// lookup that raced a delete must not bring the name back).
func (s *Set) Look() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// Found remembers that name exists, as read by the lookup Look began.
func (s *Set) Found(name string, look uint64) {
	now := s.seen()
	s.mu.Lock()
	defer s.mu.Unlock()
	if look != s.gen {
		return
	}
	if s.at == nil || len(s.at) >= s.max {
		s.at = map[string]time.Time{}
	}
	s.at[name] = now
}

// Forget drops name: it was deleted (or is about to be).
func (s *Set) Forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	delete(s.at, name)
}
