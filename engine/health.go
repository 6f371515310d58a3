package engine

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Commits that fail because the store cannot write now (a full disk, an
// I/O error, a database held locked past its timeout: store.ErrUnavailable)
// are retried with back-off. A step whose event exists nowhere else (a
// timer that fired, a task's result, a child's end) is retried until it
// commits or the engine stops, its execution held live in memory; a step a
// client asked for (StartExecution, SendTask*, StopExecution...) for at
// most commitRetryLimit, after which the client is answered
// ServiceUnavailable and nothing of the step remains: the execution is
// rebuilt from the store when it is next needed, so a client that retries
// does not apply its request twice.
const (
	commitRetryFirst = 10 * time.Millisecond
	commitRetryMax   = 2 * time.Second
	commitRetryLimit = 2 * time.Second
)

// internalKey marks the engine's own context: a step run with it (or one
// derived from it) has no client waiting that could send it again.
type internalKey struct{}

// Health is what the engine knows of its store.
type Health struct {
	// StoreOK is false from a commit that failed with the store unable
	// to write until one succeeds again.
	StoreOK bool
	// Since is when the store stopped taking commits, and Error why.
	Since time.Time
	Error string
	// FailedCommits counts the commits that failed so, since the start.
	FailedCommits int64
	// Retrying is how many steps wait for the store now.
	Retrying int64
}

// storeHealth follows episodes of a store that cannot write, and logs each
// once, when it starts and when it ends.
type storeHealth struct {
	log       *slog.Logger
	failing   atomic.Bool
	failed    atomic.Int64
	retrying  atomic.Int64
	mu        sync.Mutex
	since     time.Time
	recovered time.Time // when the last episode ended
	lastErr   error
	episode   int64 // failed commits in this episode
}

// failure records a commit that began at began and failed at now. One
// that began before the last episode ended (it was in flight when the
// store came back) says nothing of the store now either.
func (h *storeHealth) failure(err error, began, now time.Time) {
	h.failed.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastErr = err
	h.episode++
	if !h.failing.Load() && began.Before(h.recovered) {
		return
	}
	if h.failing.CompareAndSwap(false, true) {
		h.since = now
		h.log.Error("engine: the store cannot write; steps are retried until it can", "error", err)
	}
}

// success ends an episode with a commit that began at began. A commit
// that began before the episode did (it was in flight when the store
// stopped writing) says nothing of the store now.
func (h *storeHealth) success(began time.Time) {
	if !h.failing.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if began.Before(h.since) {
		return
	}
	if h.failing.CompareAndSwap(true, false) {
		h.log.Info("engine: the store writes again", "failed_commits", h.episode, "down_for", time.Since(h.since).Round(time.Millisecond))
		h.episode = 0
		h.recovered = time.Now()
	}
}

// Health reports whether the store takes the engine's commits.
func (e *Engine) Health() Health {
	h := &e.health
	out := Health{StoreOK: !h.failing.Load(), FailedCommits: h.failed.Load(), Retrying: h.retrying.Load()}
	if !out.StoreOK {
		h.mu.Lock()
		out.Since = h.since
		if h.lastErr != nil {
			out.Error = h.lastErr.Error()
		}
		h.mu.Unlock()
	}
	return out
}
