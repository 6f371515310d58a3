// Package quota throttles the server as AWS Step Functions throttles an
// account: a token bucket per API operation, and one for the state
// transitions of STANDARD executions.
//
// # Token buckets
//
// A Limit is a bucket of Bucket tokens that gains Refill tokens a second,
// up to Bucket. An API request takes one token from its operation's
// bucket; a request that finds the bucket empty is refused (the API
// answers ThrottlingException), and takes nothing. A step of an execution
// takes one token per state transition it makes from the StateTransition
// bucket, going into debt if need be: the step then waits until the debt
// is paid, so an execution is delayed, never failed.
//
//	request ──► bucket has a token? ──yes──► take it, run the operation
//	                    │
//	                    no ──► ThrottlingException (OnThrottle)
//
//	step (n transitions) ──► take n ──► wait until the bucket is back at 0
//	                                    (OnThrottled for each transition
//	                                     that found no token)
//
// Operations without a Limit are not throttled. The hooks (OnThrottle,
// OnConsume, OnThrottled) let metrics count throttled requests and
// transitions and the tokens taken, as CloudWatch's ThrottledEvents,
// ConsumedCapacity and ExecutionThrottled do.
package quota

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// StateTransition names the quota of state transitions, as AWS's service
// metric does.
const StateTransition = "StateTransition"

// Limit is a token bucket: at most Bucket tokens, refilled at Refill
// tokens a second.
type Limit struct {
	Bucket int
	Refill float64
}

// Quotas holds the token buckets. Set the hooks before it is used; its
// methods are safe for concurrent use, and a nil *Quotas throttles
// nothing.
type Quotas struct {
	// OnThrottle, when set, is called for each API request refused, with
	// its operation, and for each state transition held back, with
	// StateTransition (AWS: ThrottledEvents).
	OnThrottle func(operation string)
	// OnConsume, when set, is called with the tokens each API request
	// took from its operation's bucket, and each step's transitions from
	// StateTransition's (AWS: ConsumedCapacity).
	OnConsume func(operation string, tokens float64)
	// OnThrottled, when set, is called for each state transition held
	// back, with its execution's state machine (AWS: ExecutionThrottled).
	OnThrottled func(stateMachineArn string)

	limits      map[string]Limit
	ops         map[string]*rate.Limiter
	transitions *transitionBucket
	now         func() time.Time
}

// transitionBucket is the StateTransition bucket. Its mutex makes reading
// the tokens left and taking them one move, so a step knows how many of
// its transitions found none.
type transitionBucket struct {
	mu    sync.Mutex
	lim   *rate.Limiter
	burst int
}

// New returns the quotas of limits, by operation name (StateTransition
// for state transitions). Limits must be valid (see Parse).
func New(limits map[string]Limit) *Quotas {
	q := &Quotas{limits: limits, ops: map[string]*rate.Limiter{}, now: time.Now}
	for op, l := range limits {
		lim := rate.NewLimiter(rate.Limit(l.Refill), l.Bucket)
		if op == StateTransition {
			q.transitions = &transitionBucket{lim: lim, burst: l.Bucket}
			continue
		}
		q.ops[op] = lim
	}
	return q
}

// Limit returns the quota of an operation (or StateTransition).
func (q *Quotas) Limit(operation string) (Limit, bool) {
	if q == nil {
		return Limit{}, false
	}
	l, ok := q.limits[operation]
	return l, ok
}

// Transitions reports whether state transitions have a quota.
func (q *Quotas) Transitions() bool { return q != nil && q.transitions != nil }

// Allow takes a token for a request to operation. When the bucket is
// empty it takes nothing and returns false, with how long until the
// bucket holds a token again.
func (q *Quotas) Allow(operation string) (ok bool, retryAfter time.Duration) {
	if q == nil {
		return true, 0
	}
	lim := q.ops[operation]
	if lim == nil {
		return true, 0
	}
	now := q.now()
	if lim.AllowN(now, 1) {
		if q.OnConsume != nil {
			q.OnConsume(operation, 1)
		}
		return true, 0
	}
	if q.OnThrottle != nil {
		q.OnThrottle(operation)
	}
	return false, untilTokens(1-lim.TokensAt(now), float64(lim.Limit()))
}

// ReserveTransitions takes n state transitions of an execution of
// stateMachineArn from the StateTransition bucket and returns how long
// the caller must wait before they go ahead: 0 when the bucket held
// enough tokens. The tokens are taken at once, so steps that wait go
// ahead in the order they reserved.
func (q *Quotas) ReserveTransitions(stateMachineArn string, n int) time.Duration {
	if q == nil || q.transitions == nil || n <= 0 {
		return 0
	}
	b := q.transitions
	now := q.now()
	b.mu.Lock()
	if n <= b.burst && b.lim.AllowN(now, n) { // the bucket holds them
		b.mu.Unlock()
		if q.OnConsume != nil {
			q.OnConsume(StateTransition, float64(n))
		}
		return 0
	}
	left := b.lim.TokensAt(now)
	var wait time.Duration
	// A rate.Limiter reserves at most a bucketful at once: a step of more
	// transitions than that takes them a bucketful at a time, each
	// reservation waiting for the one before.
	for rest := n; rest > 0; {
		k := min(rest, b.burst)
		wait = b.lim.ReserveN(now, k).DelayFrom(now)
		rest -= k
	}
	b.mu.Unlock()
	if q.OnConsume != nil {
		q.OnConsume(StateTransition, float64(n))
	}
	if wait <= 0 {
		return 0
	}
	held := n - int(max(0, math.Floor(left)))
	held = min(max(held, 1), n)
	for range held {
		if q.OnThrottle != nil {
			q.OnThrottle(StateTransition)
		}
		if q.OnThrottled != nil {
			q.OnThrottled(stateMachineArn)
		}
	}
	return wait
}

// untilTokens is how long a bucket refilled at perSecond tokens a second
// takes to gain missing tokens, rounded up to the millisecond.
func untilTokens(missing, perSecond float64) time.Duration {
	if missing <= 0 || perSecond <= 0 {
		return time.Millisecond
	}
	d := time.Duration(math.Ceil(missing / perSecond * 1000))
	return max(d, 1) * time.Millisecond
}
