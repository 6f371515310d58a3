package execlog

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"stepwise/engine"
	"stepwise/store"
)

// Defaults of Config.
const (
	DefaultQueueEvents   = 100_000
	DefaultQueueBytes    = 64 << 20
	DefaultFlushInterval = time.Second
	DefaultAttempts      = 3
	DefaultRetryBackoff  = 200 * time.Millisecond
)

const (
	// queueSteps bounds the steps waiting, besides their events and bytes.
	queueSteps = 16384
	// lookupTimeout bounds a read of a state machine's configuration.
	lookupTimeout = 5 * time.Second
	// maxSettings is how many state machine revisions' settings are kept;
	// past it the cache starts again.
	maxSettings = 4096
	// warnEvery spaces the warnings of failed writes.
	warnEvery = 30 * time.Second
)

// StateMachines reads state machines (store.Executor does).
type StateMachines interface {
	StateMachineGet(ctx context.Context, arn string) (*store.StateMachine, error)
}

// Config configures a Writer. Zero fields take their defaults.
type Config struct {
	// StateMachines reads the logging configuration of a state machine.
	StateMachines StateMachines
	// Sink is where the records go.
	Sink Sink
	// Logger is told of writes that failed; nil discards.
	Logger *slog.Logger
	// QueueEvents and QueueBytes bound the records waiting to be
	// written: past either, a step's records are dropped (and counted).
	QueueEvents int
	QueueBytes  int
	// FlushInterval is how long records wait for more to share a batch.
	FlushInterval time.Duration
	// Attempts is how many times a batch is tried before it is dropped;
	// RetryBackoff the wait after the first failure, growing linearly.
	Attempts     int
	RetryBackoff time.Duration
	// StreamID ends the names of the streams written (8 random hex
	// digits when empty).
	StreamID string
	// Now is the clock that names streams (time.Now when nil).
	Now func() time.Time
	// OnWritten and OnDropped, when set, are told of records written and
	// dropped (for metrics). OnDropped may be called with an execution's
	// lock held: it must be quick.
	OnWritten func(n int)
	OnDropped func(n int)
}

// Stats counts a Writer's records.
type Stats struct {
	// Written is how many records the sink took.
	Written uint64
	// Dropped is how many were lost: the queue was full, the sink failed
	// every attempt or refused them, or the configuration was unreadable.
	Dropped uint64
	// Queued is how many wait to be written.
	Queued int64
}

// Writer writes executions' logs. It is an engine.Observer; make one with
// New and end it with Close.
type Writer struct {
	cfg Config
	log *slog.Logger

	mu       sync.RWMutex
	settings map[settingsKey]*Settings // nil: logs nothing

	queue        chan *step
	queuedEvents atomic.Int64
	queuedBytes  atomic.Int64
	written      atomic.Uint64
	dropped      atomic.Uint64
	closed       atomic.Bool
	stop         chan context.Context
	done         chan struct{}

	// Owned by the worker.
	batches  map[Destination]*batch
	lastWarn time.Time
}

var _ engine.Observer = (*Writer)(nil)

type settingsKey struct{ arn, revision string }

// step is a committed step's events, queued.
type step struct {
	key settingsKey
	// settings are the state machine's when known at the time (known);
	// the events are then those its level logs, else all of them.
	settings     *Settings
	known        bool
	executionArn string
	redriveCount int
	events       []captured
	bytes        int
}

// batch is the records waiting for one stream.
type batch struct {
	dest   Destination
	events []Event
	size   int // as CloudWatch Logs counts it
}

// New starts a Writer.
func New(cfg Config) (*Writer, error) {
	if cfg.Sink == nil || cfg.StateMachines == nil {
		return nil, errors.New("execlog: Sink and StateMachines are required")
	}
	cfg.QueueEvents = cmp.Or(cfg.QueueEvents, DefaultQueueEvents)
	cfg.QueueBytes = cmp.Or(cfg.QueueBytes, DefaultQueueBytes)
	cfg.FlushInterval = cmp.Or(cfg.FlushInterval, DefaultFlushInterval)
	cfg.Attempts = cmp.Or(cfg.Attempts, DefaultAttempts)
	cfg.RetryBackoff = cmp.Or(cfg.RetryBackoff, DefaultRetryBackoff)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StreamID == "" {
		b := make([]byte, 4)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		cfg.StreamID = hex.EncodeToString(b)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Writer{
		cfg: cfg, log: log,
		settings: map[settingsKey]*Settings{},
		queue:    make(chan *step, queueSteps),
		stop:     make(chan context.Context),
		done:     make(chan struct{}),
		batches:  map[Destination]*batch{},
	}
	go w.run()
	return w, nil
}

// StepCommitted queues the records of a step's events. It copies what it
// keeps and never blocks.
func (w *Writer) StepCommitted(s *engine.CommittedStep) {
	if len(s.Events) == 0 || w.closed.Load() {
		return
	}
	row := s.Execution
	key := settingsKey{row.StateMachineArn, row.RevisionID}
	w.mu.RLock()
	st, known := w.settings[key]
	w.mu.RUnlock()
	if known && st == nil {
		return
	}
	it := &step{key: key, settings: st, known: known, executionArn: row.Arn, redriveCount: row.RedriveCount}
	var buf []byte
	for _, ev := range s.Events {
		if known && !st.Level.Logs(ev.Type) {
			continue
		}
		var c captured
		buf, c = capture(buf, ev)
		it.events = append(it.events, c)
	}
	if len(it.events) == 0 {
		return
	}
	it.bytes = len(buf)
	w.enqueue(it)
}

// Prime caches the logging settings of a state machine's revision from
// its row, as a create or an update stored it (service.Config's
// OnStateMachine), so that its executions log as it was configured when
// they started. Without it, settings are read when first needed, from the
// state machine as it is then.
func (w *Writer) Prime(sm *store.StateMachine) {
	st, err := ParseSettings(sm.LoggingConfiguration, sm.Name)
	if err != nil {
		st = nil
	}
	w.cache(settingsKey{sm.Arn, sm.RevisionID}, st)
}

func (w *Writer) cache(key settingsKey, st *Settings) {
	w.mu.Lock()
	if len(w.settings) >= maxSettings {
		clear(w.settings)
	}
	w.settings[key] = st
	w.mu.Unlock()
}

// BatchCommitted does nothing.
func (w *Writer) BatchCommitted([]*store.Step, time.Duration, error) {}

// Resumed does nothing.
func (w *Writer) Resumed(string, time.Duration) {}

// enqueue queues a step unless the queue is full.
func (w *Writer) enqueue(it *step) {
	n, b := int64(len(it.events)), int64(it.bytes)
	full := w.queuedEvents.Add(n) > int64(w.cfg.QueueEvents)
	full = w.queuedBytes.Add(b) > int64(w.cfg.QueueBytes) || full
	if !full {
		select {
		case w.queue <- it:
			return
		default:
		}
	}
	w.queuedEvents.Add(-n)
	w.queuedBytes.Add(-b)
	w.drop(len(it.events))
}

// Stats returns the Writer's counts.
func (w *Writer) Stats() Stats {
	return Stats{Written: w.written.Load(), Dropped: w.dropped.Load(), Queued: w.queuedEvents.Load()}
}

// Close writes what is queued and ends the Writer; records of steps told
// of afterwards are not written. It returns when done or when ctx ends.
func (w *Writer) Close(ctx context.Context) error {
	if w.closed.CompareAndSwap(false, true) {
		select {
		case w.stop <- ctx:
		case <-w.done:
		}
	}
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Writer) drop(n int) {
	if n <= 0 {
		return
	}
	w.dropped.Add(uint64(n))
	if w.cfg.OnDropped != nil {
		w.cfg.OnDropped(n)
	}
}

// run is the worker: it turns queued steps into records, batches them by
// stream and writes the batches.
func (w *Writer) run() {
	defer close(w.done)
	tick := time.NewTicker(w.cfg.FlushInterval)
	defer tick.Stop()
	ctx := context.Background()
	for {
		select {
		case it := <-w.queue:
			w.take(ctx, it)
		case <-tick.C:
			w.flushAll(ctx)
		case end := <-w.stop:
			for drained := false; !drained; {
				select {
				case it := <-w.queue:
					w.take(end, it)
				default:
					drained = true
				}
			}
			w.flushAll(end)
			if err := w.cfg.Sink.Close(); err != nil {
				w.log.Warn("execlog: closing the sink", "error", err)
			}
			return
		}
	}
}

// take makes the records of a queued step and adds them to their batch.
func (w *Writer) take(ctx context.Context, it *step) {
	w.queuedEvents.Add(-int64(len(it.events)))
	w.queuedBytes.Add(-int64(it.bytes))
	st := it.settings
	if !it.known {
		var err error
		if st, err = w.resolve(ctx, it.key); err != nil {
			w.drop(len(it.events))
			w.warn("execlog: reading a state machine's logging configuration", "state_machine_arn", it.key.arn, "error", err)
			return
		}
		if st == nil {
			return
		}
	}
	d := Destination{Group: st.LogGroup, Stream: streamName(st.StateMachineName, w.cfg.Now(), w.cfg.StreamID), Region: st.Region}
	for i := range it.events {
		c := &it.events[i]
		if !it.known && !st.Level.Logs(c.typ) {
			continue
		}
		msg := appendRecord(nil, c, it.executionArn, it.redriveCount, st.IncludeExecutionData)
		w.add(ctx, d, Event{Time: time.UnixMilli(c.millis), Message: msg})
	}
}

// resolve returns the settings of a state machine revision, reading them
// when not cached.
func (w *Writer) resolve(ctx context.Context, key settingsKey) (*Settings, error) {
	w.mu.RLock()
	st, ok := w.settings[key]
	w.mu.RUnlock()
	if ok {
		return st, nil
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	sm, err := w.cfg.StateMachines.StateMachineGet(ctx, key.arn)
	switch {
	case errors.Is(err, store.ErrNotFound):
		st = nil
	case err != nil:
		return nil, err
	default:
		// The state machine's configuration now. For an execution of an
		// older revision not primed (started before a restart), it may
		// have changed since the execution started.
		if st, err = ParseSettings(sm.LoggingConfiguration, sm.Name); err != nil {
			w.warn("execlog: unreadable logging configuration", "state_machine_arn", key.arn, "error", err)
			st = nil
		}
	}
	w.cache(key, st)
	return st, nil
}

// add adds an event to its stream's batch, writing the batch first when
// the event would take it past CloudWatch Logs' limits.
func (w *Writer) add(ctx context.Context, d Destination, e Event) {
	b := w.batches[d]
	if b == nil {
		b = &batch{dest: d}
		w.batches[d] = b
	}
	size := len(e.Message) + EventOverhead
	if len(b.events) > 0 && (len(b.events)+1 > MaxBatchEvents || b.size+size > MaxBatchBytes) {
		w.flush(ctx, b)
	}
	b.events = append(b.events, e)
	b.size += size
}

// flushAll writes every batch.
func (w *Writer) flushAll(ctx context.Context) {
	for d, b := range w.batches {
		w.flush(ctx, b)
		delete(w.batches, d)
	}
}

// flush writes a batch, trying up to Attempts times; a batch that fails
// every time is dropped.
func (w *Writer) flush(ctx context.Context, b *batch) {
	events := b.events
	b.events, b.size = nil, 0
	if len(events) == 0 {
		return
	}
	for attempt := 1; ; attempt++ {
		rejected, err := w.cfg.Sink.Put(ctx, b.dest, events)
		if err == nil {
			if n := len(events) - rejected; n > 0 {
				w.written.Add(uint64(n))
				if w.cfg.OnWritten != nil {
					w.cfg.OnWritten(n)
				}
			}
			if rejected > 0 {
				w.drop(rejected)
				w.warn("execlog: the destination refused log events", "log_group", b.dest.Group, "stream", b.dest.Stream, "refused", rejected)
			}
			return
		}
		if attempt >= w.cfg.Attempts || ctx.Err() != nil {
			w.drop(len(events))
			w.warn("execlog: dropping log events that could not be written", "log_group", b.dest.Group, "stream", b.dest.Stream,
				"events", len(events), "attempts", attempt, "error", err)
			return
		}
		w.log.Debug("execlog: writing log events failed; trying again", "log_group", b.dest.Group, "attempt", attempt, "error", err)
		select {
		case <-time.After(time.Duration(attempt) * w.cfg.RetryBackoff):
		case <-ctx.Done():
		}
	}
}

// warn logs a warning, at most one every warnEvery (the others at debug
// level).
func (w *Writer) warn(msg string, args ...any) {
	if now := time.Now(); now.Sub(w.lastWarn) >= warnEvery {
		w.lastWarn = now
		w.log.Warn(msg, args...)
		return
	}
	w.log.Debug(msg, args...)
}

// streamName names a log stream as Step Functions does:
// states/<state machine name>/<YYYY-MM-DD-HH-MM>/<id>.
func streamName(stateMachine string, at time.Time, id string) string {
	return "states/" + stateMachine + "/" + at.UTC().Format("2006-01-02-15-04") + "/" + id
}
