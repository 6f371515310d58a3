package tracing

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"stepwise/engine"
	"stepwise/history"
	"stepwise/interp"
	"stepwise/store"
)

const (
	// queueSteps bounds the steps waiting to become spans; past it a
	// step's events are dropped (and counted).
	queueSteps = 16384
	// batchSpans and flushEvery bound how long ended spans wait to be
	// exported.
	batchSpans = 512
	flushEvery = 500 * time.Millisecond
	// queueBatches bounds the batches waiting for the exporter; past it
	// a batch is dropped (and its spans counted).
	queueBatches = 64
	// exportTimeout bounds an export, its retries included (a Client's
	// own timeout is usually shorter: OTLPClient's is).
	exportTimeout = 2 * time.Minute
	// lookupTimeout bounds a read of the store.
	lookupTimeout = 5 * time.Second
	// maxSettings is how many state machine revisions' settings are kept.
	maxSettings = 4096
	// maxExecs bounds the executions whose open spans are held: past it
	// one is let go, its spans rebuilt from its history at its next step
	// (as after a restart; so are those of an execution another node
	// took over, which never end here).
	maxExecs = 65536
)

// Store is what the tracer reads: state machines' tracing configurations,
// the history of an execution resumed after a restart, and the map run a
// distributed Map's child execution belongs to (store.Executor has them).
type Store interface {
	StateMachineGet(ctx context.Context, arn string) (*store.StateMachine, error)
	EventList(ctx context.Context, p *store.EventListParams) ([]*store.Event, error)
	MapRunGet(ctx context.Context, arn string) (*store.MapRun, error)
	ExecutionGet(ctx context.Context, arn string) (*store.Execution, error)
}

// Config configures a Tracer.
type Config struct {
	// Client sends the spans (an OTLP client: NewClient), stopped by
	// Close.
	Client Client
	// Store reads state machines' tracing configurations and histories.
	// Required unless All.
	Store Store
	// All traces every execution, whatever its state machine's
	// tracingConfiguration says.
	All bool
	// Resource describes the process (service.name...); Resource's
	// default when nil.
	Resource []Attribute
	// Logger is told of exports that failed; nil discards.
	Logger *slog.Logger
	// Ratio, when in (0, 1), traces that share of the executions traced
	// (OpenTelemetry's traceidratio sampler): the choice is made by the
	// trace id, so it is the same after a restart and for every span of
	// a trace, a nested execution's included. 0 traces them all.
	Ratio float64
}

// Tracer makes every traced execution an OpenTelemetry trace, from the
// history events the engine commits. It is an engine.Observer; make one
// with New and end it with Close.
type Tracer struct {
	cfg Config
	log *slog.Logger

	mu       sync.RWMutex
	settings map[settingsKey]bool
	// bound samples: see sampled (0: every trace).
	bound uint64

	queue   chan *step
	closed  atomic.Bool
	dropped atomic.Uint64
	// warned is when dropping was last logged (Unix seconds).
	warned atomic.Int64
	flush  chan chan struct{}
	stop   chan struct{}
	done   chan struct{}

	// The exporter's: batches of ended spans, sent by the worker (and
	// Flush's marks); exported ends once done is and they are sent;
	// cancel stops an export under way when Close gives up.
	batches  chan batch
	exported chan struct{}
	cancel   context.CancelFunc
	exportCx context.Context

	// Owned by the worker.
	execs   map[string]*execTrace
	mapRuns map[string]SpanContext
	// buf is the ended spans, encoded (appendSpan), nspans of them.
	buf    []byte
	nspans int
	b      builder
	// The exporter's: the resource's attributes, the request being sent
	// and the batches' buffers sent, for the worker to use again.
	res  []attr
	req  []byte
	free chan []byte
}

var _ engine.Observer = (*Tracer)(nil)

type settingsKey struct{ arn, revision string }

// step is a committed step's events, queued.
type step struct {
	arn, stateMachineArn, revision, traceHeader, mapRunArn string
	known                                                  bool // the revision's settings were known to trace it
	events                                                 []event
}

// batch is n spans to export, encoded, or (done not nil) a mark Flush
// waits for.
type batch struct {
	spans []byte
	n     int
	done  chan struct{}
}

// New starts a Tracer.
func New(cfg Config) (*Tracer, error) {
	if cfg.Client == nil || (cfg.Store == nil && !cfg.All) {
		return nil, errors.New("tracing: Client, and Store unless All, are required")
	}
	if cfg.Resource == nil {
		cfg.Resource = Resource(context.Background(), "")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Tracer{
		cfg: cfg, log: log,
		settings: map[settingsKey]bool{},
		queue:    make(chan *step, queueSteps),
		flush:    make(chan chan struct{}),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		execs:    map[string]*execTrace{},
		mapRuns:  map[string]SpanContext{},
		batches:  make(chan batch, queueBatches),
		free:     make(chan []byte, 4),
		exported: make(chan struct{}),
	}
	t.exportCx, t.cancel = context.WithCancel(context.Background())
	t.b.ended = t.ended
	for _, a := range cfg.Resource {
		t.res = append(t.res, strAttr(a.Key, a.Value))
	}
	if cfg.Ratio > 0 && cfg.Ratio < 1 {
		t.bound = uint64(cfg.Ratio * (1 << 63))
	}
	go t.run()
	go t.exporter()
	return t, nil
}

// Prime caches whether a state machine's revision is traced, from its
// row as a create or an update stored it.
func (t *Tracer) Prime(sm *store.StateMachine) {
	on := Enabled(sm.TracingConfiguration)
	t.mu.Lock()
	if len(t.settings) >= maxSettings {
		clear(t.settings)
	}
	t.settings[settingsKey{sm.Arn, sm.RevisionID}] = on
	t.mu.Unlock()
}

// Enabled reads a tracingConfiguration as the store keeps it (the API's
// JSON, "" for none).
func Enabled(text string) bool {
	if text == "" {
		return false
	}
	var c struct {
		Enabled bool `json:"enabled"`
	}
	return json.Unmarshal([]byte(text), &c) == nil && c.Enabled
}

// traced says whether the execution's steps are traced; known is false
// when its revision's settings are yet to be read.
func (t *Tracer) traced(row *store.Execution) (on, known bool) {
	if t.cfg.All {
		on, known = true, true
	} else {
		t.mu.RLock()
		on, known = t.settings[keyOf(row.StateMachineArn, row.RevisionID)]
		t.mu.RUnlock()
	}
	if on && t.bound != 0 && !t.sampled(Parent(row.Arn, row.TraceHeader).TraceID()) {
		return false, true
	}
	return on, known
}

// sampled is the traceidratio sampler's choice (as the SDK's
// TraceIDRatioBased makes it): the trace id's last 8 bytes, shifted right
// once, below the ratio's share of 2^63.
func (t *Tracer) sampled(id TraceID) bool {
	return binary.BigEndian.Uint64(id[8:])>>1 < t.bound
}

// StepCommitted queues a step's events. It copies what it keeps and never
// blocks.
func (t *Tracer) StepCommitted(s *engine.CommittedStep) {
	if len(s.Events) == 0 || t.closed.Load() {
		return
	}
	row := s.Execution
	on, known := t.traced(row)
	if known && !on {
		return
	}
	st := steps.Get().(*step)
	*st = step{arn: row.Arn, stateMachineArn: row.StateMachineArn, revision: row.RevisionID, traceHeader: row.TraceHeader,
		mapRunArn: row.MapRunArn, known: known, events: slices.Grow(st.events[:0], len(s.Events))[:len(s.Events)]}
	for i, ev := range s.Events {
		st.events[i] = copyEvent(ev)
	}
	select {
	case t.queue <- st:
	default:
		t.drop(uint64(len(st.events)), "tracing: the span queue is full; events are dropped and traces miss spans")
		release(st)
	}
}

// steps are the queued steps let go, to use again: a step's events are
// most of what tracing allocates.
var steps = sync.Pool{New: func() any { return new(step) }}

// maxPooledEvents bounds the events of a step kept for the next.
const maxPooledEvents = 256

// release lets a step taken go to the pool.
func release(st *step) {
	events := st.events
	if cap(events) > maxPooledEvents {
		events = nil
	}
	clear(events)
	*st = step{events: events[:0]}
	steps.Put(st)
}

// drop counts n events or spans dropped, and says so at most once a
// minute: the tracer (or the collector) is behind, and these executions'
// traces will miss spans.
func (t *Tracer) drop(n uint64, msg string) {
	total := t.dropped.Add(n)
	if now := time.Now().Unix(); now-t.warned.Load() >= 60 && t.warned.Swap(now) != now {
		t.log.Warn(msg, "dropped_total", total)
	}
}

// BatchCommitted does nothing: spans are made of steps.
func (t *Tracer) BatchCommitted([]*store.Step, time.Duration, error) {}

// Resumed does nothing: a resumed execution's spans are rebuilt from its
// history when its next step comes.
func (t *Tracer) Resumed(string, time.Duration) {}

// TaskTraceParent is the W3C traceparent of a task's span, for the runner
// to pass on (a Lambda function, an HTTP endpoint, a nested execution);
// "" when the execution is not traced. It is what the span made of the
// task's scheduled event will be, whatever happens in between.
func (t *Tracer) TaskTraceParent(row *store.Execution, req *interp.TaskRequest) string {
	// Not known to be traced (its settings not read yet, as right after
	// a restart): nothing is passed on rather than a span that may
	// never be exported.
	if on, known := t.traced(row); !known || !on {
		return ""
	}
	parent := Parent(row.Arn, row.TraceHeader)
	return TraceParent(SpanContext{traceID: parent.TraceID(), spanID: TaskSpanID(row.Arn, req.StateName, req.Invocation)})
}

// Dropped is how many events (their step queue full) and spans (the
// export queue full) were dropped.
func (t *Tracer) Dropped() uint64 { return t.dropped.Load() }

// Flush exports what has been queued so far.
func (t *Tracer) Flush(ctx context.Context) error {
	ch := make(chan struct{})
	select {
	case t.flush <- ch:
	case <-t.done:
		return t.waitExported(ctx)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-ch:
	case <-ctx.Done():
		return ctx.Err()
	}
	// The spans are queued for export: a mark behind them says when
	// they are sent.
	mark := make(chan struct{})
	select {
	case t.batches <- batch{done: mark}:
	case <-t.exported:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-mark:
		return nil
	case <-t.exported:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *Tracer) waitExported(ctx context.Context) error {
	select {
	case <-t.exported:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close exports what is queued and shuts the exporter down; what is not
// sent when ctx ends is given up.
func (t *Tracer) Close(ctx context.Context) error {
	if t.closed.Swap(true) {
		return nil
	}
	close(t.stop)
	select {
	case <-t.done:
	case <-ctx.Done():
	}
	_ = t.waitExported(ctx)
	t.cancel()
	return t.cfg.Client.Stop(ctx)
}

func (t *Tracer) run() {
	defer close(t.done)
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	for {
		select {
		case st := <-t.queue:
			t.take(st)
			release(st)
			if t.nspans >= batchSpans {
				t.export()
			}
		case <-tick.C:
			// While the exporter is behind, spans gather into full
			// batches rather than fill its queue with small ones.
			if len(t.batches) == 0 {
				t.export()
			}
		case ch := <-t.flush:
			t.drain()
			t.export()
			close(ch)
		case <-t.stop:
			t.drain()
			t.export()
			return
		}
	}
}

func (t *Tracer) drain() {
	for {
		select {
		case st := <-t.queue:
			t.take(st)
			release(st)
		default:
			return
		}
	}
}

// export hands the ended spans to the exporter, never waiting for it: a
// batch it has no room for is dropped.
func (t *Tracer) export() {
	if t.nspans == 0 {
		return
	}
	select {
	case t.batches <- batch{spans: t.buf, n: t.nspans}:
		select {
		case t.buf = <-t.free:
		default:
			t.buf = nil
		}
	default:
		t.drop(uint64(t.nspans), "tracing: the export queue is full (the collector is slow or down); spans are dropped and traces miss them")
		t.buf = t.buf[:0]
	}
	t.nspans = 0
}

// exporter sends the batches, one at a time, until the worker is done
// and they are all sent (or Close gives up on them).
func (t *Tracer) exporter() {
	defer close(t.exported)
	for {
		select {
		case b := <-t.batches:
			t.send(b)
		case <-t.done:
			// The worker sends nothing more: what is queued is all.
			for {
				select {
				case b := <-t.batches:
					t.send(b)
				default:
					return
				}
			}
		}
	}
}

func (t *Tracer) send(b batch) {
	if b.done != nil {
		close(b.done)
		return
	}
	if t.exportCx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(t.exportCx, exportTimeout)
	defer cancel()
	t.req = append(requestHead(t.req[:0], t.res, scopeName, len(b.spans)), b.spans...)
	if err := t.cfg.Client.Export(ctx, t.req); err != nil {
		t.log.Warn("tracing: export failed", "spans", b.n, "error", err)
	}
	if cap(t.req) > maxKeptBuffer {
		t.req = nil
	}
	if cap(b.spans) <= maxKeptBuffer {
		select {
		case t.free <- b.spans[:0]:
		default:
		}
	}
}

// maxKeptBuffer bounds the buffers kept for the next batches.
const maxKeptBuffer = 4 << 20

func (t *Tracer) ended(s *span) {
	t.buf = appendSpan(t.buf, s)
	t.nspans++
}

// scopeName is the instrumentation scope of the spans.
const scopeName = "stepwise/observe/tracing"

// take turns a step's events into spans.
func (t *Tracer) take(st *step) {
	if !st.known && (!t.lookUp(st) || (t.bound != 0 && !t.sampled(Parent(st.arn, st.traceHeader).TraceID()))) {
		return
	}
	x := t.execs[st.arn]
	if x == nil {
		x = t.b.newExecTrace(st.arn, st.stateMachineArn, st.traceHeader)
		if st.mapRunArn != "" {
			if sc, ok := t.mapRun(st.mapRunArn); ok {
				tid, sid := sc.TraceID(), sc.SpanID()
				x.root.links = append(x.root.links, spanLink{traceID: tid, spanID: sid, attrs: []attr{strAttr("stepwise.link", "map_run")}})
			}
		}
		if len(t.execs) >= maxExecs {
			for arn := range t.execs {
				delete(t.execs, arn)
				break
			}
		}
		t.execs[st.arn] = x
		if first := st.events[0].id; first > 1 {
			t.replay(x, first)
		}
	}
	ended := false
	for i := range st.events {
		e := &st.events[i]
		switch e.typ {
		case history.EventExecutionSucceeded, history.EventExecutionFailed, history.EventExecutionAborted, history.EventExecutionTimedOut:
			ended = true
		case history.EventExecutionRedriven:
			ended = false
		}
		if x.root.start.IsZero() {
			x.root.start = e.at
		}
		if e.typ == history.EventMapRunStarted {
			t.mapRuns[e.mapRunArn] = SpanContext{traceID: x.traceID, spanID: MapRunSpanID(e.mapRunArn)}
		}
		t.b.apply(x, e)
	}
	if ended {
		// A redrive later finds its spans again in the history.
		delete(t.execs, st.arn)
		t.b.drop(x)
	} else {
		t.b.sweep(x)
	}
}

// replay rebuilds the open spans of an execution resumed after a restart
// (or a redrive), from its history before the event first: the spans
// that ended then were exported then.
func (t *Tracer) replay(x *execTrace, first int64) {
	if t.cfg.Store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	// The spans that ended then were exported then.
	ended := t.b.ended
	t.b.ended = func(*span) {}
	defer func() { t.b.ended = ended }()
	for after := int64(0); after < first-1; {
		page, err := t.cfg.Store.EventList(ctx, &store.EventListParams{ExecutionArn: x.arn, AfterID: after, Limit: 1000})
		if err != nil {
			t.log.Warn("tracing: reading a resumed execution's history failed", "execution_arn", x.arn, "error", err)
			return
		}
		if len(page) == 0 {
			return
		}
		for _, se := range page {
			if se.ID >= first {
				return
			}
			// The stored JSON is the API's: its timestamp is in epoch
			// seconds; the row has it as a time.
			var ev struct {
				history.Event
				Timestamp json.RawMessage `json:"timestamp"`
			}
			if err := json.Unmarshal(se.Body, &ev); err != nil {
				t.log.Warn("tracing: a stored history event is not readable", "execution_arn", x.arn, "event_id", se.ID, "error", err)
				after = se.ID
				continue
			}
			ev.Event.Timestamp = se.Timestamp
			e := copyEvent(&ev.Event)
			if x.root.start.IsZero() {
				x.root.start = e.at
			}
			t.b.apply(x, &e)
			after = se.ID
		}
		t.b.sweep(x)
	}
}

// mapRun is the span of a map run, from memory or, after a restart, from
// the store (its execution's trace).
func (t *Tracer) mapRun(arn string) (SpanContext, bool) {
	if sc, ok := t.mapRuns[arn]; ok {
		return sc, true
	}
	if t.cfg.Store == nil {
		return SpanContext{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	mr, err := t.cfg.Store.MapRunGet(ctx, arn)
	if err != nil {
		return SpanContext{}, false
	}
	parent, err := t.cfg.Store.ExecutionGet(ctx, mr.ExecutionArn)
	if err != nil {
		return SpanContext{}, false
	}
	sc := SpanContext{traceID: Parent(parent.Arn, parent.TraceHeader).TraceID(), spanID: MapRunSpanID(arn)}
	if len(t.mapRuns) >= maxSettings {
		clear(t.mapRuns)
	}
	t.mapRuns[arn] = sc
	return sc, true
}

// lookUp reads whether a step's revision is traced, caching the answer.
func (t *Tracer) lookUp(st *step) bool {
	key := keyOf(st.stateMachineArn, st.revision)
	t.mu.RLock()
	on, known := t.settings[key]
	t.mu.RUnlock()
	if known {
		return on
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	sm, err := t.cfg.Store.StateMachineGet(ctx, key.arn)
	if errors.Is(err, store.ErrNotFound) {
		// Deleted since: its executions are not traced (and not looked
		// up again).
		t.mu.Lock()
		t.settings[key] = false
		t.mu.Unlock()
		return false
	}
	if err != nil {
		t.log.Warn("tracing: reading a state machine's tracing configuration failed", "state_machine_arn", key.arn, "error", err)
		return false
	}
	on = Enabled(sm.TracingConfiguration)
	if sm.RevisionID == st.revision {
		t.mu.Lock()
		if len(t.settings) >= maxSettings {
			clear(t.settings)
		}
		t.settings[key] = on
		t.mu.Unlock()
	}
	return on
}

// keyOf is the settings' key of an execution's state machine and
// revision: a distributed Map's child execution runs under its parent
// state machine's ARN with "/<Map label>" added, and is traced as its
// parent's revision is.
func keyOf(stateMachineArn, revision string) settingsKey {
	if i := strings.LastIndexByte(stateMachineArn, '/'); i > 0 {
		stateMachineArn = stateMachineArn[:i]
	}
	return settingsKey{stateMachineArn, revision}
}
