// Package retention deletes the executions that ended longer ago than a
// retention period, with their histories, as AWS forgets an execution 90
// days after it closed.
//
// # Passes
//
// A Cleaner runs a pass shortly after it starts (once the engine has
// resumed the executions that were running), then one every Interval:
//
//	Run ─► wait for Ready ─► FirstPass ─► pass ─► Interval ─► pass ─► …
//
// A pass deletes, batch after batch, the executions that ended before
// Now() − Period, those that ended first first, until a batch comes back
// short. A running execution is never deleted, a redriven one included;
// a FAILED one that could still be redriven is deleted by its stop date
// like any other.
//
// # Batches and the write lock
//
// SQLite has one writer, and each batch is one transaction
// (store.ExecutionDeleteClosed) that holds it while the engine's commits
// wait. Batches are sized to hold it for about BatchTime: a batch that
// took longer halves the next one, a batch that took less than a quarter
// of it doubles the next one, up to Batch. After each batch the pass
// pauses at least as long as the batch took, so the engine has the writer
// at least half the time, and a commit waits for at most one batch.
package retention

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"stepwise/store"
)

// Defaults of Config.
const (
	DefaultInterval  = 10 * time.Minute
	DefaultFirstPass = 10 * time.Second
	DefaultBatch     = 500
	DefaultBatchTime = 50 * time.Millisecond
	DefaultPause     = 10 * time.Millisecond

	// firstBatch is the size of a cleaner's first batch, before it knows
	// how long one takes.
	firstBatch = 100
)

// Store deletes ended executions; store.Executor is one.
type Store interface {
	ExecutionDeleteClosed(ctx context.Context, p *store.ExecutionDeleteClosedParams) (int, error)
}

// Config configures a Cleaner.
type Config struct {
	// Store is where executions are deleted. Required.
	Store Store
	// Period is how long an execution is kept after its stop date.
	// Required, positive.
	Period time.Duration
	// Interval is the time between two passes. Default DefaultInterval.
	Interval time.Duration
	// FirstPass is the wait before the first pass, counted from Ready.
	// Default the shorter of DefaultFirstPass and Interval.
	FirstPass time.Duration
	// Ready, when set, holds the first pass back until it is closed (the
	// engine's Resumed: the resumption's reads and commits go first).
	Ready <-chan struct{}
	// Batch is the most executions a batch deletes. Default DefaultBatch.
	Batch int
	// BatchTime is how long a batch should hold the write lock. Default
	// DefaultBatchTime.
	BatchTime time.Duration
	// Pause is the least wait between two batches. Default DefaultPause.
	Pause time.Duration
	// Now is the time stop dates are compared with: the engine's
	// execution time. Default time.Now.
	Now func() time.Time
	// Logger gets a line for every pass that deleted something. Default:
	// none.
	Logger *slog.Logger
	// OnDeleted, when set, is told of each batch: how many executions it
	// deleted and how long it held the store.
	OnDeleted func(n int, took time.Duration)
	// Leads, when set, says whether this server cleans: of the servers
	// sharing a database, one does. A pass is skipped when it says no.
	Leads func(ctx context.Context) bool
}

// Cleaner deletes old executions.
type Cleaner struct {
	cfg   Config
	log   *slog.Logger
	batch int // the next batch's size
}

// New returns a cleaner; Run starts it.
func New(cfg Config) (*Cleaner, error) {
	if cfg.Store == nil {
		return nil, errors.New("retention: no store")
	}
	if cfg.Period <= 0 {
		return nil, errors.New("retention: the period must be positive")
	}
	cfg.Interval = cmp.Or(cfg.Interval, DefaultInterval)
	cfg.FirstPass = cmp.Or(cfg.FirstPass, min(DefaultFirstPass, cfg.Interval))
	cfg.Batch = cmp.Or(cfg.Batch, DefaultBatch)
	cfg.BatchTime = cmp.Or(cfg.BatchTime, DefaultBatchTime)
	cfg.Pause = cmp.Or(cfg.Pause, DefaultPause)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cleaner{cfg: cfg, log: log, batch: min(firstBatch, cfg.Batch)}, nil
}

// Stats tell what a pass did.
type Stats struct {
	// StoppedBefore is the pass's cutoff: executions that ended before it
	// were deleted.
	StoppedBefore time.Time
	Deleted       int
	Batches       int
	// Longest is the longest batch: the longest the pass held the write
	// lock at once (with the wait for it, when another writer had it).
	Longest time.Duration
	// Took is the whole pass, pauses included.
	Took time.Duration
}

// Run runs passes until ctx ends. A pass that fails is logged and tried
// again at the next interval.
func (c *Cleaner) Run(ctx context.Context) {
	if c.cfg.Ready != nil {
		select {
		case <-ctx.Done():
			return
		case <-c.cfg.Ready:
		}
	}
	wait := c.cfg.FirstPass
	for {
		if !sleep(ctx, wait) {
			return
		}
		wait = c.cfg.Interval
		if c.cfg.Leads != nil && !c.cfg.Leads(ctx) {
			continue
		}
		st, err := c.Pass(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			c.log.WarnContext(ctx, "retention: deleting ended executions failed; trying again later",
				"error", err, "deleted", st.Deleted, "retry_in", wait)
		}
	}
}

// Pass deletes every execution that ended before Now() − Period, in
// batches, and logs how many it deleted.
func (c *Cleaner) Pass(ctx context.Context) (Stats, error) {
	began := time.Now()
	st := Stats{StoppedBefore: c.cfg.Now().Add(-c.cfg.Period)}
	var err error
	for {
		limit := c.batch
		t := time.Now()
		var n int
		n, err = c.cfg.Store.ExecutionDeleteClosed(ctx, &store.ExecutionDeleteClosedParams{StoppedBefore: st.StoppedBefore, Limit: limit})
		took := time.Since(t)
		if err != nil {
			break
		}
		st.Deleted += n
		st.Batches++
		if c.cfg.OnDeleted != nil {
			c.cfg.OnDeleted(n, took)
		}
		st.Longest = max(st.Longest, took)
		c.log.DebugContext(ctx, "retention: batch deleted", "deleted", n, "limit", limit, "took", took)
		c.resize(took)
		if n < limit || !sleep(ctx, max(c.cfg.Pause, took)) {
			break
		}
	}
	st.Took = time.Since(began)
	if st.Deleted > 0 {
		c.log.InfoContext(ctx, "retention: deleted ended executions", "deleted", st.Deleted,
			"stopped_before", st.StoppedBefore, "batches", st.Batches, "longest_batch", st.Longest, "took", st.Took.Round(time.Millisecond))
	}
	return st, cmp.Or(err, ctx.Err())
}

// resize sizes the next batch after one that took took.
func (c *Cleaner) resize(took time.Duration) {
	switch {
	case took > c.cfg.BatchTime:
		c.batch = max(c.batch/2, 1)
	case took < c.cfg.BatchTime/4:
		c.batch = min(c.batch*2, c.cfg.Batch)
	}
}

// sleep waits d, and reports false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
