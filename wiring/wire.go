package wiring

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Wire is one event source of a deployed stack: the events of Source go
// to Target.
type Wire struct {
	// Stack is the stack the wire is of (the Host sets it).
	Stack string `json:"stack,omitempty"`
	// ID names the wire within its stack: the logical id of the resource
	// that declares it, then "/" and the event's name for a SAM event
	// ("Worker/Queue").
	ID string `json:"id"`
	// Kind is who runs it: sqs, sns, s3, rule, schedule, api, ...
	Kind string `json:"kind"`
	// Source is the kind's own settings (a queue's ARN and batch size, a
	// rule's pattern, a route's method and path), as its package reads
	// them.
	Source json.RawMessage `json:"source,omitempty"`
	// Target is where the events go.
	Target Target `json:"target"`
}

// Target is where a wire's events go.
type Target struct {
	// Type is function, statemachine, queue, topic or bus.
	Type string `json:"type"`
	// ARN is the target's ARN (a queue's ARN; its URL is in URL).
	ARN string `json:"arn"`
	// Name is a function's or a state machine's name, a bus's name.
	Name string `json:"name,omitempty"`
	// URL is a queue's URL.
	URL string `json:"url,omitempty"`
}

// Target types.
const (
	ToFunction     = "function"
	ToStateMachine = "statemachine"
	ToQueue        = "queue"
	ToTopic        = "topic"
	ToBus          = "bus"
)

// Same says whether two wires are the same: a wire deployed again
// unchanged keeps running as it was.
func (w Wire) Same(o Wire) bool {
	return w.Stack == o.Stack && w.ID == o.ID && w.Kind == o.Kind && w.Target == o.Target &&
		bytes.Equal(compact(w.Source), compact(o.Source))
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

// Env is what the kinds reach the rest of the server through.
type Env struct {
	// Invoke invokes a local function by name with payload, as Lambda's
	// Invoke does (RequestResponse): result is its answer; functionError
	// is set when the function failed (result is then its error
	// payload); err is a failure to invoke it at all (no such function).
	Invoke func(ctx context.Context, function string, payload []byte) (result []byte, functionError bool, err error)
	// Call calls an operation of the Step Functions API in process
	// (StartExecution, StartSyncExecution, SendTaskSuccess...) with its
	// JSON input; an error of the API is an *awsjson.Error-like error
	// whose message is AWS's.
	Call func(ctx context.Context, operation string, input []byte) ([]byte, error)
	// AWS gives the SDK configuration for calls to a service ("sqs",
	// "sns", "s3", "events") at the endpoint given for it (serve
	// --aws-endpoint, --endpoint), its BaseEndpoint set; with no endpoint
	// for the service it returns an error saying so: the kinds that read
	// from a service (queues, topics, buckets) then do not run.
	AWS func(ctx context.Context, service string) (aws.Config, error)
	// Region and Account are the server's.
	Region, Account string
	// APIAddr is where the APIs' routes are served (serve --api-addr;
	// empty: the api kind's default).
	APIAddr string
	// Log is where the kinds log.
	Log *slog.Logger
	// PutEvent puts an event already in EventBridge's envelope (an AWS
	// service's, S3's "Object Created") on the local bus named bus, as
	// it is; nil: there is no local bus.
	PutEvent func(ctx context.Context, bus string, event []byte) error

	// delivered is the Host's record of deliveries (Delivered).
	delivered func(w Wire, n int, err error)
}

// Delivered records that a wire delivered n events (err: the delivery
// failed), for the wiring's list.
func (e *Env) Delivered(w Wire, n int, err error) {
	if e.delivered != nil {
		e.delivered(w, n, err)
	}
}

// A Kind runs the wires of one kind.
type Kind interface {
	// Add starts delivering w's events. The returned remove stops it
	// and deletes what Add made for it (a subscription); a wire that
	// cannot run (its queue is not there) returns an error saying why,
	// and is listed with it.
	Add(ctx context.Context, w Wire) (remove func(), err error)
	// Close stops the kind's wires and anything it serves, keeping what
	// their Add made: the server stops, and its next start adds them
	// again.
	Close()
}
