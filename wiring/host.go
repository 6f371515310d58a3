package wiring

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

var (
	kindsMu sync.Mutex
	kinds   = map[string]func(env *Env) (Kind, error){}
)

// Register makes newKind the constructor of the wires of kind name. The
// kinds' packages register in their init; registering a name twice
// panics.
func Register(name string, newKind func(env *Env) (Kind, error)) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	if _, dup := kinds[name]; dup {
		panic("wiring: kind " + name + " registered twice")
	}
	kinds[name] = newKind
}

func constructor(name string) func(env *Env) (Kind, error) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	return kinds[name]
}

// Host runs the wires of every deployed stack.
type Host struct {
	env *Env

	mu     sync.Mutex
	closed bool
	kinds  map[string]Kind
	wires  map[string]map[string]*running // stack → wire id → its run
	// stats are the wires' deliveries by "stack\x00id", read by
	// delivered without mu: a kind's remove and Close wait for their
	// deliveries, which record themselves, while SetWires and Close
	// hold mu.
	stats sync.Map // string → *wireStats
}

// wireStats are a wire's deliveries.
type wireStats struct {
	mu        sync.Mutex
	delivered int64
	last      time.Time
	lastError string
}

func statsKey(stack, id string) string { return stack + "\x00" + id }

// running is a wire the host holds, running or not.
type running struct {
	wire    Wire
	remove  func() // nil: not running
	problem string // why it does not run
	stats   *wireStats
}

// Status is one wire as the wiring's list shows it.
type Status struct {
	Wire
	// Running: its events are being delivered; else Problem says why
	// not.
	Running bool   `json:"running"`
	Problem string `json:"problem,omitempty"`
	// Delivered is how many events it delivered, the last at
	// LastDelivery; LastError is the last delivery's failure.
	Delivered    int64     `json:"delivered"`
	LastDelivery time.Time `json:"lastDelivery,omitzero"`
	LastError    string    `json:"lastError,omitempty"`
}

// NewHost makes a host whose kinds reach the server through env.
func NewHost(env *Env) *Host {
	h := &Host{kinds: map[string]Kind{}, wires: map[string]map[string]*running{}}
	e := *env
	e.delivered = h.delivered
	h.env = &e
	return h
}

// SetWires makes wires the stack's wires: those gone or changed stop,
// new ones start, unchanged ones go on. No wires removes the stack's. A
// wire that cannot run is kept with why (Wires); the error joins those
// reasons for the deploy's report, and does not undo anything.
func (h *Host) SetWires(ctx context.Context, stack string, wires []Wire) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	old := h.wires[stack]
	next := map[string]*running{}
	for _, w := range wires {
		w.Stack = stack
		if r, ok := old[w.ID]; ok && r.wire.Same(w) && r.remove != nil {
			next[w.ID] = r
			continue
		}
		r := &running{wire: w, stats: &wireStats{}}
		h.stats.Store(statsKey(stack, w.ID), r.stats)
		next[w.ID] = r
	}
	for id, r := range old {
		if next[id] != r && r.remove != nil {
			r.remove()
			r.remove = nil
		}
		if next[id] == nil {
			h.stats.Delete(statsKey(stack, id))
		}
	}
	var problems []string
	for _, w := range wires {
		r := next[w.ID]
		if r.remove != nil {
			continue
		}
		if err := h.start(ctx, r); err != nil {
			r.problem = err.Error()
			problems = append(problems, fmt.Sprintf("%s (%s): %s", w.ID, w.Kind, r.problem))
		}
	}
	if len(next) == 0 {
		delete(h.wires, stack)
	} else {
		h.wires[stack] = next
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return &NotRunningError{Problems: problems}
	}
	return nil
}

// NotRunningError lists the wires that do not run, and why.
type NotRunningError struct{ Problems []string }

func (e *NotRunningError) Error() string {
	if len(e.Problems) == 1 {
		return "an event source does not run: " + e.Problems[0]
	}
	return fmt.Sprintf("%d event sources do not run: %s", len(e.Problems), strings.Join(e.Problems, "; "))
}

// start starts r's wire in its kind, made at its first wire.
func (h *Host) start(ctx context.Context, r *running) error {
	k, ok := h.kinds[r.wire.Kind]
	if !ok {
		newKind := constructor(r.wire.Kind)
		if newKind == nil {
			return fmt.Errorf("events of this kind are not delivered here")
		}
		var err error
		if k, err = newKind(h.env); err != nil {
			return err
		}
		h.kinds[r.wire.Kind] = k
	}
	remove, err := k.Add(ctx, r.wire)
	if err != nil {
		return err
	}
	r.remove, r.problem = remove, ""
	return nil
}

func (h *Host) delivered(w Wire, n int, err error) {
	v, ok := h.stats.Load(statsKey(w.Stack, w.ID))
	if !ok {
		return
	}
	st := v.(*wireStats)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.delivered += int64(n)
	st.last = time.Now()
	st.lastError = ""
	if err != nil {
		st.lastError = err.Error()
	}
}

// Wires lists every stack's wires, by stack and id.
func (h *Host) Wires() []Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Status
	for _, byID := range h.wires {
		for _, r := range byID {
			st := Status{Wire: r.wire, Running: r.remove != nil, Problem: r.problem}
			if r.stats != nil {
				r.stats.mu.Lock()
				st.Delivered, st.LastDelivery, st.LastError = r.stats.delivered, r.stats.last, r.stats.lastError
				r.stats.mu.Unlock()
			}
			out = append(out, st)
		}
	}
	slices.SortFunc(out, func(a, b Status) int {
		return cmp.Or(cmp.Compare(a.Stack, b.Stack), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// Close stops every wire and kind: each kind's Close stops its wires,
// keeping what their Add made at the endpoint (a queue subscribed to a
// topic), which a remove deletes, for the server's next start.
//
// The kinds are closed without the host's lock: a kind's Close waits for
// its deliveries under way, which record themselves (Env.Delivered)
// under that lock.
func (h *Host) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	kinds := make([]Kind, 0, len(h.kinds))
	for _, k := range h.kinds {
		kinds = append(kinds, k)
	}
	for _, byID := range h.wires {
		for _, r := range byID {
			r.remove = nil
		}
	}
	h.mu.Unlock()
	for _, k := range kinds {
		k.Close()
	}
}

// Kind is the host's instance of a kind, made now if no wire of it came
// yet: what a kind serves besides its wires (the rules' bus takes
// PutEvents) reaches it through here.
func (h *Host) Kind(name string) (Kind, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if k, ok := h.kinds[name]; ok {
		return k, nil
	}
	if h.closed {
		return nil, fmt.Errorf("the wiring is closed")
	}
	newKind := constructor(name)
	if newKind == nil {
		return nil, fmt.Errorf("events of kind %s are not delivered here", name)
	}
	k, err := newKind(h.env)
	if err != nil {
		return nil, err
	}
	h.kinds[name] = k
	return k, nil
}
