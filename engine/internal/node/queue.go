package node

import (
	"context"
	"time"

	"stepwise/store"
)

// Enqueue adds an activity task to the next batch EnqueueLoop writes.
func (c *Node) Enqueue(t store.QueuedTask) {
	c.mu.Lock()
	c.queued = append(c.queued, t)
	c.mu.Unlock()
	poke(c.toQueue)
}

// EnqueueLoop writes the activity tasks to queue, those that arrived
// together in one statement (the tasks a commit of many steps schedules
// at once): a round trip, and a wake-up of the nodes, for many tasks. A
// batch that fails is tried again, with the tasks that arrive meanwhile,
// until it is written or ctx ends (Flush writes what is left).
func (c *Node) EnqueueLoop(ctx context.Context) {
	var batch []store.QueuedTask
	backoff := time.Duration(0)
	for {
		wait := c.toQueue
		var retry <-chan time.Time
		if len(batch) > 0 {
			wait, retry = nil, time.After(backoff)
		}
		select {
		case <-ctx.Done():
			c.mu.Lock()
			c.queued = append(batch, c.queued...)
			c.mu.Unlock()
			return
		case <-wait:
		case <-retry:
		}
		c.mu.Lock()
		batch = append(batch, c.queued...)
		c.queued = nil
		c.mu.Unlock()
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.store.ActivityEnqueue(qctx, batch)
		cancel()
		switch {
		case err == nil:
			batch, backoff = batch[:0], 0
		case ctx.Err() == nil:
			backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
			c.log.Warn("engine: activity tasks not queued yet; trying again", "count", len(batch), "retry_in", backoff, "error", err)
		}
	}
}

// Flush writes the activity tasks still to queue, as the node stops.
func (c *Node) Flush(ctx context.Context) {
	c.mu.Lock()
	batch := c.queued
	c.queued = nil
	c.mu.Unlock()
	if err := c.store.ActivityEnqueue(ctx, batch); err != nil {
		// Their executions' next owners queue them again (the sweep).
		c.log.Warn("engine: activity tasks not queued as the node stopped", "count", len(batch), "error", err)
	}
}
