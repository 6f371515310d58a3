package recent

import (
	"testing"
	"time"
)

func TestSet(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	s := New(time.Second, 2, func() time.Time { return now })
	if s.Has("a") {
		t.Fatal("nothing found yet")
	}
	s.Found("a", s.Look())
	if !s.Has("a") {
		t.Fatal("a was just found")
	}
	now = now.Add(time.Second)
	if s.Has("a") {
		t.Fatal("a find is trusted for the TTL only")
	}
	look := s.Look()
	s.Forget("a") // a delete races the lookup
	s.Found("a", look)
	if s.Has("a") {
		t.Fatal("a lookup that raced a delete brought the name back")
	}
	s.Found("a", s.Look())
	s.Forget("a")
	if s.Has("a") {
		t.Fatal("a forgotten name is not found")
	}
	s.Found("b", s.Look())
	s.Found("c", s.Look())
	s.Found("d", s.Look()) // full: starts over
	if s.Has("b") || !s.Has("d") {
		t.Fatal("a full set starts over with the newest name")
	}
}
