package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stepwise/interp"
	"stepwise/store"
)

// # Many nodes on one database
//
// With Config.Cluster the engine is one node of several sharing a store
// that implements store.Cluster (PostgreSQL's):
//
//   - The node registers a lease with a new epoch (its fence) and renews
//     it every Lease/3. A node that cannot renew in time, or finds its
//     lease gone (it was paused past it), has lost it: Lost is closed and
//     the node must stop; its steps are refused from then on, as every
//     step carries the fence and the store checks it (the execution's
//     owner is this node and epoch, with a live lease) before writing.
//   - Each running execution has one owner. A node owns what it starts,
//     and claims orphans: executions of nodes whose lease ran out, that
//     registered again, or that released them when they stopped. It
//     claims every claimEvery, at once when a node says it released its
//     executions, and on demand when a request finds an orphan. A claim
//     moves the execution's version on, so a step the former owner had
//     prepared is refused too. Claimed executions are replayed as on a
//     restart: timers re-armed, tasks without a result dispatched again.
//   - A request for an execution another live node owns (SendTask*,
//     StopExecution, the end of a child, an activity task's hand-out) is
//     sent to the owner through the store (a signal, with a wake-up) and
//     its answer awaited. Should the owner die meanwhile, the request is
//     withdrawn and sent again: to the execution's new owner, or applied
//     here after claiming the orphan.
//   - Activity tasks wait in the store's queue, which every node's
//     pollers take from (woken by the store when one is queued); the
//     owner records the hand-out (ActivityStarted) before the worker gets
//     the task, as on one node.
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

	// activityPoll replaces activityPoll when set (tests make it long, to
	// tell a poller woken by a task from one that looked again).
	activityPoll time.Duration
}

// DefaultLease is the lease of a node when ClusterConfig.Lease is zero.
const DefaultLease = 10 * time.Second

// MinLease is the shortest lease a node may have.
const MinLease = 500 * time.Millisecond

const (
	// signalPoll is how often a node looks for requests and answers
	// without a wake-up (one lost while its listening connection was
	// down).
	signalPoll = time.Second
	// activityPoll is how often a waiting poller looks at the queue
	// without a wake-up.
	activityPoll = 2 * time.Second
	// signalAge is how long a request and its answer are kept for a
	// sender that went away.
	signalAge = 10 * time.Minute
	// signalsAtOnce bounds the requests a node handles at once.
	signalsAtOnce = 256
)

// errMoved says an execution is not (or no longer) the node's own: the
// request goes to its owner again.
var errMoved = errors.New("execution is owned by another node")

// ownedElsewhere is get's answer for an execution another live node owns.
type ownedElsewhere struct{ node string }

func (o *ownedElsewhere) Error() string { return "execution owned by node " + o.node }

// node is the engine's part in a cluster.
type node struct {
	store store.Cluster
	id    string
	lease time.Duration
	fence store.Fence
	// activityPoll is how often a waiting poller looks at the queue
	// without a wake-up.
	activityPoll time.Duration

	lost     chan struct{}
	lostOnce sync.Once
	lostErr  error
	renew    chan struct{} // renew the lease now (a step was fenced)
	claim    chan struct{} // claim orphans now
	signals  chan struct{} // requests wait for this node
	handling chan struct{} // bounds the requests handled at once

	mu      sync.Mutex
	replies map[int64]chan struct{} // requests sent → woken when answered
	leadMu  sync.Mutex
	leads   bool // Leads' last answer, at ledAt
	ledAt   time.Time
	left    atomic.Bool        // the node released its executions (leaveCluster)
	queued  []store.QueuedTask // activity tasks for the enqueue loop
	toQueue chan struct{}
}

func (c *ClusterConfig) validate() error {
	if c.Node == "" {
		return errors.New("engine: Cluster.Node is required")
	}
	if c.Lease != 0 && c.Lease < MinLease {
		return fmt.Errorf("engine: Cluster.Lease %v is shorter than %v", c.Lease, MinLease)
	}
	return nil
}

func newNode(drv store.Driver, cfg *ClusterConfig) (*node, error) {
	cs, ok := drv.(store.Cluster)
	if !ok {
		return nil, errors.New("engine: this store cannot be shared by several nodes (use PostgreSQL)")
	}
	lease := cfg.Lease
	if lease == 0 {
		lease = DefaultLease
	}
	return &node{
		store: cs, id: cfg.Node, lease: lease, activityPoll: cmp.Or(cfg.activityPoll, activityPoll),
		lost: make(chan struct{}), renew: make(chan struct{}, 1), claim: make(chan struct{}, 1),
		signals: make(chan struct{}, 1), handling: make(chan struct{}, signalsAtOnce), toQueue: make(chan struct{}, 1),
		replies: map[int64]chan struct{}{},
	}, nil
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Lost is closed when the node lost its lease (never without a cluster):
// another node may own its executions now, and it must stop.
func (e *Engine) Lost() <-chan struct{} {
	if e.cl == nil {
		return nil
	}
	return e.cl.lost
}

// LostErr says why the lease was lost, once Lost is closed.
func (e *Engine) LostErr() error {
	select {
	case <-e.Lost():
		return e.cl.lostErr
	default:
		return nil
	}
}

// Node is the engine's node id and epoch in its cluster (zero without).
func (e *Engine) Node() store.Fence {
	if e.cl == nil {
		return store.Fence{}
	}
	return e.cl.fence
}

// Leads says whether this node does what one node of a cluster does for
// all (deliver events, delete old executions): the live node with the
// smallest id does. Always true without a cluster. The answer is kept for
// a second.
func (e *Engine) Leads(ctx context.Context) bool {
	c := e.cl
	if c == nil {
		return true
	}
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
	c.leads, c.ledAt = leader == c.id, time.Now()
	return c.leads
}

// joinCluster registers the node and starts its loops.
func (e *Engine) joinCluster(ctx context.Context) error {
	c := e.cl
	f, err := e.store.Executor().NodeRegister(ctx, c.id, c.lease)
	if err != nil {
		return fmt.Errorf("register node %s: %w", c.id, err)
	}
	c.fence = f
	e.log.InfoContext(ctx, "engine: joined the cluster", "epoch", f.Epoch, "lease", c.lease)
	e.wg.Add(4)
	go func() { defer e.wg.Done(); e.enqueueLoop() }()
	go func() { defer e.wg.Done(); e.keepLease() }()
	go func() { defer e.wg.Done(); e.listen() }()
	go func() { defer e.wg.Done(); e.serveSignals() }()
	return nil
}

// loseLease says the node lost its lease: its steps are refused from now
// on, and it must stop.
func (e *Engine) loseLease(err error) {
	c := e.cl
	c.lostOnce.Do(func() {
		c.lostErr = err
		e.log.Error("engine: this node lost its lease (it was paused or cut off past it, or another server registered with the same node id): another node may own its executions now; stopping", "error", err)
		e.Halt()
		close(c.lost)
	})
}

// keepLease renews the node's lease every third of it.
func (e *Engine) keepLease() {
	c := e.cl
	t := time.NewTicker(c.lease / 3)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-c.lost:
			return
		case <-t.C:
		case <-c.renew:
		}
		ctx, cancel := context.WithTimeout(e.ctx, c.lease/3)
		err := e.store.Executor().NodeRenew(ctx, c.fence, c.lease)
		cancel()
		switch {
		case err == nil:
			renewed = time.Now()
		case e.ctx.Err() != nil:
			return
		case c.left.Load():
			return // released on purpose
		case errors.Is(err, store.ErrFenced):
			e.loseLease(err)
			return
		case time.Since(renewed) >= c.lease:
			e.loseLease(fmt.Errorf("not renewed for %v: %w", time.Since(renewed).Round(time.Millisecond), err))
			return
		default:
			e.log.Warn("engine: lease not renewed; trying again", "error", err)
		}
	}
}

// fenced is called when a step was refused as fenced: the lease may be
// gone, which a renewal finds out now.
func (e *Engine) fenced() {
	if e.cl != nil {
		poke(e.cl.renew)
	}
}

// listen passes the store's wake-ups on, listening again after a failure.
func (e *Engine) listen() {
	c := e.cl
	channels := []string{store.ChannelSignal, store.ChannelReply, store.ChannelActivity, store.ChannelReleased}
	for {
		err := c.store.Listen(e.ctx, channels, e.heard)
		if e.ctx.Err() != nil {
			return
		}
		e.log.Warn("engine: listening for other nodes failed; polling until it is back", "error", err)
		select {
		case <-e.ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// heard handles a wake-up ("" when listening began: whatever was sent
// before may have been missed, so everything is looked at).
func (e *Engine) heard(channel, payload string) {
	c := e.cl
	switch channel {
	case "":
		poke(c.signals)
		poke(c.claim)
		c.mu.Lock()
		for _, ch := range c.replies {
			poke(ch)
		}
		c.mu.Unlock()
		e.activities.wakeAll()
	case store.ChannelSignal:
		if payload == c.id {
			poke(c.signals)
		}
	case store.ChannelReply:
		id, err := strconv.ParseInt(payload, 10, 64)
		if err != nil {
			return
		}
		c.mu.Lock()
		ch := c.replies[id]
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
		e.activities.wake(arn, n)
	case store.ChannelReleased:
		if payload != c.id {
			poke(c.claim)
		}
	}
}

// claimEvery is how often a node looks for orphans to claim.
func (c *node) claimEvery() time.Duration {
	return min(max(c.lease/10, 100*time.Millisecond), time.Second)
}

// claimLoop claims orphaned executions and runs them, first at start (as
// a single node resumes its running executions), then every claimEvery.
// It also answers the .sync parents of children another node ran.
func (e *Engine) claimLoop(first func()) {
	c := e.cl
	t := time.NewTicker(c.claimEvery())
	defer t.Stop()
	sweep, swept := time.Now(), time.Now()
	for {
		if err := e.resume(e.ctx, e.claimBatch); err != nil && e.ctx.Err() == nil {
			e.log.Warn("engine: claiming orphaned executions failed", "error", err)
			if errors.Is(err, store.ErrFenced) {
				e.fenced()
			}
		}
		if first != nil {
			first()
			first = nil
		}
		e.childrenElsewhere()
		if time.Since(swept) > activitySweep {
			swept = time.Now()
			e.sweepQueue()
		}
		if time.Since(sweep) > time.Minute {
			sweep = time.Now()
			if err := c.store.SignalSweep(e.ctx, signalAge); err != nil && e.ctx.Err() == nil {
				e.log.Warn("engine: sweeping old requests failed", "error", err)
			}
		}
		select {
		case <-e.ctx.Done():
			return
		case <-c.lost:
			return
		case <-t.C:
		case <-c.claim:
		}
	}
}

// activitySweep is how often a node queues again the activity tasks of
// its executions that no worker holds.
const activitySweep = 30 * time.Second

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
					e.cl.enqueue(store.QueuedTask{ActivityArn: r.Resource, ExecutionArn: l.arn, TaskID: id, Owner: e.cl.id})
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
	arns, err := e.store.Executor().ExecutionClaim(ctx, e.cl.fence, limit)
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
		o, err := c.store.ExecutionOwner(ctx, arn)
		if err != nil {
			return err
		}
		if !o.Running || o.Owner == c.fence {
			return nil
		}
		if o.Live && o.Owner.Node != "" {
			return &ownedElsewhere{node: o.Owner.Node}
		}
		ok, err := c.store.ExecutionClaimOne(ctx, c.fence, arn)
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

// sendKey marks the context of a step with a worker's answer (SendTask*).
type sendKey struct{}

// request is what a node asks of an execution's owner.
type request struct {
	Kind   string          `json:"kind"` // reqStep, reqSend, reqHandOut or reqRelease
	Arn    string          `json:"arn"`
	Task   string          `json:"task,omitempty"`
	Worker string          `json:"worker,omitempty"`
	Event  json.RawMessage `json:"event,omitempty"` // a replay log entry
}

const (
	reqStep    = "step"    // a step with Event
	reqSend    = "send"    // a step with a worker's answer (SendTask*): after the task's request is made
	reqHandOut = "handout" // hand activity task Task out to Worker
	reqRelease = "release" // undo the hand-out of Task: its poller left
)

// answer is the owner's answer to a request.
type answer struct {
	Applied bool   `json:"applied,omitempty"`
	Handed  bool   `json:"handed,omitempty"`
	Token   string `json:"token,omitempty"`
	Input   string `json:"input,omitempty"`
	// Error is "" for none, errorMoved, errorStopped, errorNotFound, or
	// another error's text.
	Error string `json:"error,omitempty"`
}

const (
	errorMoved    = "moved"
	errorStopped  = "stopped"
	errorNotFound = "not-found"
)

func answerError(err error) string {
	var elsewhere *ownedElsewhere
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errMoved), errors.As(err, &elsewhere), errors.Is(err, store.ErrFenced):
		return errorMoved
	case errors.Is(err, errStopped):
		return errorStopped
	case errors.Is(err, store.ErrNotFound):
		return errorNotFound
	}
	return err.Error()
}

// ask sends a request to node, the owner of execution arn, and waits for
// its answer. errMoved when the node turns out not to own the execution
// (it never did, or died before it answered: then it may or may not have
// carried the request out).
func (e *Engine) ask(ctx context.Context, to string, req *request) (*answer, error) {
	c := e.cl
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	id, err := c.store.SignalSend(ctx, c.id, to, body)
	if err != nil {
		return nil, err
	}
	woken := make(chan struct{}, 1)
	c.mu.Lock()
	c.replies[id] = woken
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.replies, id)
		c.mu.Unlock()
	}()
	t := time.NewTicker(signalPoll)
	defer t.Stop()
	checked := time.Now()
	for {
		reply, ok, err := c.store.SignalResult(context.WithoutCancel(ctx), id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, errMoved // swept: its owner never answered
		}
		if err != nil {
			return nil, err
		}
		if ok {
			var a answer
			if err := json.Unmarshal(reply, &a); err != nil {
				return nil, fmt.Errorf("answer of node %s: %w", to, err)
			}
			switch a.Error {
			case "":
				return &a, nil
			case errorMoved, errorStopped:
				return nil, errMoved
			case errorNotFound:
				return nil, store.ErrNotFound
			}
			return nil, fmt.Errorf("node %s: %s", to, a.Error)
		}
		select {
		case <-woken:
			continue
		case <-t.C:
		case <-ctx.Done():
			_, _ = c.store.SignalWithdraw(context.WithoutCancel(ctx), id)
			return nil, ctx.Err()
		case <-e.halted:
			_, _ = c.store.SignalWithdraw(context.WithoutCancel(ctx), id)
			return nil, errStopped
		}
		// Is the owner still there? A request to a node that died is
		// withdrawn, and goes to the execution's next owner.
		if time.Since(checked) < c.lease/4 {
			continue
		}
		checked = time.Now()
		o, err := c.store.ExecutionOwner(ctx, req.Arn)
		if err != nil || o.Owner.Node == to && o.Live {
			continue // unsure, or the owner is there: its answer comes
		}
		withdrawn, err := c.store.SignalWithdraw(context.WithoutCancel(ctx), id)
		if err != nil {
			continue
		}
		if withdrawn {
			return nil, errMoved
		}
		// The node took the request: it may still carry it out (a node
		// that stops answers what it took before it lets its executions
		// go), so its answer is awaited while it lives.
		if live, err := c.store.NodeLive(ctx, to); err != nil || live {
			continue
		}
		return nil, errMoved // it died without answering
	}
}

// serveSignals carries out the requests other nodes send this one.
func (e *Engine) serveSignals() {
	c := e.cl
	t := time.NewTicker(signalPoll)
	defer t.Stop()
	var handlers sync.WaitGroup
	defer handlers.Wait()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-c.lost:
			return
		case <-c.signals:
		case <-t.C:
		}
		for e.ctx.Err() == nil && !e.isStopped() {
			const batch = 64
			sigs, err := c.store.SignalTake(e.ctx, c.id, batch)
			if err != nil {
				if e.ctx.Err() == nil {
					e.log.Warn("engine: taking requests failed", "error", err)
				}
				break
			}
			for _, s := range sigs {
				c.handling <- struct{}{}
				if !e.beginHandler() {
					// Taken as the node stops: answered at once, the
					// sender asks the next owner.
					<-c.handling
					e.answer(s, &answer{Error: errorStopped})
					continue
				}
				handlers.Go(func() {
					defer e.handlers.Done()
					defer func() { <-c.handling }()
					e.handleSignal(s)
				})
			}
			if len(sigs) < batch {
				break
			}
		}
	}
}

// beginHandler counts a request being carried out, which Stop waits for
// before the node lets its executions go; false once the engine stops.
func (e *Engine) beginHandler() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return false
	}
	e.handlers.Add(1)
	return true
}

func (e *Engine) isStopped() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped
}

// handleSignal carries out one request and answers it.
func (e *Engine) handleSignal(s store.Signal) {
	var req request
	var a answer
	if err := json.Unmarshal(s.Body, &req); err != nil {
		a.Error = fmt.Sprintf("bad request: %v", err)
	} else {
		a = e.carryOut(&req)
	}
	e.answer(s, &a)
}

// answer writes the answer to a request.
func (e *Engine) answer(s store.Signal, a *answer) {
	body, _ := json.Marshal(a)
	if err := e.cl.store.SignalAnswer(context.WithoutCancel(e.ctx), s.ID, body); err != nil {
		e.log.Warn("engine: answering a request failed", "sender", s.Sender, "error", err)
	}
}

// carryOut does what a request asks, as the execution's owner.
func (e *Engine) carryOut(req *request) answer {
	ctx := e.ctx
	switch req.Kind {
	case reqStep, reqSend:
		en, err := decodeEntry(req.Event)
		if err != nil {
			return answer{Error: fmt.Sprintf("bad request: %v", err)}
		}
		ev := en.Event
		if req.Kind == reqSend {
			if err := e.gates.wait(ctx, e.ctx, req.Arn, ev.ID); err != nil {
				return answer{Error: answerError(err)}
			}
		}
		_, applied, err := e.stepVia(ctx, req.Arn, ev, false)
		if errors.Is(err, store.ErrNotFound) && req.Kind == reqStep {
			err = nil
		}
		return answer{Applied: applied, Error: answerError(err)}
	case reqHandOut, reqRelease:
		task, err := e.handOutHere(ctx, req)
		a := answer{Error: answerError(err)}
		if task != nil {
			a.Handed, a.Token, a.Input = true, task.Token, task.Input
		}
		return a
	}
	return answer{Error: fmt.Sprintf("bad request: kind %q", req.Kind)}
}

// handOutHere hands an activity task out for a poller on another node
// (reqHandOut), or undoes that (reqRelease), as the task's owner.
func (e *Engine) handOutHere(ctx context.Context, req *request) (*ActivityTask, error) {
	if err := e.beginStep(); err != nil {
		return nil, err
	}
	defer e.endStep()
	for range 3 {
		l, err := e.get(ctx, req.Arn)
		var ended *errEnded
		if errors.As(err, &ended) || errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.gone {
			l.mu.Unlock()
			continue
		}
		r := l.tasks[req.Task]
		if r == nil {
			l.mu.Unlock()
			return nil, nil // the task ended
		}
		t := l.task(req.Task, r)
		var task *ActivityTask
		if req.Kind == reqRelease {
			e.release(ctx, l, t)
		} else {
			// The poller is on the asking node, which undoes the hand-out
			// should it have left.
			task, err = e.handOutLocked(context.WithoutCancel(ctx), ctx, l, t, req.Worker)
		}
		l.mu.Unlock()
		return task, err
	}
	return nil, fmt.Errorf("execution %s: could not be loaded", req.Arn)
}

// maxReroutes bounds the times a request is sent again to an execution's
// owner (see rerouteWait): about 30 s, long enough for a node that is
// stopping to release its executions, or a dead one's lease to run out.
const maxReroutes = 130

// rerouteWait waits before a request is sent again to an execution's
// owner, a little longer each time; false when the engine stops.
func (e *Engine) rerouteWait(try int) bool {
	select {
	case <-time.After(min(time.Duration(try)*20*time.Millisecond, 250*time.Millisecond)):
		return true
	case <-e.halted:
		return false
	}
}

// remoteStep asks the owner of execution arn to take a step.
func (e *Engine) remoteStep(ctx context.Context, to, arn string, ev interp.Event, send bool) (bool, error) {
	kind := reqStep
	if send {
		kind = reqSend
	}
	a, err := e.ask(ctx, to, &request{Kind: kind, Arn: arn, Event: encodeEntry(&entry{Event: ev})})
	if err != nil {
		return false, err
	}
	return a.Applied, nil
}

// queueActivity queues an activity task for a worker: in memory on one
// node, in the store's queue in a cluster (see enqueueLoop). front puts it
// ahead of the others (one a poller took and gave back).
func (e *Engine) queueActivity(t *Task, front bool) {
	if e.cl == nil {
		e.activities.add(t, front)
		return
	}
	e.cl.enqueue(store.QueuedTask{ActivityArn: t.Request.Resource, ExecutionArn: t.ExecutionArn, TaskID: t.ID, Owner: e.cl.id, Front: front})
}

// enqueue adds a task to the next batch the enqueue loop writes.
func (c *node) enqueue(t store.QueuedTask) {
	c.mu.Lock()
	c.queued = append(c.queued, t)
	c.mu.Unlock()
	poke(c.toQueue)
}

// enqueueLoop writes the activity tasks to queue, those that arrived
// together in one statement (the tasks a commit of many steps schedules
// at once): a round trip, and a wake-up of the nodes, for many tasks. A
// batch that fails is tried again, with the tasks that arrive meanwhile,
// until it is written or the engine stops (Stop writes what is left).
func (e *Engine) enqueueLoop() {
	c := e.cl
	var batch []store.QueuedTask
	backoff := time.Duration(0)
	for {
		wait := c.toQueue
		var retry <-chan time.Time
		if len(batch) > 0 {
			wait, retry = nil, time.After(backoff)
		}
		select {
		case <-e.ctx.Done():
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
		ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		err := c.store.ActivityEnqueue(ctx, batch)
		cancel()
		switch {
		case err == nil:
			batch, backoff = batch[:0], 0
		case e.ctx.Err() == nil:
			backoff = min(max(2*backoff, 50*time.Millisecond), 2*time.Second)
			e.log.Warn("engine: activity tasks not queued yet; trying again", "count", len(batch), "retry_in", backoff, "error", err)
		}
	}
}

// flushQueue writes the activity tasks still to queue, as the node stops.
func (e *Engine) flushQueue(ctx context.Context) {
	c := e.cl
	c.mu.Lock()
	batch := c.queued
	c.queued = nil
	c.mu.Unlock()
	if err := c.store.ActivityEnqueue(ctx, batch); err != nil {
		// Their executions' next owners queue them again (the sweep).
		e.log.Warn("engine: activity tasks not queued as the node stopped", "count", len(batch), "error", err)
	}
}

// unqueueActivity removes a task that is no longer wanted from the queue.
func (e *Engine) unqueueActivity(arn, id string) {
	if e.cl == nil {
		e.activities.remove(arn, id)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), 5*time.Second)
	defer cancel()
	// One left behind is taken by a poller, and found ended.
	if err := e.cl.store.ActivityDequeue(ctx, arn, id); err != nil {
		e.log.Warn("engine: an ended activity task was not removed from the queue", "execution_arn", arn, "task_id", id, "error", err)
	}
}

// pollCluster is PollActivity in a cluster: tasks come from the store's
// queue, whichever node's execution they are of.
func (e *Engine) pollCluster(ctx context.Context, activityArn, worker string, wait time.Duration) (*ActivityTask, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(e.cl.activityPoll)
	defer tick.Stop()
	for ctx.Err() == nil {
		ready := e.activities.listen(activityArn)
		// The take is not cut short by the poller leaving: a row
		// deleted while the poller's call was cancelled would be a task
		// no one has (the sweep would queue it again, but later).
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		arn, id, ok, err := e.cl.store.ActivityTake(tctx, activityArn, e.cl.id)
		cancel()
		if err != nil && ctx.Err() == nil {
			e.log.Warn("engine: taking an activity task failed", "activity_arn", activityArn, "error", err)
		}
		if ok {
			e.activities.unlisten(activityArn, ready)
			task, err := e.handOutAnywhere(ctx, activityArn, arn, id, worker)
			if err != nil && ctx.Err() != nil {
				return nil, nil // the worker is gone: there is no one to tell
			}
			if task != nil || err != nil {
				return task, err
			}
			continue
		}
		select {
		case <-ready:
			continue
		case <-tick.C:
			e.activities.unlisten(activityArn, ready)
			continue
		case <-deadline.C:
		case <-ctx.Done():
		case <-e.releasePolls:
		}
		e.activities.unlisten(activityArn, ready)
		return nil, nil
	}
	return nil, nil
}

// handOutAnywhere hands a task taken from the store's queue to the poller
// of ctx: here when this node owns its execution, through its owner
// otherwise. nil when the task ended meanwhile, or the poller left.
func (e *Engine) handOutAnywhere(ctx context.Context, activityArn, arn, id, worker string) (*ActivityTask, error) {
	if err := e.beginStep(); err != nil {
		e.requeue(activityArn, arn, id)
		return nil, err
	}
	defer e.endStep()
	stepCtx := context.WithoutCancel(ctx)
	for try := range maxReroutes {
		if try > 0 && !e.rerouteWait(try) {
			break
		}
		l, err := e.get(stepCtx, arn)
		var ended *errEnded
		var elsewhere *ownedElsewhere
		switch {
		case errors.As(err, &ended) || errors.Is(err, store.ErrNotFound):
			return nil, nil
		case errors.As(err, &elsewhere):
			a, err := e.ask(stepCtx, elsewhere.node, &request{Kind: reqHandOut, Arn: arn, Task: id, Worker: worker})
			if errors.Is(err, errMoved) {
				continue
			}
			if err != nil {
				e.requeue(activityArn, arn, id)
				return nil, err
			}
			if !a.Handed {
				return nil, nil
			}
			if ctx.Err() != nil {
				e.releaseAnywhere(stepCtx, arn, id)
				return nil, nil
			}
			return &ActivityTask{Token: a.Token, Input: a.Input}, nil
		case err != nil:
			e.requeue(activityArn, arn, id)
			return nil, err
		}
		l.mu.Lock()
		if l.gone {
			l.mu.Unlock()
			continue
		}
		r := l.tasks[id]
		if r == nil {
			l.mu.Unlock()
			return nil, nil
		}
		t := l.task(id, r)
		task, err := e.handOutLocked(ctx, stepCtx, l, t, worker)
		l.mu.Unlock()
		return task, err
	}
	e.requeue(activityArn, arn, id)
	return nil, fmt.Errorf("execution %s: its owner could not be reached", arn)
}

// releaseAnywhere undoes the hand-out of a task whose poller left before
// it got it, on the task's owner wherever that is now.
func (e *Engine) releaseAnywhere(ctx context.Context, arn, id string) {
	var err error
	for try := range maxReroutes {
		if try > 0 && !e.rerouteWait(try) {
			break
		}
		l, gerr := e.get(ctx, arn)
		var elsewhere *ownedElsewhere
		switch {
		case errors.As(gerr, &elsewhere):
			_, err = e.ask(ctx, elsewhere.node, &request{Kind: reqRelease, Arn: arn, Task: id})
			if errors.Is(err, errMoved) {
				continue
			}
		case gerr != nil:
			err = gerr
		default:
			l.mu.Lock()
			if r := l.tasks[id]; r != nil && !l.gone {
				e.release(ctx, l, l.task(id, r))
			}
			gone := l.gone
			l.mu.Unlock()
			if gone {
				continue
			}
		}
		break
	}
	var ended *errEnded
	if err != nil && !errors.As(err, &ended) && !errors.Is(err, store.ErrNotFound) {
		// The task is left to its timeouts, as one whose worker crashed.
		e.log.Warn("engine: release of an activity task not recorded", "execution_arn", arn, "task_id", id, "error", err)
	}
}

// requeue puts a task whose hand-out failed back in the store's queue,
// ahead of the others.
func (e *Engine) requeue(activityArn, arn, id string) {
	e.cl.enqueue(store.QueuedTask{ActivityArn: activityArn, ExecutionArn: arn, TaskID: id, Owner: e.cl.id, Front: true})
}

// leaveCluster releases the node's executions for the others to claim at
// once, and says so. The node's steps are over.
func (e *Engine) leaveCluster() {
	c := e.cl
	select {
	case <-c.lost:
		return
	default:
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.ctx), 5*time.Second)
	defer cancel()
	e.flushQueue(ctx)
	c.left.Store(true)
	if err := e.store.Executor().NodeRelease(ctx, c.fence); err != nil {
		e.log.Warn("engine: releasing this node's executions failed; others take them over when its lease runs out", "error", err)
		return
	}
	if err := c.store.Notify(ctx, store.ChannelReleased, c.id); err != nil {
		e.log.Warn("engine: telling other nodes of the release failed", "error", err)
	}
	e.log.Info("engine: released this node's executions to the other nodes")
}
