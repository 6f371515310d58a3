package notify

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"stepwise/store"
)

// Destination takes events.
type Destination interface {
	// Name identifies the destination: its cursor's key in the store.
	Name() string
	// Deliver hands events over, in order: all of them, or an error (a
	// failed batch is delivered again, whole).
	Deliver(ctx context.Context, events []Delivery) error
}

// Delivery is an event to deliver: its id and its JSON.
type Delivery struct {
	ID   string
	Body []byte
}

// Stats are hooks for the metrics; nil fields are skipped.
type Stats struct {
	// Delivered counts events a destination took.
	Delivered func(destination string, n int)
	// Failed counts a destination's failed deliveries.
	Failed func(destination string, err error)
	// Lag reports how long the oldest event a destination has not yet
	// taken has waited (0 when it is up to date).
	Lag func(destination string, lag time.Duration)
}

// Options configure a Deliverer.
type Options struct {
	// Poll is how often each destination looks for new notices when
	// nothing nudges it; 0 means a second.
	Poll time.Duration
	// Batch is the most events delivered at once; 0 means what the
	// destination asks for (a BatchSize method), or else 100.
	Batch int
	// Linger is how long a destination waits after a nudge before it
	// reads, so that the notices of many steps go together (one request,
	// one write and sync, one cursor update); 0 means 50 ms.
	Linger time.Duration
	// MaxBackoff bounds the wait between retries of a failing
	// destination; 0 means a minute.
	MaxBackoff time.Duration
	// Leads, when set, says whether this server delivers: of the servers
	// sharing a database, one does, and another takes over from the
	// destinations' stored cursors when it goes. It is asked before
	// every batch.
	Leads  func(ctx context.Context) bool
	Stats  Stats
	Logger *slog.Logger
}

// Deliverer delivers the outbox's notices to its destinations.
type Deliverer struct {
	exec    store.Executor
	dests   []Destination
	opts    Options
	log     *slog.Logger
	wake    []chan struct{}
	offered []*offered
	wg      sync.WaitGroup
}

// offeredMax bounds the notices a destination holds in memory; past it,
// it reads them from the store.
const offeredMax = 8192

// offered are the committed notices the engine handed a destination
// (Offer), in ID order, so that a destination keeping up reads nothing
// from the store. A notice not offered, or offered late or while the
// destination was behind, is read from the store: the store is the
// truth, memory a shortcut.
type offered struct {
	mu      sync.Mutex
	notices []*store.OutboxEvent
	look    atomic.Bool // Nudge: read the store when woken
}

// add inserts the notices of a transaction (they share an ID) in ID
// order, all of them or, past the bound, none.
func (o *offered) add(notices []*store.OutboxEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.notices)+len(notices) > offeredMax {
		return
	}
	for _, n := range notices {
		i := len(o.notices)
		for i > 0 && o.notices[i-1].ID > n.ID {
			i--
		}
		o.notices = slices.Insert(o.notices, i, n)
	}
}

// clear forgets the notices offered.
func (o *offered) clear() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.notices = nil
}

// take returns the notices that follow cursor without a gap (IDs
// cursor+1, cursor+2, ..., each ID whole) until it has at least limit,
// and forgets those up to cursor. It returns nil when the notices after
// cursor are not in memory, and says whether later ones are (a gap the
// store fills).
func (o *offered) take(cursor int64, limit int) (notices []*store.OutboxEvent, gap bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	skip := 0
	for skip < len(o.notices) && o.notices[skip].ID <= cursor {
		skip++
	}
	end, want := skip, cursor+1
	for end < len(o.notices) && end-skip < limit && o.notices[end].ID == want {
		for end < len(o.notices) && o.notices[end].ID == want {
			end++
		}
		want++
	}
	if end == skip {
		o.notices = o.notices[skip:]
		return nil, len(o.notices) > 0
	}
	notices = slices.Clone(o.notices[skip:end])
	o.notices = slices.Delete(o.notices, 0, end)
	return notices, false
}

// New makes a deliverer; Run starts it.
func New(exec store.Executor, dests []Destination, opts Options) *Deliverer {
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Linger <= 0 {
		opts.Linger = 50 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = time.Minute
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Deliverer{exec: exec, dests: dests, opts: opts, log: log}
	for range dests {
		d.wake = append(d.wake, make(chan struct{}, 1))
		d.offered = append(d.offered, &offered{})
	}
	return d
}

// Offer hands the destinations notices just committed (with their IDs),
// so that they need not read them back, and wakes them.
func (d *Deliverer) Offer(notices []*store.OutboxEvent) {
	for _, o := range d.offered {
		o.add(notices)
	}
	d.wakeAll()
}

// Nudge tells the destinations that notices were committed that they
// were not offered: they read the store.
func (d *Deliverer) Nudge() {
	for _, o := range d.offered {
		o.look.Store(true)
	}
	d.wakeAll()
}

func (d *Deliverer) wakeAll() {
	for _, w := range d.wake {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

// Run delivers until ctx ends, then waits for the deliveries in flight.
func (d *Deliverer) Run(ctx context.Context) {
	for i, dest := range d.dests {
		batch := d.opts.Batch
		if s, ok := dest.(interface{ BatchSize() int }); ok && batch <= 0 {
			batch = s.BatchSize()
		}
		if batch <= 0 {
			batch = 100
		}
		d.wg.Go(func() { d.loop(ctx, dest, batch, d.wake[i], d.offered[i]) })
	}
	d.wg.Go(func() { d.prune(ctx) })
	d.wg.Wait()
}

// loop delivers to one destination.
func (d *Deliverer) loop(ctx context.Context, dest Destination, batch int, wake <-chan struct{}, mem *offered) {
	name := dest.Name()
	backoff := time.Duration(0)
	cursor := int64(-1) // read from the store first; only this loop moves it
	// look says whether to read the store when memory holds nothing that
	// follows the cursor: at the start, after a failure, when polling,
	// and while a batch read from it came back full. Woken by an offer,
	// the loop reads only memory (unless it finds a gap).
	look := true
	var err error
	defer func() {
		// Drain unless the destination was failing (then the rest waits).
		if cursor >= 0 && (err == nil || ctx.Err() != nil) {
			d.drain(ctx, dest, batch, mem, &cursor)
		}
	}()
	for {
		wait := d.opts.Poll
		if d.opts.Leads != nil && !d.opts.Leads(ctx) {
			// Another server delivers: what it delivers moves the
			// stored cursor, read again if this one comes to lead.
			cursor, look, err = -1, true, nil
			mem.clear()
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			continue
		}
		var more bool
		more, err = d.deliverOnce(ctx, dest, batch, mem, &cursor, look)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if d.opts.Stats.Failed != nil {
				d.opts.Stats.Failed(name, err)
			}
			backoff = min(max(2*backoff, 200*time.Millisecond), d.opts.MaxBackoff)
			wait = backoff/2 + rand.N(backoff/2+1)
			d.log.WarnContext(ctx, "notify: delivery failed; retrying", "destination", name, "error", err, "retry_in", wait.Round(time.Millisecond))
		case more:
			backoff = 0
			continue
		default:
			backoff = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
			look = err != nil || mem.look.Swap(false)
			if err != nil {
				// A failing destination keeps its back-off.
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				break
			}
			t.Stop()
			// Let the notices of the steps committing now join this batch.
			select {
			case <-ctx.Done():
				return
			case <-time.After(d.opts.Linger):
			}
		case <-t.C:
			look = true
		}
	}
}

// drainTime bounds the delivery of what is left when the deliverer stops.
const drainTime = 2 * time.Second

// drain delivers, for a while, the notices committed before the deliverer
// was stopped (ctx ended), so that a server shut down tells of its last
// changes; what is left waits in the outbox for the next start.
func (d *Deliverer) drain(ctx context.Context, dest Destination, batch int, mem *offered, cursor *int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTime)
	defer cancel()
	for {
		more, err := d.deliverOnce(ctx, dest, batch, mem, cursor, true)
		if err != nil || !more {
			return
		}
	}
}

// deliverOnce delivers the next batch after the destination's cursor,
// from memory when the notices were offered or else from the store (when
// look says to, or memory has a gap), and moves the cursor. It says
// whether more may be waiting (the batch was full).
func (d *Deliverer) deliverOnce(ctx context.Context, dest Destination, batch int, mem *offered, cursor *int64, look bool) (bool, error) {
	name := dest.Name()
	if *cursor < 0 {
		c, err := d.exec.OutboxCursor(ctx, name)
		if err != nil {
			return false, err
		}
		*cursor = c
	}
	notices, gap := mem.take(*cursor, batch)
	var err error
	if notices == nil {
		if !look && !gap {
			return false, nil
		}
		notices, err = d.exec.OutboxList(ctx, *cursor, batch)
	}
	if err != nil || len(notices) == 0 {
		if err == nil && d.opts.Stats.Lag != nil {
			d.opts.Stats.Lag(name, 0)
		}
		return false, err
	}
	if d.opts.Stats.Lag != nil {
		d.opts.Stats.Lag(name, time.Since(notices[0].CreatedAt))
	}
	events := make([]Delivery, 0, len(notices))
	for _, n := range notices {
		body, err := Render(n.Body)
		if err != nil {
			// A notice no destination could ever read: skip it, loudly.
			d.log.ErrorContext(ctx, "notify: unreadable notice skipped", "destination", name, "notice", n.ID, "error", err)
			continue
		}
		events = append(events, Delivery{ID: eventID(body), Body: body})
	}
	if len(events) > 0 {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = dest.Deliver(dctx, events)
		cancel()
		if err != nil {
			return false, err
		}
	}
	// The cursor moves once the destination took the events: a crash
	// before this line delivers them again, with the same ids.
	last := notices[len(notices)-1].ID
	if err := d.exec.OutboxCursorSet(context.WithoutCancel(ctx), name, last); err != nil {
		return false, err
	}
	*cursor = last
	if d.opts.Stats.Delivered != nil {
		d.opts.Stats.Delivered(name, len(events))
	}
	return len(notices) >= batch, nil
}

// prune deletes the notices every destination has taken, now and then.
func (d *Deliverer) prune(ctx context.Context) {
	t := time.NewTicker(max(10*d.opts.Poll, 10*time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := d.pruneOnce(ctx); err != nil && ctx.Err() == nil {
			d.log.WarnContext(ctx, "notify: pruning the outbox failed", "error", err)
		}
	}
}

// pruneOnce deletes, in small batches, the notices up to the lowest
// cursor of the destinations.
func (d *Deliverer) pruneOnce(ctx context.Context) error {
	if len(d.dests) == 0 {
		return nil
	}
	lowest := int64(-1)
	for _, dest := range d.dests {
		c, err := d.exec.OutboxCursor(ctx, dest.Name())
		if err != nil {
			return err
		}
		if lowest < 0 || c < lowest {
			lowest = c
		}
	}
	for lowest > 0 {
		n, err := d.exec.OutboxDelete(ctx, lowest, 500)
		if err != nil || n < 500 {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}
