// Package node is the protocol of an engine that is one node of several
// sharing a database (a store that implements store.Cluster): the node's
// lease, the wake-ups it listens for, the requests it sends to the owner
// of an execution and carries out for the others, and the batching of
// activity tasks into the shared queue. What a request does to an
// execution, and which executions a node claims, is the engine's: it
// hands the node its callbacks (Config, Handler).
//
// # Lease
//
// The node registers a lease with a new epoch (its fence) and renews it
// every Lease/3; a renewal that fails is tried again every 20–200 ms
// until one goes through, so short outages of the database, however
// many, cost nothing while some renewal gets through within every Lease.
// A node that cannot renew in time, or finds its lease
// gone (it was paused past it), has lost it: Lost is closed and the node
// must stop (Config.OnLost); its steps are refused from then on, as
// every step carries the fence and the store checks it.
//
//	Join ─► KeepLease: renew every Lease/3 ──fenced, or not renewed for Lease──► OnLost, Lost closed
//	                        ▲        │  ▲        │
//	                        │        │  └ failed: again in 20–200 ms
//	                        └─ Fenced (a step was refused: renew now)
//
// # Requests
//
// A request for an execution another live node owns is a signal in the
// store with a wake-up on its owner's channel; the owner carries it out
// (Serve, Handler.CarryOut) and writes the answer, which wakes the
// sender (Ask). A sender whose owner died meanwhile withdraws the
// request (ErrMoved): the engine sends it again to the execution's next
// owner, or applies it itself after claiming the orphan.
//
//	Ask ─► SignalSend ─► (owner) Serve ─► CarryOut ─► SignalAnswer ─► (sender) SignalResult
//	 │
//	 └─ owner gone, request not taken ─► SignalWithdraw ─► ErrMoved
//
// # Wake-ups
//
// Listen passes the store's notifications on: a request for this node
// (Serve looks now), an answer (its Ask looks now), activity tasks queued
// (Config.OnActivity wakes that many pollers), another node's release of
// its executions (ClaimNow). When listening (re)starts, whatever was sent
// before may have been missed, so everything is looked at again
// (Config.OnMissed).
//
// # Claims
//
// ClaimLoop times the claims of orphaned executions: every ClaimEvery,
// and at once on ClaimNow; what a claim does (claim, replay, answer the
// parents of children that ended elsewhere) is the engine's (Claimer).
// It sweeps the activity tasks no worker holds every ActivitySweep, and
// the requests no sender collected every minute.
package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stepwise/store"
)

const (
	// SignalPoll is how often a node looks for requests and answers
	// without a wake-up (one lost while its listening connection was
	// down).
	SignalPoll = time.Second
	// DefaultActivityPoll is how often a waiting poller looks at the
	// queue without a wake-up.
	DefaultActivityPoll = 2 * time.Second
	// signalAge is how long a request and its answer are kept for a
	// sender that went away.
	signalAge = 10 * time.Minute
	// signalsAtOnce bounds the requests a node handles at once.
	signalsAtOnce = 256
)

// Config is a node's identity and the engine's callbacks.
type Config struct {
	// ID is the node's id, unique among the nodes of the database.
	ID string
	// Lease is how long the node's lease lasts without a renewal.
	Lease time.Duration
	// ActivityPoll is how often a waiting poller looks at the queue
	// without a wake-up (0: DefaultActivityPoll).
	ActivityPoll time.Duration
	// OnLost is called once when the lease is lost, before Lost is
	// closed: the engine halts.
	OnLost func()
	// OnActivity wakes up to n pollers of an activity: tasks were queued.
	OnActivity func(activityArn string, n int)
	// OnMissed wakes every poller: wake-ups may have been missed.
	OnMissed func()
	Logger   *slog.Logger
}

// Node is the engine's part in a cluster.
type Node struct {
	store store.Cluster
	nodes store.NodeStore
	cfg   Config
	log   *slog.Logger
	fence store.Fence

	lost     chan struct{}
	lostOnce sync.Once
	lostErr  error
	renew    chan struct{} // renew the lease now (a step was fenced)
	claim    chan struct{} // claim orphans now
	signals  chan struct{} // requests wait for this node
	handling chan struct{} // bounds the requests handled at once

	mu      sync.Mutex
	replies map[int64]chan struct{} // requests sent → woken when answered
	// early holds the last answers heard for no request of this node's:
	// every node hears every answer, and one may come before Ask, which
	// learns its request's id from the send, is waiting for it.
	early     [64]int64
	earlyNext int
	leadMu    sync.Mutex
	leads     bool // Leads' last answer, at ledAt
	ledAt     time.Time
	left      atomic.Bool        // the node released its executions (Leave)
	queued    []store.QueuedTask // activity tasks for the enqueue loop
	toQueue   chan struct{}
}

// New returns the node of a store shared with other nodes: cs, and nodes
// for its lease.
func New(cs store.Cluster, nodes store.NodeStore, cfg Config) *Node {
	cfg.ActivityPoll = cmp.Or(cfg.ActivityPoll, DefaultActivityPoll)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Node{
		store: cs, nodes: nodes, cfg: cfg, log: cfg.Logger,
		lost: make(chan struct{}), renew: make(chan struct{}, 1), claim: make(chan struct{}, 1),
		signals: make(chan struct{}, 1), handling: make(chan struct{}, signalsAtOnce), toQueue: make(chan struct{}, 1),
		replies: map[int64]chan struct{}{},
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Store is the shared store.
func (c *Node) Store() store.Cluster { return c.store }

// ID is the node's id.
func (c *Node) ID() string { return c.cfg.ID }

// Fence is the node's id and epoch, once it joined.
func (c *Node) Fence() store.Fence { return c.fence }

// Lease is how long the node's lease lasts without a renewal.
func (c *Node) Lease() time.Duration { return c.cfg.Lease }

// ActivityPoll is how often a waiting poller looks at the queue without a
// wake-up.
func (c *Node) ActivityPoll() time.Duration { return c.cfg.ActivityPoll }

// Lost is closed when the node lost its lease: another node may own its
// executions now, and it must stop.
func (c *Node) Lost() <-chan struct{} { return c.lost }

// LostErr says why the lease was lost, once Lost is closed.
func (c *Node) LostErr() error {
	select {
	case <-c.lost:
		return c.lostErr
	default:
		return nil
	}
}

// Leads says whether this node does what one node of a cluster does for
// all (deliver events, delete old executions): the live node with the
// smallest id does. The answer is kept for a second.
func (c *Node) Leads(ctx context.Context) bool {
	c.leadMu.Lock()
	defer c.leadMu.Unlock()
	if time.Since(c.ledAt) < time.Second {
		return c.leads
	}
	select {
	case <-c.lost:
		return false
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	leader, err := c.store.NodeLeader(ctx)
	if err != nil {
		return false // unsure: the leader may be another
	}
	c.leads, c.ledAt = leader == c.cfg.ID, time.Now()
	return c.leads
}

// Join registers the node with a new epoch, its fence.
func (c *Node) Join(ctx context.Context) error {
	f, err := c.nodes.NodeRegister(ctx, c.cfg.ID, c.cfg.Lease)
	if err != nil {
		return fmt.Errorf("register node %s: %w", c.cfg.ID, err)
	}
	c.fence = f
	c.log.InfoContext(ctx, "engine: joined the cluster", "epoch", f.Epoch, "lease", c.cfg.Lease)
	return nil
}

// Lose says the node lost its lease, for err: its steps are refused from
// now on, and it must stop. KeepLease calls it; a test calls it to end a
// node as if its process died.
func (c *Node) Lose(err error) {
	c.lostOnce.Do(func() {
		c.lostErr = err
		c.log.Error("engine: this node lost its lease (it was paused or cut off past it, or another server registered with the same node id): another node may own its executions now; stopping", "error", err)
		if c.cfg.OnLost != nil {
			c.cfg.OnLost()
		}
		close(c.lost)
	})
}

// KeepLease renews the node's lease every third of it, until ctx ends or
// the lease is lost. A renewal that fails is tried again soon (every
// retryEvery), each try bounded by what is left of the lease, so a
// database that comes back between two short outages is found while the
// lease still runs: the node loses its lease only when no renewal went
// through for a whole lease.
func (c *Node) KeepLease(ctx context.Context) {
	every := c.cfg.Lease / 3
	retry := retryEvery(c.cfg.Lease)
	t := time.NewTimer(every)
	defer t.Stop()
	// The lease runs from the start of the last renewal that went
	// through: the store stamped its expiry during the call.
	renewed := time.Now()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.lost:
			return
		case <-t.C:
		case <-c.renew:
		}
		left := c.cfg.Lease - time.Since(renewed)
		timeout := every
		if failures > 0 {
			// A try that hangs on a dead connection must not use up the
			// lease's last seconds: the next one may find the database.
			timeout = min(every, max(retry, c.cfg.Lease/10))
		}
		if left > 0 {
			timeout = min(timeout, left)
		}
		start := time.Now()
		rctx, cancel := context.WithTimeout(ctx, timeout)
		err := c.nodes.NodeRenew(rctx, c.fence, c.cfg.Lease)
		cancel()
		next := every
		switch {
		case err == nil:
			if failures > 0 {
				c.log.Info("engine: lease renewed again", "failed_tries", failures, "unrenewed_for", start.Sub(renewed).Round(time.Millisecond))
			}
			renewed, failures = start, 0
		case ctx.Err() != nil:
			return
		case c.left.Load():
			return // released on purpose
		case errors.Is(err, store.ErrFenced):
			c.Lose(err)
			return
		case time.Since(renewed) >= c.cfg.Lease:
			c.Lose(fmt.Errorf("not renewed for %v (%d tries failed): %w", time.Since(renewed).Round(time.Millisecond), failures+1, err))
			return
		default:
			if failures == 0 {
				c.log.Warn("engine: lease not renewed; trying again until it would run out", "error", err, "left", (c.cfg.Lease - time.Since(renewed)).Round(time.Millisecond))
			} else {
				c.log.Debug("engine: lease not renewed; trying again", "error", err, "tries", failures+1)
			}
			failures++
			// Soon, and at the latest as the lease runs out.
			next = max(0, min(retry, c.cfg.Lease-time.Since(renewed)))
		}
		t.Reset(next)
	}
}

// retryEvery is how soon a failed renewal of a lease is tried again: a
// fiftieth of the lease, between 20 ms and 200 ms (200 ms for the
// default lease of 10 s).
func retryEvery(lease time.Duration) time.Duration {
	return min(max(lease/50, 20*time.Millisecond), 200*time.Millisecond)
}

// Fenced is called when a step was refused as fenced: the lease may be
// gone, which a renewal finds out now.
func (c *Node) Fenced() { poke(c.renew) }

// Listen passes the store's wake-ups on, listening again after a failure,
// until ctx ends.
func (c *Node) Listen(ctx context.Context) {
	channels := []string{store.ChannelSignal, store.ChannelReply, store.ChannelActivity, store.ChannelReleased}
	for {
		err := c.store.Listen(ctx, channels, c.heard)
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("engine: listening for other nodes failed; polling until it is back", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// heard handles a wake-up ("" when listening began: whatever was sent
// before may have been missed, so everything is looked at).
func (c *Node) heard(channel, payload string) {
	switch channel {
	case "":
		poke(c.signals)
		poke(c.claim)
		c.mu.Lock()
		for _, ch := range c.replies {
			poke(ch)
		}
		c.mu.Unlock()
		if c.cfg.OnMissed != nil {
			c.cfg.OnMissed()
		}
	case store.ChannelSignal:
		if payload == c.cfg.ID {
			poke(c.signals)
		}
	case store.ChannelReply:
		id, err := strconv.ParseInt(payload, 10, 64)
		if err != nil {
			return
		}
		c.mu.Lock()
		ch := c.replies[id]
		if ch == nil {
			c.early[c.earlyNext%len(c.early)] = id
			c.earlyNext++
		}
		c.mu.Unlock()
		if ch != nil {
			poke(ch)
		}
	case store.ChannelActivity:
		arn, count, _ := strings.Cut(payload, "\n")
		n, err := strconv.Atoi(count)
		if err != nil {
			n = 1
		}
		if c.cfg.OnActivity != nil {
			c.cfg.OnActivity(arn, n)
		}
	case store.ChannelReleased:
		if payload != c.cfg.ID {
			poke(c.claim)
		}
	}
}

// Claimer is what the claim loop does, the engine's: claim orphaned
// executions and run them (and answer the parents of children that ended
// elsewhere), and queue again the activity tasks no worker holds.
type Claimer interface {
	Claim(ctx context.Context)
	SweepActivities()
}

// ActivitySweep is how often a node queues again the activity tasks of
// its executions that no worker holds.
const ActivitySweep = 30 * time.Second

// ClaimLoop claims orphans every ClaimEvery, and at once when ClaimNow
// says so, until ctx ends or the lease is lost; first is called after the
// first claim (the executions a single node would resume). It sweeps the
// activity tasks every ActivitySweep, and the requests no one collected
// every minute.
func (c *Node) ClaimLoop(ctx context.Context, cl Claimer, first func()) {
	t := time.NewTicker(c.ClaimEvery())
	defer t.Stop()
	sweep, swept := time.Now(), time.Now()
	for {
		cl.Claim(ctx)
		if first != nil {
			first()
			first = nil
		}
		if time.Since(swept) > ActivitySweep {
			swept = time.Now()
			cl.SweepActivities()
		}
		if time.Since(sweep) > time.Minute {
			sweep = time.Now()
			if err := c.SweepSignals(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("engine: sweeping old requests failed", "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-c.lost:
			return
		case <-t.C:
		case <-c.claim:
		}
	}
}

// ClaimEvery is how often a node looks for orphans to claim.
func (c *Node) ClaimEvery() time.Duration {
	return min(max(c.cfg.Lease/10, 100*time.Millisecond), time.Second)
}

// ClaimNow receives when orphans should be claimed at once: another node
// released its executions, or wake-ups may have been missed.
func (c *Node) ClaimNow() <-chan struct{} { return c.claim }

// SweepSignals deletes the requests and answers older than their age.
func (c *Node) SweepSignals(ctx context.Context) error {
	return c.store.SignalSweep(ctx, signalAge)
}

// Leave releases the node's executions for the others to claim at once,
// and says so; the activity tasks still to queue are written first. The
// node's steps must be over.
func (c *Node) Leave(ctx context.Context) {
	select {
	case <-c.lost:
		return
	default:
	}
	c.Flush(ctx)
	c.left.Store(true)
	if err := c.nodes.NodeRelease(ctx, c.fence); err != nil {
		c.log.Warn("engine: releasing this node's executions failed; others take them over when its lease runs out", "error", err)
		return
	}
	if err := c.store.Notify(ctx, store.ChannelReleased, c.cfg.ID); err != nil {
		c.log.Warn("engine: telling other nodes of the release failed", "error", err)
	}
	c.log.Info("engine: released this node's executions to the other nodes")
}
