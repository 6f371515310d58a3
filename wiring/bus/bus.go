// Package bus is the local event bus: it holds every deployed rule
// (wires of kind "rule"), takes the events put on it (PutEvents, served
// by the server at AWSEvents.PutEvents, and the events:putEvents Task),
// and delivers each event to the targets of the rules whose pattern it
// matches, as EventBridge does: in its envelope, or as the target's
// Input, InputPath or InputTransformer make it, retried per the
// target's RetryPolicy and sent to its dead-letter queue after.
package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"stepwise/wiring"
)

// Kind is the name of the rules' wire kind.
const Kind = "rule"

func init() {
	wiring.Register(Kind, func(env *wiring.Env) (wiring.Kind, error) { return New(env), nil })
}

// Rule is a rule's target, a wire's Source: one wire per target.
type Rule struct {
	// Name and ARN are the rule's.
	Name string `json:"name"`
	ARN  string `json:"arn,omitempty"`
	// Bus is the name of the bus the rule is on ("" : default).
	Bus string `json:"bus,omitempty"`
	// Pattern is the rule's event pattern (JSON text).
	Pattern string `json:"pattern"`
	// State is ENABLED (""), DISABLED or ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS.
	State string `json:"state,omitempty"`
	// TargetID is the target's Id.
	TargetID string `json:"targetId,omitempty"`
	// Input, InputPath, InputTransformer: at most one, what the target
	// gets instead of the event.
	Input            string            `json:"input,omitempty"`
	InputPath        string            `json:"inputPath,omitempty"`
	InputTransformer *InputTransformer `json:"inputTransformer,omitempty"`
	// RetryPolicy and DeadLetterArn: how failed deliveries are retried,
	// and the queue they end in.
	RetryPolicy   *RetryPolicy `json:"retryPolicy,omitempty"`
	DeadLetterArn string       `json:"deadLetterArn,omitempty"`
}

// RetryPolicy is a target's RetryPolicy.
type RetryPolicy struct {
	MaximumRetryAttempts     *int `json:"MaximumRetryAttempts,omitempty"`
	MaximumEventAgeInSeconds *int `json:"MaximumEventAgeInSeconds,omitempty"`
}

// Check refuses a rule EventBridge would refuse.
func (r *Rule) Check() error {
	if r.Name == "" {
		return errors.New("a rule needs a name")
	}
	if _, err := ParsePattern(r.Pattern); err != nil {
		return err
	}
	switch r.State {
	case "", "ENABLED", "DISABLED", "ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS":
	default:
		return fmt.Errorf("rule %s: State %q is not ENABLED or DISABLED", r.Name, r.State)
	}
	n := 0
	if r.Input != "" {
		n++
		if v, err := decodeJSON([]byte(r.Input)); err != nil || v == nil && r.Input != "null" {
			return fmt.Errorf("rule %s, target %s: Input is not valid JSON", r.Name, r.TargetID)
		}
	}
	if r.InputPath != "" {
		n++
		if _, err := parsePath(r.InputPath); err != nil {
			return fmt.Errorf("rule %s, target %s: InputPath: %w", r.Name, r.TargetID, err)
		}
	}
	if r.InputTransformer != nil {
		n++
		if err := r.InputTransformer.check(); err != nil {
			return fmt.Errorf("rule %s, target %s: %w", r.Name, r.TargetID, err)
		}
	}
	if n > 1 {
		return fmt.Errorf("rule %s, target %s: only one of Input, InputPath and InputTransformer may be given", r.Name, r.TargetID)
	}
	if p := r.RetryPolicy; p != nil {
		if a := p.MaximumRetryAttempts; a != nil && (*a < 0 || *a > 185) {
			return fmt.Errorf("rule %s, target %s: RetryPolicy.MaximumRetryAttempts %d is not within 0..185", r.Name, r.TargetID, *a)
		}
		if a := p.MaximumEventAgeInSeconds; a != nil && (*a < 60 || *a > 86400) {
			return fmt.Errorf("rule %s, target %s: RetryPolicy.MaximumEventAgeInSeconds %d is not within 60..86400", r.Name, r.TargetID, *a)
		}
	}
	return nil
}

// Bus is the local event bus: the deployed rules, by bus.
type Bus struct {
	env *wiring.Env

	mu     sync.Mutex
	rules  map[string]*rule // by stack + "\x00" + wire id
	closed bool
	wg     sync.WaitGroup
	stop   chan struct{}

	// Backoff is the wait before a delivery's retry n (0-based); the
	// local schedule is bounded (RetryLimit, Backoff) where AWS's runs
	// up to 185 attempts over 24 hours.
	Backoff func(n int) time.Duration

	// self says whether an endpoint URL is the server's own (SetSelf).
	self func(endpoint string) bool
}

// SetSelf tells the bus how to know the server's own URL: events are
// not sent on to an endpoint for "events" that is the server itself.
func (b *Bus) SetSelf(isSelf func(endpoint string) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.self = isSelf
}

func (b *Bus) isSelf(endpoint string) bool {
	b.mu.Lock()
	self := b.self
	b.mu.Unlock()
	return self != nil && self(endpoint)
}

// RetryLimit is the most retries a delivery gets here.
const RetryLimit = 5

type rule struct {
	wire    wiring.Wire
	spec    Rule
	pattern *Pattern
}

// New makes a bus whose targets are reached through env.
func New(env *wiring.Env) *Bus {
	return &Bus{env: env, rules: map[string]*rule{}, stop: make(chan struct{}),
		Backoff: func(n int) time.Duration { return min(200*time.Millisecond<<n, 5*time.Second) }}
}

// Add holds a rule's target (wiring.Kind).
func (b *Bus) Add(_ context.Context, w wiring.Wire) (func(), error) {
	var spec Rule
	if err := json.Unmarshal(w.Source, &spec); err != nil {
		return nil, fmt.Errorf("rule settings: %w", err)
	}
	if err := spec.Check(); err != nil {
		return nil, err
	}
	p, _ := ParsePattern(spec.Pattern)
	switch w.Target.Type {
	case wiring.ToFunction, wiring.ToStateMachine, wiring.ToQueue, wiring.ToTopic, wiring.ToBus:
	default:
		return nil, fmt.Errorf("targets of type %q are not delivered to here", w.Target.Type)
	}
	key := w.Stack + "\x00" + w.ID
	r := &rule{wire: w, spec: spec, pattern: p}
	b.mu.Lock()
	b.rules[key] = r
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.rules[key] == r {
			delete(b.rules, key)
		}
	}, nil
}

// Close stops the deliveries under way (wiring.Kind).
func (b *Bus) Close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.stop)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

// Wait waits for the deliveries under way (tests).
func (b *Bus) Wait() { b.wg.Wait() }

// Put puts events on the local bus: each entry (checked before, see
// PutEvents) with its id goes to the targets of the enabled rules of
// its bus whose pattern it matches. Delivery is in the background.
func (b *Bus) Put(entries []Entry, ids []string) {
	now := time.Now()
	for i, e := range entries {
		ev := newEvent(e, b.env.Account, b.env.Region, now)
		if i < len(ids) && ids[i] != "" {
			ev.ID = ids[i]
		}
		raw, err := json.Marshal(ev)
		if err != nil {
			continue
		}
		b.dispatch(busName(e.EventBusName), raw, now, 0)
	}
}

// Matches says whether an enabled rule on the entry's bus matches it.
func (b *Bus) Matches(e Entry) bool {
	raw, err := json.Marshal(newEvent(e, b.env.Account, b.env.Region, time.Now()))
	if err != nil {
		return false
	}
	return len(b.matching(busName(e.EventBusName), raw)) > 0
}

func (b *Bus) matching(bus string, raw []byte) []*rule {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil
	}
	obj, _ := v.(map[string]any)
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*rule
	for _, r := range b.rules {
		if busName(r.spec.Bus) != bus || (r.spec.State != "" && r.spec.State != "ENABLED" && r.spec.State != "ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS") {
			continue
		}
		if r.pattern.MatchValue(obj) {
			out = append(out, r)
		}
	}
	return out
}

// dispatch delivers an event (its envelope's JSON) put on a bus.
func (b *Bus) dispatch(bus string, raw []byte, ingested time.Time, depth int) {
	rules := b.matching(bus, raw)
	b.mu.Lock()
	closed := b.closed
	if !closed {
		b.wg.Add(len(rules))
	}
	b.mu.Unlock()
	if closed {
		return
	}
	for _, r := range rules {
		go func() {
			defer b.wg.Done()
			b.deliver(r, raw, ingested, depth)
		}()
	}
}

// input is what r's target gets of an event.
func (r *rule) input(raw []byte, ingested time.Time) ([]byte, error) {
	s := r.spec
	switch {
	case s.Input != "":
		return []byte(s.Input), nil
	case s.InputPath != "":
		v, _ := decodeJSON(raw)
		sel, ok := selectPath(v, s.InputPath)
		if !ok {
			sel = nil
		}
		return json.Marshal(sel)
	case s.InputTransformer != nil:
		v, _ := decodeJSON(raw)
		return s.InputTransformer.apply(v, raw, s.ARN, s.Name, ingested.UTC().Format(time.RFC3339Nano)), nil
	}
	return raw, nil
}

// deliver sends an event to r's target, retried per its RetryPolicy,
// and to its dead-letter queue when it fails for good.
func (b *Bus) deliver(r *rule, raw []byte, ingested time.Time, depth int) {
	in, err := r.input(raw, ingested)
	if err == nil && r.wire.Target.Type == wiring.ToBus {
		if depth >= 5 {
			err = errors.New("the event went through more than 5 buses")
		} else {
			b.dispatch(busName(r.wire.Target.Name), raw, ingested, depth+1)
			b.env.Delivered(r.wire, 1, nil)
			return
		}
	}
	retries := RetryLimit
	maxAge := 24 * time.Hour
	if p := r.spec.RetryPolicy; p != nil {
		if p.MaximumRetryAttempts != nil {
			retries = min(retries, *p.MaximumRetryAttempts)
		}
		if p.MaximumEventAgeInSeconds != nil {
			maxAge = time.Duration(*p.MaximumEventAgeInSeconds) * time.Second
		}
	}
	ctx := context.Background()
	for attempt := 0; err == nil; attempt++ {
		sendErr := b.send(ctx, r, in)
		if sendErr == nil {
			b.env.Delivered(r.wire, 1, nil)
			return
		}
		b.log().Warn("rule target delivery failed", "rule", r.spec.Name, "target", r.wire.Target.ARN, "attempt", attempt+1, "error", sendErr)
		if attempt >= retries || time.Since(ingested) > maxAge {
			err = sendErr
			break
		}
		select {
		case <-time.After(b.Backoff(attempt)):
		case <-b.stop:
			return
		}
	}
	b.env.Delivered(r.wire, 0, err)
	b.log().Error("rule target delivery gave up", "rule", r.spec.Name, "target", r.wire.Target.ARN, "error", err)
	if r.spec.DeadLetterArn != "" {
		if dlqErr := b.deadLetter(ctx, r, raw, err); dlqErr != nil {
			b.log().Error("rule dead-letter queue", "rule", r.spec.Name, "queue", r.spec.DeadLetterArn, "error", dlqErr)
		}
	}
}

func (b *Bus) log() interface {
	Warn(string, ...any)
	Error(string, ...any)
} {
	if b.env.Log != nil {
		return b.env.Log
	}
	return nopLog{}
}

type nopLog struct{}

func (nopLog) Warn(string, ...any)  {}
func (nopLog) Error(string, ...any) {}

// send is one delivery to a target. A function is invoked
// asynchronously, as EventBridge does: its own failure is logged, not
// retried.
func (b *Bus) send(ctx context.Context, r *rule, in []byte) error {
	t := r.wire.Target
	if t.Type == wiring.ToFunction {
		if b.env.Invoke == nil {
			return errors.New("local functions are not served")
		}
		_, err := b.env.Deliver(ctx, t, in)
		var fe *wiring.FunctionError
		if errors.As(err, &fe) {
			b.log().Warn("rule target function failed", "rule", r.spec.Name, "function", fe.Function, "error", err)
			return nil
		}
		return err
	}
	_, err := b.env.Deliver(ctx, t, in)
	return err
}

// deadLetter sends an event that could not be delivered to the target's
// dead-letter queue, with the attributes EventBridge gives it.
func (b *Bus) deadLetter(ctx context.Context, r *rule, raw []byte, cause error) error {
	cfg, err := b.env.ServiceConfig(ctx, "sqs")
	if err != nil {
		return err
	}
	url, err := wiring.QueueURL(ctx, cfg, r.spec.DeadLetterArn)
	if err != nil {
		return err
	}
	attr := func(v string) sqstypes.MessageAttributeValue {
		return sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	msg := cause.Error()
	if len(msg) > 1000 {
		msg = msg[:1000]
	}
	_, err = sqs.NewFromConfig(cfg).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(string(raw)),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{
			"RULE_ARN": attr(r.spec.ARN), "TARGET_ARN": attr(r.wire.Target.ARN),
			"ERROR_CODE": attr("SDK_CLIENT_ERROR"), "ERROR_MESSAGE": attr(msg),
			"EXHAUSTED_RETRY_CONDITION": attr("MaximumRetryAttempts"), "RETRY_ATTEMPTS": attr(strconv.Itoa(RetryLimit)),
		}})
	return err
}

// PutEvent puts on the local bus busName ("" or an ARN: as
// EventBusName) one event already in EventBridge's envelope, as an AWS
// service sends it (S3's "Object Created"): it keeps its id, time,
// source and resources, aws.* sources included, and is not sent on to
// the endpoint (it came from there). An event that is not an envelope
// (a JSON object with version, id, detail-type, source, account, time,
// region, resources and an object detail) is refused.
func (b *Bus) PutEvent(onBus string, event []byte) error {
	var env envelope
	if err := json.Unmarshal(event, &env); err != nil {
		return fmt.Errorf("not an event: %w", err)
	}
	switch {
	case env.ID == "" || env.Source == "" || env.DetailType == "" || env.Time == "":
		return errors.New("not an event: id, source, detail-type and time are required")
	case env.Account == "" || env.Region == "":
		return errors.New("not an event: account and region are required")
	}
	if d, err := decodeJSON(env.Detail); err != nil {
		return errors.New("not an event: its detail is not JSON")
	} else if _, ok := d.(map[string]any); !ok {
		return errors.New("not an event: its detail is not an object")
	}
	if len(event) > MaxEventSize {
		return fmt.Errorf("the event is over %d bytes", MaxEventSize)
	}
	ingested := time.Now()
	if t, err := time.Parse(time.RFC3339, env.Time); err == nil {
		ingested = t
	}
	b.dispatch(busName(onBus), event, ingested, 0)
	return nil
}
