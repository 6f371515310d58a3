package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"stepwise/store"
)

// Request is what a node asks of an execution's owner, as it goes over
// the wire (JSON in the signal's body).
type Request struct {
	Kind   string          `json:"kind"` // ReqStep, ReqSend, ReqHandOut or ReqRelease
	Arn    string          `json:"arn"`
	Task   string          `json:"task,omitempty"`
	Worker string          `json:"worker,omitempty"`
	Event  json.RawMessage `json:"event,omitempty"` // a replay log entry
}

// The kinds of request.
const (
	ReqStep    = "step"    // a step with Event
	ReqSend    = "send"    // a step with a worker's answer (SendTask*): after the task's request is made
	ReqHandOut = "handout" // hand activity task Task out to Worker
	ReqRelease = "release" // undo the hand-out of Task: its poller left
)

// Answer is the owner's answer to a request.
type Answer struct {
	Applied bool   `json:"applied,omitempty"`
	Handed  bool   `json:"handed,omitempty"`
	Token   string `json:"token,omitempty"`
	Input   string `json:"input,omitempty"`
	// Error is "" for none, ErrorMoved, ErrorStopped, ErrorNotFound, or
	// another error's text.
	Error string `json:"error,omitempty"`
}

// The errors an answer names.
const (
	ErrorMoved    = "moved"
	ErrorStopped  = "stopped"
	ErrorNotFound = "not-found"
)

// ErrMoved says an execution is not (or no longer) the node's own: the
// request goes to its owner again.
var ErrMoved = errors.New("execution is owned by another node")

// ErrHalted is a request given up because the engine halted.
var ErrHalted = errors.New("the engine halted")

// Ask sends a request to node to, the owner of execution req.Arn, and
// waits for its answer. ErrMoved when the node turns out not to own the
// execution (it never did, or died before it answered: then it may or
// may not have carried the request out); store.ErrNotFound when it has no
// such execution; ErrHalted once halted is closed.
func (c *Node) Ask(ctx context.Context, halted <-chan struct{}, to string, req *Request) (*Answer, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	id, err := c.store.SignalSend(ctx, c.cfg.ID, to, body)
	if err != nil {
		return nil, err
	}
	woken := make(chan struct{}, 1)
	c.mu.Lock()
	c.replies[id] = woken
	if slices.Contains(c.early[:], id) {
		poke(woken) // answered already
	}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.replies, id)
		c.mu.Unlock()
	}()
	t := time.NewTicker(SignalPoll)
	defer t.Stop()
	checked := time.Now()
	// The answer is looked for once woken, or every SignalPoll: not at
	// once, when it cannot be there yet (that cost two round trips a
	// request).
	for first := true; ; first = false {
		reply, ok, err := []byte(nil), false, error(nil)
		if !first {
			reply, ok, err = c.store.SignalResult(context.WithoutCancel(ctx), id)
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrMoved // swept: its owner never answered
		}
		if err != nil {
			return nil, err
		}
		if ok {
			var a Answer
			if err := json.Unmarshal(reply, &a); err != nil {
				return nil, fmt.Errorf("answer of node %s: %w", to, err)
			}
			switch a.Error {
			case "":
				return &a, nil
			case ErrorMoved, ErrorStopped:
				return nil, ErrMoved
			case ErrorNotFound:
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
		case <-halted:
			_, _ = c.store.SignalWithdraw(context.WithoutCancel(ctx), id)
			return nil, ErrHalted
		}
		// Is the owner still there? A request to a node that died is
		// withdrawn, and goes to the execution's next owner.
		if time.Since(checked) < c.cfg.Lease/4 {
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
			return nil, ErrMoved
		}
		// The node took the request: it may still carry it out (a node
		// that stops answers what it took before it lets its executions
		// go), so its answer is awaited while it lives.
		if live, err := c.store.NodeLive(ctx, to); err != nil || live {
			continue
		}
		return nil, ErrMoved // it died without answering
	}
}

// Handler carries out the requests of other nodes, as the owner of their
// executions: the engine.
type Handler interface {
	// Begin counts a request being carried out, which the engine's stop
	// waits for before the node lets its executions go; false once the
	// engine stops. End ends what Begin counted.
	Begin() bool
	End()
	// Stopped reports whether the engine stopped: no more requests are
	// taken.
	Stopped() bool
	// CarryOut does what a request asks.
	CarryOut(req *Request) Answer
}

// Serve carries out the requests other nodes send this one, until ctx
// ends or the lease is lost.
func (c *Node) Serve(ctx context.Context, h Handler) {
	t := time.NewTicker(SignalPoll)
	defer t.Stop()
	var handlers sync.WaitGroup
	defer handlers.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.lost:
			return
		case <-c.signals:
		case <-t.C:
		}
		for ctx.Err() == nil && !h.Stopped() {
			const batch = 64
			sigs, err := c.store.SignalTake(ctx, c.cfg.ID, batch)
			if err != nil {
				if ctx.Err() == nil {
					c.log.Warn("engine: taking requests failed", "error", err)
				}
				break
			}
			for _, s := range sigs {
				c.handling <- struct{}{}
				if !h.Begin() {
					// Taken as the node stops: answered at once, the
					// sender asks the next owner.
					<-c.handling
					c.answer(ctx, s, &Answer{Error: ErrorStopped})
					continue
				}
				handlers.Go(func() {
					defer h.End()
					defer func() { <-c.handling }()
					c.handle(ctx, h, s)
				})
			}
			if len(sigs) < batch {
				break
			}
		}
	}
}

// handle carries out one request and answers it.
func (c *Node) handle(ctx context.Context, h Handler, s store.Signal) {
	var req Request
	var a Answer
	if err := json.Unmarshal(s.Body, &req); err != nil {
		a.Error = fmt.Sprintf("bad request: %v", err)
	} else {
		a = h.CarryOut(&req)
	}
	c.answer(ctx, s, &a)
}

// answer writes the answer to a request.
func (c *Node) answer(ctx context.Context, s store.Signal, a *Answer) {
	body, _ := json.Marshal(a)
	if err := c.store.SignalAnswer(context.WithoutCancel(ctx), s.ID, body); err != nil {
		c.log.Warn("engine: answering a request failed", "sender", s.Sender, "error", err)
	}
}
