package notify

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
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
	// Batch is the most events delivered at once; 0 means 100.
	Batch int
	// Linger is how long a destination waits after a nudge before it
	// reads, so that the notices of many steps go together (one request,
	// one write and sync, one cursor update); 0 means 50 ms.
	Linger time.Duration
	// MaxBackoff bounds the wait between retries of a failing
	// destination; 0 means a minute.
	MaxBackoff time.Duration
	Stats      Stats
	Logger     *slog.Logger
}

// Deliverer delivers the outbox's notices to its destinations.
type Deliverer struct {
	exec  store.Executor
	dests []Destination
	opts  Options
	log   *slog.Logger
	wake  []chan struct{}
	wg    sync.WaitGroup
}

// New makes a deliverer; Run starts it.
func New(exec store.Executor, dests []Destination, opts Options) *Deliverer {
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Batch <= 0 {
		opts.Batch = 100
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
	}
	return d
}

// Nudge tells the destinations that a notice was committed.
func (d *Deliverer) Nudge() {
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
		d.wg.Go(func() { d.loop(ctx, dest, d.wake[i]) })
	}
	d.wg.Go(func() { d.prune(ctx) })
	d.wg.Wait()
}

// loop delivers to one destination.
func (d *Deliverer) loop(ctx context.Context, dest Destination, wake <-chan struct{}) {
	name := dest.Name()
	backoff := time.Duration(0)
	cursor := int64(-1) // read from the store first; only this loop moves it
	for {
		wait := d.opts.Poll
		n, err := d.deliverOnce(ctx, dest, &cursor)
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
		case n == d.opts.Batch:
			backoff = 0
			continue // more may be waiting
		default:
			backoff = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
			if err != nil {
				<-t.C // a failing destination keeps its back-off
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
		}
	}
}

// deliverOnce delivers the next batch after the destination's cursor
// and moves the cursor.
func (d *Deliverer) deliverOnce(ctx context.Context, dest Destination, cursor *int64) (int, error) {
	name := dest.Name()
	if *cursor < 0 {
		c, err := d.exec.OutboxCursor(ctx, name)
		if err != nil {
			return 0, err
		}
		*cursor = c
	}
	notices, err := d.exec.OutboxList(ctx, *cursor, d.opts.Batch)
	if err != nil || len(notices) == 0 {
		if err == nil && d.opts.Stats.Lag != nil {
			d.opts.Stats.Lag(name, 0)
		}
		return 0, err
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
			return 0, err
		}
	}
	// The cursor moves once the destination took the events: a crash
	// before this line delivers them again, with the same ids.
	last := notices[len(notices)-1].ID
	if err := d.exec.OutboxCursorSet(context.WithoutCancel(ctx), name, last); err != nil {
		return 0, err
	}
	*cursor = last
	if d.opts.Stats.Delivered != nil {
		d.opts.Stats.Delivered(name, len(events))
	}
	return len(notices), nil
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
