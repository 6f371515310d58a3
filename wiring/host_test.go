package wiring

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recordKind records its wires' adds and removes.
type recordKind struct {
	mu     sync.Mutex
	live   map[string]bool
	adds   int
	closed bool
}

func (k *recordKind) Add(_ context.Context, w Wire) (func(), error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if string(w.Source) == `"bad"` {
		return nil, errors.New("its queue is not there")
	}
	k.adds++
	k.live[w.Stack+"/"+w.ID] = true
	return func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		delete(k.live, w.Stack+"/"+w.ID)
	}, nil
}

func (k *recordKind) Close() { k.closed = true }

func TestHostSetWires(t *testing.T) {
	t.Parallel()
	k := &recordKind{live: map[string]bool{}}
	Register("test-record", func(*Env) (Kind, error) { return k, nil })
	h := NewHost(&Env{})
	ctx := context.Background()
	q := func(id, src string) Wire {
		return Wire{ID: id, Kind: "test-record", Source: json.RawMessage(src), Target: Target{Type: ToFunction, Name: "fn"}}
	}
	require.NoError(t, h.SetWires(ctx, "app", []Wire{q("A/Q", `{"n": 1}`), q("B/Q", `{"n":2}`)}))
	require.Equal(t, map[string]bool{"app/A/Q": true, "app/B/Q": true}, k.live)
	require.Equal(t, 2, k.adds)

	// Deployed again: unchanged wires go on (the same JSON, spaced
	// otherwise), a changed one starts again, a gone one stops.
	require.NoError(t, h.SetWires(ctx, "app", []Wire{q("A/Q", `{"n":1}`), q("C/Q", `{}`)}))
	require.Equal(t, map[string]bool{"app/A/Q": true, "app/C/Q": true}, k.live)
	require.Equal(t, 3, k.adds)

	// One that cannot run, and one of a kind nobody serves: listed with
	// why, and the error says so; the others run.
	err := h.SetWires(ctx, "app", []Wire{q("A/Q", `{"n":1}`), q("D/Q", `"bad"`), {ID: "E/Api", Kind: "no-such-kind"}})
	var nr *NotRunningError
	require.ErrorAs(t, err, &nr)
	require.Equal(t, []string{"D/Q (test-record): its queue is not there", "E/Api (no-such-kind): events of this kind are not delivered here"}, nr.Problems)
	list := h.Wires()
	require.Len(t, list, 3)
	require.True(t, list[0].Running)
	require.False(t, list[1].Running)
	require.Equal(t, "its queue is not there", list[1].Problem)

	// Deliveries are counted on the wire.
	h.env.Delivered(Wire{Stack: "app", ID: "A/Q"}, 3, nil)
	h.env.Delivered(Wire{Stack: "app", ID: "A/Q"}, 1, errors.New("function fn failed"))
	a := h.Wires()[0]
	require.EqualValues(t, 4, a.Delivered)
	require.Equal(t, "function fn failed", a.LastError)
	require.False(t, a.LastDelivery.IsZero())

	// No wires: the stack's go.
	require.NoError(t, h.SetWires(ctx, "app", nil))
	require.Empty(t, k.live)
	require.Empty(t, h.Wires())
	h.Close()
	require.True(t, k.closed)
}

// waitingKind's Close waits for a delivery that records itself.
type waitingKind struct {
	env     *Env
	started chan struct{}
	done    chan struct{}
}

func (k *waitingKind) Add(_ context.Context, w Wire) (func(), error) {
	go func() {
		<-k.started
		k.env.Delivered(w, 1, nil)
		close(k.done)
	}()
	return func() {}, nil
}

func (k *waitingKind) Close() {
	close(k.started)
	<-k.done
}

// Closing the host while a kind's delivery records itself does not
// deadlock: the kinds are closed without the host's lock.
func TestHostCloseWhileDelivering(t *testing.T) {
	t.Parallel()
	var k *waitingKind
	Register("test-waiting", func(env *Env) (Kind, error) {
		k = &waitingKind{env: env, started: make(chan struct{}), done: make(chan struct{})}
		return k, nil
	})
	h := NewHost(&Env{})
	require.NoError(t, h.SetWires(context.Background(), "app", []Wire{{ID: "A/E", Kind: "test-waiting"}}))
	closed := make(chan struct{})
	go func() { h.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close deadlocked with a delivery recording itself")
	}
}

// removeWaitingKind's remove waits for a delivery that records itself.
type removeWaitingKind struct{ env *Env }

func (k *removeWaitingKind) Add(_ context.Context, w Wire) (func(), error) {
	return func() {
		done := make(chan struct{})
		go func() { k.env.Delivered(w, 1, nil); close(done) }()
		<-done
	}, nil
}

func (k *removeWaitingKind) Close() {}

// A stack deployed again while a removed wire's last delivery records
// itself does not deadlock: deliveries are recorded without the host's
// lock.
func TestHostRemoveWhileDelivering(t *testing.T) {
	t.Parallel()
	Register("test-remove-waiting", func(env *Env) (Kind, error) { return &removeWaitingKind{env: env}, nil })
	h := NewHost(&Env{})
	ctx := context.Background()
	require.NoError(t, h.SetWires(ctx, "app", []Wire{{ID: "A/E", Kind: "test-remove-waiting"}}))
	done := make(chan error, 1)
	go func() { done <- h.SetWires(ctx, "app", nil) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("SetWires deadlocked with a delivery recording itself")
	}
}
