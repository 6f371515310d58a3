package queue

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"stepwise/wiring"
)

// longPoll is how long a receive waits for a message (seconds), as
// Lambda's pollers do; a removed wire's receive is cut short. (A
// message the queue gave to a receive cut short comes back after its
// visibility timeout, as with any poller that goes away.)
var longPoll int32 = 20

// poller reads one queue and hands what it gets to handle.
type poller struct {
	env    *wiring.Env
	wire   wiring.Wire
	client *sqs.Client
	url    string
	// batch is the most messages handled at once; window how long to
	// gather them (zero: what one receive gives).
	batch  int
	window time.Duration
	// handle delivers msgs; it returns the ids of the messages to keep
	// (not delete), or an error when none is to be deleted.
	handle func(ctx context.Context, msgs []sqstypes.Message) (keep map[string]bool, err error)
}

// pollers are a kind's running pollers, stopped by their remove or all
// by stopAll.
type pollers struct {
	mu      sync.Mutex
	closed  bool
	running map[*poller]func()
}

// start runs p until its remove or stopAll; remove waits for it to stop.
func (ps *pollers) start(p *poller) (func(), error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return nil, errors.New("the server is stopping")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.run(ctx)
	}()
	stop := func() {
		cancel()
		<-done
	}
	if ps.running == nil {
		ps.running = map[*poller]func(){}
	}
	ps.running[p] = stop
	var once sync.Once
	return func() {
		once.Do(func() {
			ps.mu.Lock()
			delete(ps.running, p)
			ps.mu.Unlock()
			stop()
		})
	}, nil
}

func (ps *pollers) stopAll() {
	ps.mu.Lock()
	ps.closed = true
	running := ps.running
	ps.running = nil
	ps.mu.Unlock()
	for _, stop := range running {
		stop()
	}
}

func (p *poller) run(ctx context.Context) {
	for ctx.Err() == nil {
		msgs, err := p.receive(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			p.env.Log.Warn("wiring: receive failed", "stack", p.wire.Stack, "wire", p.wire.ID, "error", err)
			p.env.Delivered(p.wire, 0, err)
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
			continue
		}
		if len(msgs) == 0 {
			continue
		}
		keep, err := p.handle(ctx, msgs)
		if err != nil {
			continue // the messages come back after their visibility timeout
		}
		// Delivered: deleted even when stopping.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		p.delete(dctx, msgs, keep)
		cancel()
	}
}

// receive gets up to batch messages: what one long poll gives, or what
// arrives within the window.
func (p *poller) receive(ctx context.Context) ([]sqstypes.Message, error) {
	var msgs []sqstypes.Message
	var deadline time.Time
	for {
		wait := longPoll
		if len(msgs) > 0 {
			left := time.Until(deadline)
			if left <= 0 || len(msgs) >= p.batch {
				return msgs, nil
			}
			wait = min(int32((left+time.Second-1)/time.Second), longPoll)
		}
		out, err := p.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(p.url),
			MaxNumberOfMessages:         int32(min(p.batch-len(msgs), 10)),
			WaitTimeSeconds:             wait,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			if len(msgs) > 0 && ctx.Err() == nil {
				return msgs, nil
			}
			return nil, err
		}
		if len(msgs) == 0 {
			deadline = time.Now().Add(p.window) // the window opens at the first message
		}
		msgs = append(msgs, out.Messages...)
		if p.window <= 0 || len(msgs) == 0 {
			return msgs, nil
		}
	}
}

// delete deletes msgs but those in keep.
func (p *poller) delete(ctx context.Context, msgs []sqstypes.Message, keep map[string]bool) {
	var entries []sqstypes.DeleteMessageBatchRequestEntry
	flush := func() {
		if len(entries) == 0 {
			return
		}
		out, err := p.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.url), Entries: entries})
		if err == nil && len(out.Failed) > 0 {
			err = errors.New(aws.ToString(out.Failed[0].Message))
		}
		if err != nil {
			p.env.Log.Warn("wiring: delete failed", "stack", p.wire.Stack, "wire", p.wire.ID, "error", err)
		}
		entries = entries[:0]
	}
	for _, m := range msgs {
		if keep[aws.ToString(m.MessageId)] {
			continue
		}
		entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(batchID(len(entries))), ReceiptHandle: m.ReceiptHandle})
		if len(entries) == 10 {
			flush()
		}
	}
	flush()
}

func batchID(i int) string { return string(rune('a' + i)) }
