package recent

import (
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	c := New[int](time.Second, 2, func() time.Time { return now })
	if c.Has("a") {
		t.Fatal("nothing read yet")
	}
	c.Put("a", 1, c.Look())
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("a was just read: got %d, %v", v, ok)
	}
	now = now.Add(time.Second)
	if c.Has("a") {
		t.Fatal("a read is trusted for the TTL only")
	}
	look := c.Look()
	c.Forget("a") // a change races the read
	c.Put("a", 2, look)
	if c.Has("a") {
		t.Fatal("a read that raced a change brought the old value back")
	}
	c.Put("a", 3, c.Look())
	c.Forget("a")
	if c.Has("a") {
		t.Fatal("a forgotten name is not found")
	}
	c.Put("b", 1, c.Look())
	c.Put("c", 1, c.Look())
	c.Put("d", 1, c.Look()) // full: starts over
	if c.Has("b") || !c.Has("d") {
		t.Fatal("a full cache starts over with the newest name")
	}
}
