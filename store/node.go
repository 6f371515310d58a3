package store

import (
	"context"
	"time"
)

// Fence is a node's lease on the executions it owns: the node's id and
// the epoch it registered with. It is a fencing token: once another node
// claimed an execution, or the node registered again, writes under the old
// fence are refused.
type Fence struct {
	Node  string
	Epoch int64
}

// NodeStore keeps the leases of the servers that share a database, and
// which of them owns each running execution. Lease times are the store's
// clock (the database server's, where there is one), so nodes need not
// agree on the time.
type NodeStore interface {
	// NodeRegister gives node a lease of ttl with a new epoch, higher
	// than any it had: the executions it owned under an earlier epoch
	// are no longer its own (it may claim them again).
	NodeRegister(ctx context.Context, node string, ttl time.Duration) (Fence, error)
	// NodeRenew extends f's lease to ttl from now; ErrFenced when the
	// lease ran out or the node registered again since.
	NodeRenew(ctx context.Context, f Fence, ttl time.Duration) error
	// NodeRelease ends f's lease and leaves the executions f owned with
	// no owner, for others to claim at once.
	NodeRelease(ctx context.Context, f Fence) error
	// ExecutionClaim makes up to limit running executions whose owner is
	// gone (none, a node whose lease ran out or that registered again, or
	// one unknown) f's own, and returns their ARNs. Each claimed
	// execution's version moves on, so a step its former owner prepared
	// is refused. ErrFenced when f's lease is not live.
	ExecutionClaim(ctx context.Context, f Fence, limit int) ([]string, error)
}

// Ownership is who owns an execution (Owner.Node "" for no one), whether
// that owner's lease is live, and whether the execution runs.
type Ownership struct {
	Owner   Fence
	Live    bool
	Running bool
}

// Signal is a request a node made of the node that owns an execution,
// and that node's answer.
type Signal struct {
	ID     int64
	Sender string
	Body   []byte
}

// Cluster is what servers sharing a database use to work as one, beyond
// NodeStore: who owns an execution, requests to an owner (signals), a
// queue of activity tasks that any node's workers take from, and
// wake-ups between nodes. A driver that implements it can be shared by
// many servers (PostgreSQL's); the engine runs as one node of a cluster
// only on such a driver.
type Cluster interface {
	// ExecutionOwner says who owns an execution; ErrNotFound when there
	// is none.
	ExecutionOwner(ctx context.Context, arn string) (Ownership, error)
	// ExecutionClaimOne makes one execution f's own when it is an
	// orphan (as ExecutionClaim) or is not running; false when a live
	// node owns it running. The execution's version moves on.
	ExecutionClaimOne(ctx context.Context, f Fence, arn string) (bool, error)

	// SignalSend queues a request of sender for node to, wakes to (on
	// ChannelSignal) and returns the request's id.
	SignalSend(ctx context.Context, sender, to string, body []byte) (int64, error)
	// SignalTake returns up to limit requests for node to not taken yet,
	// oldest first, and marks them taken.
	SignalTake(ctx context.Context, to string, limit int) ([]Signal, error)
	// SignalAnswer writes the answer to a request and wakes its sender
	// (on ChannelReply).
	SignalAnswer(ctx context.Context, id int64, reply []byte) error
	// SignalResult returns a request's answer, and deletes the request,
	// once there is one; ok is false until then. ErrNotFound when the
	// request is gone.
	SignalResult(ctx context.Context, id int64) (reply []byte, ok bool, err error)
	// SignalWithdraw deletes a request no one took; false when it was
	// taken already.
	SignalWithdraw(ctx context.Context, id int64) (bool, error)
	// SignalSweep deletes requests older than age (their senders gave
	// up, or died).
	SignalSweep(ctx context.Context, age time.Duration) error

	// ActivityEnqueue queues activity tasks for any node's workers, each
	// once, and wakes the nodes (on ChannelActivity, once for each
	// activity: its ARN, a newline and how many of its tasks were queued).
	ActivityEnqueue(ctx context.Context, tasks []QueuedTask) error
	// ActivityTake takes the oldest task of an activity off the queue
	// that node queued, or when there is none the oldest of all; ok is
	// false when there is none at all. Concurrent takers get distinct
	// tasks.
	ActivityTake(ctx context.Context, activityArn, node string) (executionArn, taskID string, ok bool, err error)
	// ActivityTakeMany takes up to n tasks of an activity off the queue
	// in one go, as ActivityTake takes one (those node queued first,
	// each oldest first), for n pollers; it takes none when there is none.
	ActivityTakeMany(ctx context.Context, activityArn, node string, n int) ([]QueuedTask, error)
	// ActivityDequeue removes a task that is no longer wanted.
	ActivityDequeue(ctx context.Context, executionArn, taskID string) error
	// ActivityQueued counts an activity's queued tasks.
	ActivityQueued(ctx context.Context, activityArn string) (int, error)

	// NodeLive says whether node has a live lease (under any epoch).
	NodeLive(ctx context.Context, node string) (bool, error)
	// NodeLeader returns the live node with the smallest id ("" for
	// none): the one that does what one node of a cluster does for all
	// (deliver events, delete old executions).
	NodeLeader(ctx context.Context) (string, error)

	// Notify wakes the listeners of channel.
	Notify(ctx context.Context, channel, payload string) error
	// Listen calls fn with every wake-up on channels until ctx ends or
	// the connection fails (its error returned); fn("", "") is called
	// first, once listening: wake-ups sent before then were missed.
	Listen(ctx context.Context, channels []string, fn func(channel, payload string)) error
}

// QueuedTask is an activity task queued for any node's workers by node
// Owner (its execution's owner): behind the others, or with Front ahead
// of them (one a poller gave back).
type QueuedTask struct {
	ActivityArn  string
	ExecutionArn string
	TaskID       string
	Owner        string
	Front        bool
}

// The wake-up channels of a Cluster.
const (
	ChannelSignal   = "stepwise_signal"   // payload: the node a request is for
	ChannelReply    = "stepwise_reply"    // payload: the id of the answered request
	ChannelActivity = "stepwise_activity" // payload: the activity ARN of queued tasks, "\n", their number
	ChannelReleased = "stepwise_released" // payload: the node that released its executions
)
