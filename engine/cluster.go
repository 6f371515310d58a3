package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"stepwise/engine/internal/node"
	"stepwise/interp"
	"stepwise/store"
)

// # Many nodes on one database
//
// With Config.Cluster the engine is one node of several sharing a store
// that implements store.Cluster (PostgreSQL's). The protocol between the
// nodes — the lease, the wake-ups, the requests to an execution's owner
// and their wire encoding, the batching of activity tasks into the shared
// queue — is package node's (engine/internal/node); the engine hands it
// its callbacks and keeps what the protocol does to executions:
//
//   - Each running execution has one owner. A node owns what it starts,
//     and claims orphans: executions of nodes whose lease ran out, that
//     registered again, or that released them when they stopped. It
//     claims every ClaimEvery, at once when a node says it released its
//     executions, and on demand when a request finds an orphan (own). A
//     claim moves the execution's version on, so a step the former owner
//     had prepared is refused too. Claimed executions are replayed as on
//     a restart: timers re-armed, tasks without a result dispatched again.
//   - A request for an execution another live node owns (SendTask*,
//     StopExecution, the end of a child, an activity task's hand-out) is
//     sent to the owner (node.Ask) and its answer awaited; the owner
//     carries it out (carryOut, cluster_requests.go). Should the owner die
//     meanwhile, the request is withdrawn and sent again: to the
//     execution's new owner, or applied here after claiming the orphan.
//   - Activity tasks wait in the store's queue, which every node's
//     pollers take from (woken by the store when one is queued); the
//     owner records the hand-out (ActivityStarted) before the worker gets
//     the task, as on one node (cluster_activity.go).
//   - A node that stops gracefully releases its executions and says so:
//     the others claim them at once.

// ClusterConfig makes the engine one node of several sharing a database.
type ClusterConfig struct {
	// Node is the node's id, unique among the nodes of the database.
	Node string
	// Lease is how long the node's lease lasts without a renewal: the
	// executions of a node that died are taken over within about Lease
	// plus a second. Zero means DefaultLease.
	Lease time.Duration

	// activityPoll replaces node.DefaultActivityPoll when set (tests make
	// it long, to tell a poller woken by a task from one that looked
	// again).
	activityPoll time.Duration
}

// DefaultLease is the lease of a node when ClusterConfig.Lease is zero.
const DefaultLease = 10 * time.Second

// MinLease is the shortest lease a node may have.
const MinLease = 500 * time.Millisecond

// errMoved says an execution is not (or no longer) the node's own: the
// request goes to its owner again.
var errMoved = node.ErrMoved

// ownedElsewhere is get's answer for an execution another live node owns.
type ownedElsewhere struct{ node string }

func (o *ownedElsewhere) Error() string { return "execution owned by node " + o.node }

func (c *ClusterConfig) validate() error {
	if c.Node == "" {
		return errors.New("engine: Cluster.Node is required")
	}
	if c.Lease != 0 && c.Lease < MinLease {
		return fmt.Errorf("engine: Cluster.Lease %v is shorter than %v", c.Lease, MinLease)
	}
	return nil
}

func newNode(e *Engine, drv store.Driver, cfg *ClusterConfig) (*node.Node, error) {
	cs, ok := drv.(store.Cluster)
	if !ok {
		return nil, errors.New("engine: this store cannot be shared by several nodes (use PostgreSQL)")
	}
	return node.New(cs, drv.Executor(), node.Config{
		ID: cfg.Node, Lease: cmp.Or(cfg.Lease, DefaultLease), ActivityPoll: cfg.activityPoll,
		OnLost:     e.Halt,
		OnActivity: func(arn string, n int) { e.activities.Wake(arn, n) },
		OnMissed:   func() { e.activities.WakeAll() },
		Logger:     e.log,
	}), nil
}

// Lost is closed when the node lost its lease (never without a cluster):
// another node may own its executions now, and it must stop.
func (e *Engine) Lost() <-chan struct{} {
	if e.cl == nil {
		return nil
	}
	return e.cl.Lost()
}

// LostErr says why the lease was lost, once Lost is closed.
func (e *Engine) LostErr() error {
	if e.cl == nil {
		return nil
	}
	return e.cl.LostErr()
}

// Node is the engine's node id and epoch in its cluster (zero without).
func (e *Engine) Node() store.Fence {
	if e.cl == nil {
		return store.Fence{}
	}
	return e.cl.Fence()
}

// Leads says whether this node does what one node of a cluster does for
// all (deliver events, delete old executions): the live node with the
// smallest id does. Always true without a cluster. The answer is kept for
// a second.
func (e *Engine) Leads(ctx context.Context) bool {
	if e.cl == nil {
		return true
	}
	return e.cl.Leads(ctx)
}

// joinCluster registers the node and starts its loops.
func (e *Engine) joinCluster(ctx context.Context) error {
	c := e.cl
	if err := c.Join(ctx); err != nil {
		return err
	}
	e.wg.Add(4)
	go func() { defer e.wg.Done(); c.EnqueueLoop(e.ctx) }()
	go func() { defer e.wg.Done(); c.KeepLease(e.ctx) }()
	go func() { defer e.wg.Done(); c.Listen(e.ctx) }()
	go func() { defer e.wg.Done(); c.Serve(e.ctx, nodeHandler{e}) }()
	return nil
}

// fenced is called when a step was refused as fenced: the lease may be
// gone, which a renewal finds out now.
func (e *Engine) fenced() {
	if e.cl != nil {
		e.cl.Fenced()
	}
}

// claimLoop claims orphaned executions and runs them, first at start (as
// a single node resumes its running executions), then as node.ClaimLoop
// says. It also answers the .sync parents of children another node ran.
func (e *Engine) claimLoop(first func()) {
	e.cl.ClaimLoop(e.ctx, claimer{e}, first)
}

// claimer is the engine's part of the claim loop.
type claimer struct{ e *Engine }

func (c claimer) Claim(ctx context.Context) {
	e := c.e
	if err := e.resume(ctx, e.claimBatch); err != nil && ctx.Err() == nil {
		e.log.Warn("engine: claiming orphaned executions failed", "error", err)
		if errors.Is(err, store.ErrFenced) {
			e.fenced()
		}
	}
	e.childrenElsewhere()
}

func (c claimer) SweepActivities() { c.e.sweepQueue() }

// sweepQueue queues again (once: the queue keeps a task once) every
// activity task of the node's executions that no worker holds: a task
// whose row was taken by a poller that died before the hand-out, or that
// could not be queued, is not lost.
func (e *Engine) sweepQueue() {
	e.mu.Lock()
	live := make([]*liveExecution, 0, len(e.live))
	for _, l := range e.live {
		live = append(live, l)
	}
	e.mu.Unlock()
	for _, l := range live {
		l.mu.Lock()
		if !l.gone && l.x != nil && (l.row.TestCase == "" || e.cfg.Mocks == nil) {
			for id, r := range l.tasks {
				if interp.IsActivity(r.Resource) && !l.started[id] {
					e.cl.Enqueue(store.QueuedTask{ActivityArn: r.Resource, ExecutionArn: l.arn, TaskID: id, Owner: e.cl.ID()})
				}
			}
		}
		l.mu.Unlock()
	}
}

// claimBatch claims up to limit orphans.
func (e *Engine) claimBatch(ctx context.Context, limit int) ([]string, bool, error) {
	if e.halting.Load() {
		return nil, true, nil
	}
	arns, err := e.store.Executor().ExecutionClaim(ctx, e.cl.Fence(), limit)
	if len(arns) > 0 {
		e.log.InfoContext(ctx, "engine: claimed orphaned executions", "count", len(arns))
	}
	return arns, len(arns) < limit, err
}

// childrenElsewhere answers the .sync parents waiting here for children
// that ended on another node (which could not tell them).
func (e *Engine) childrenElsewhere() {
	for _, arn := range e.nested.Waited() {
		e.mu.Lock()
		live := e.live[arn] != nil
		e.mu.Unlock()
		if live {
			continue
		}
		row, err := e.store.Executor().ExecutionGet(e.ctx, arn)
		if err == nil && row.Status != "RUNNING" {
			e.childEnded(row)
		}
	}
}

// own makes sure the node owns a running execution before it loads it:
// nil when it does (claiming an orphan), *ownedElsewhere when another
// live node does. An execution that is not running is left to fill.
func (e *Engine) own(ctx context.Context, arn string) error {
	c := e.cl
	for range 3 {
		o, err := c.Store().ExecutionOwner(ctx, arn)
		if err != nil {
			return err
		}
		if !o.Running || o.Owner == c.Fence() {
			return nil
		}
		if o.Live && o.Owner.Node != "" {
			return &ownedElsewhere{node: o.Owner.Node}
		}
		ok, err := c.Store().ExecutionClaimOne(ctx, c.Fence(), arn)
		if err != nil {
			if errors.Is(err, store.ErrFenced) {
				e.fenced()
			}
			return err
		}
		if ok {
			return nil
		}
	}
	return fmt.Errorf("execution %s: its owner could not be found", arn)
}

// leaveCluster releases the node's executions for the others to claim at
// once, and says so. The node's steps are over.
func (e *Engine) leaveCluster() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), 5*time.Second)
	defer cancel()
	e.cl.Leave(ctx)
}
