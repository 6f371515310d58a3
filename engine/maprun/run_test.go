package maprun

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/engine/task"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp"
	"stepwise/interp/maprun"
	"stepwise/store"
)

const (
	parentArn = "arn:aws:states:us-east-1:123456789012:execution:fan:parent"
	mapRunArn = "arn:aws:states:us-east-1:123456789012:mapRun:fan/M:0d6f1b7e-7d1c-3b5a-9c1e-2f4a5b6c7d8e"
)

// fakeStore holds the parent, the children and the map run's row: what a
// run reads and writes of the store.
type fakeStore struct {
	store.Executor // nil: a call the run should not make panics
	mu             sync.Mutex
	execs          map[string]*store.Execution
	runs           map[string]store.MapRun
}

func (s *fakeStore) ExecutionGet(_ context.Context, arn string) (*store.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x, ok := s.execs[arn]; ok {
		c := *x
		return &c, nil
	}
	return nil, store.ErrNotFound
}

func (s *fakeStore) ExecutionList(_ context.Context, p *store.ExecutionListParams) ([]*store.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*store.Execution
	for _, x := range s.execs {
		if x.MapRunArn == p.MapRunArn {
			c := *x
			out = append(out, &c)
		}
	}
	return out, nil
}

func (s *fakeStore) MapRunGet(_ context.Context, arn string) (*store.MapRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[arn]; ok {
		return &r, nil
	}
	return nil, store.ErrNotFound
}

func (s *fakeStore) MapRunPut(_ context.Context, r *store.MapRun) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[r.Arn] = *r
	return nil
}

// fakeHost starts children as rows of the fake store (RUNNING until the
// test ends them), and counts the work the clock would wait for.
type fakeHost struct {
	st  *fakeStore
	ctx context.Context

	mu      sync.Mutex
	work    int
	wanted  bool
	waiting bool     // the parent's task waits on the children
	started []string // children's names, in the order started
	stopped []string
	// gate, when set, holds each start until it is given a value;
	// inFlight and mostInFlight count the starts it holds.
	gate                   chan struct{}
	inFlight, mostInFlight int
}

func newFakeHost(t *testing.T) *fakeHost {
	st := &fakeStore{execs: map[string]*store.Execution{}, runs: map[string]store.MapRun{}}
	st.execs[parentArn] = &store.Execution{Arn: parentArn, Name: "parent", Status: history.StatusRunning,
		StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:fan", RevisionID: "r1"}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &fakeHost{st: st, ctx: ctx, wanted: true}
}

func (h *fakeHost) Context() context.Context { return h.ctx }
func (h *fakeHost) Executor() store.Executor { return h.st }
func (h *fakeHost) Now() time.Time           { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
func (h *fakeHost) Tasks() task.Runner       { return task.NoIntegrations{} }
func (h *fakeHost) Live(string) bool         { return true }

func (h *fakeHost) Go(fn func(context.Context)) {
	h.WorkBegan()
	go func() {
		defer h.WorkEnded()
		fn(h.ctx)
	}()
}

func (h *fakeHost) Start(_ context.Context, r *start.Request) (*store.Execution, error) {
	if h.gate != nil {
		h.mu.Lock()
		h.inFlight++
		h.mostInFlight = max(h.mostInFlight, h.inFlight)
		h.mu.Unlock()
		<-h.gate
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
	}
	row := &store.Execution{Arn: r.ExecutionArn, Name: r.Name, StateMachineArn: r.Target.StateMachine.Arn, Status: history.StatusRunning,
		Input: *r.Input, MapRunArn: r.MapRunArn, StartDate: h.Now()}
	h.st.mu.Lock()
	if _, ok := h.st.execs[r.ExecutionArn]; ok {
		h.st.mu.Unlock()
		return nil, &start.ExistsError{Arn: r.ExecutionArn, Err: store.ErrAlreadyExists}
	}
	h.st.execs[r.ExecutionArn] = row
	c2 := *row
	h.st.mu.Unlock()
	h.mu.Lock()
	h.started = append(h.started, r.Name)
	h.mu.Unlock()
	return &c2, nil
}

func (h *fakeHost) Redrive(context.Context, string) (*store.Execution, error) {
	panic("no child is redriven")
}

func (h *fakeHost) Stop(_ context.Context, arn, _ string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = append(h.stopped, arn)
	return nil
}

func (h *fakeHost) WorkBegan() { h.mu.Lock(); h.work++; h.mu.Unlock() }
func (h *fakeHost) WorkEnded() { h.mu.Lock(); h.work--; h.mu.Unlock() }

func (h *fakeHost) WaitOn(string, string, string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiting = h.wanted
	return h.wanted
}

func (h *fakeHost) Ended(string) { h.mu.Lock(); h.waiting = false; h.mu.Unlock() }

// running lists the children running, by ARN.
func (h *fakeHost) running() []string {
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	var arns []string
	for arn, x := range h.st.execs {
		if x.MapRunArn != "" && x.Status == history.StatusRunning {
			arns = append(arns, arn)
		}
	}
	slices.Sort(arns)
	return arns
}

// end ends a child as the engine would: its row, then ChildEnded.
func (h *fakeHost) end(rn *Runner, arn string, status history.ExecutionStatus, output string) {
	h.st.mu.Lock()
	x := h.st.execs[arn]
	x.Status, x.Output = status, &output
	c := *x
	h.st.mu.Unlock()
	rn.ChildEnded(&c)
}

func mapRunTask(items []any, maxConcurrency int64) *task.Task {
	return &task.Task{ExecutionArn: parentArn, ID: "t1", Request: &interp.TaskRequest{MapRun: &interp.MapRunRequest{
		Arn: mapRunArn, Label: "M", ExecutionType: "STANDARD", Items: items, Count: int64(len(items)),
		MaxConcurrency: maxConcurrency, Tolerance: maprun.None}}}
}

// A run over its host: at most MaxConcurrency children run at once, each
// end starts the next, and once all ended the parent's task is answered
// with their outputs in order, the row written SUCCEEDED, and the run's
// work over.
func TestRunStartsChildrenThroughItsHost(t *testing.T) {
	h := newFakeHost(t)
	rn := New(h, Config{Now: h.Now, Region: "us-east-1", Account: "123456789012"})
	tk := mapRunTask([]any{"a", "b", "c", "d", "e"}, 2)
	require.True(t, rn.Takes(tk))
	answered := make(chan task.Result, 1)
	rn.Run(context.Background(), tk, func(r task.Result) { answered <- r })

	names := maprun.NewNames(mapRunArn, "us-east-1", "123456789012", "fan", "M", false)
	for i := range 5 {
		testwait.Until(t, func() bool { return slices.Contains(h.running(), names.Arn(i)) }, 10*time.Second, time.Millisecond, "child %d", i)
		require.LessOrEqual(t, len(h.running()), 2)
		h.end(rn, names.Arn(i), history.StatusSucceeded, `"out`+string(rune('a'+i))+`"`)
	}
	var res task.Result
	select {
	case res = <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not answer")
	}
	require.Nil(t, res.Failure)
	require.Equal(t, []any{"outa", "outb", "outc", "outd", "oute"}, res.Output)
	row, err := h.st.MapRunGet(context.Background(), mapRunArn)
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", row.Status)
	require.Equal(t, parentArn, row.ExecutionArn)
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:stateMachine:fan/M", row.StateMachineArn)
	h.mu.Lock()
	defer h.mu.Unlock()
	require.ElementsMatch(t, []string{names.Name(0), names.Name(1), names.Name(2), names.Name(3), names.Name(4)}, h.started)
	require.Zero(t, h.work)
	require.False(t, h.waiting)
	require.Nil(t, rn.get(mapRunArn), "an ended run is forgotten")
}

// A cancelled task's run is ABORTED: its children still running are
// stopped and the parent's task is not answered.
func TestCancelAbortsTheRun(t *testing.T) {
	h := newFakeHost(t)
	rn := New(h, Config{Now: h.Now, Region: "us-east-1", Account: "123456789012"})
	tk := mapRunTask([]any{"1", "2", "3"}, 0)
	rn.Run(context.Background(), tk, func(task.Result) { t.Error("a cancelled run answered") })
	testwait.Until(t, func() bool { return len(h.running()) == 3 }, 10*time.Second, time.Millisecond)
	rn.Cancel(parentArn, "t1")
	testwait.Until(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.stopped) == 3 && h.work == 0
	}, 10*time.Second, time.Millisecond)
	row, err := h.st.MapRunGet(context.Background(), mapRunArn)
	require.NoError(t, err)
	require.Equal(t, "ABORTED", row.Status)
	require.Nil(t, rn.get(mapRunArn))
}

// A task no longer wanted when its run registers starts nothing.
func TestRunOfATaskNoLongerWanted(t *testing.T) {
	h := newFakeHost(t)
	h.wanted = false
	rn := New(h, Config{Now: h.Now, Region: "us-east-1", Account: "123456789012"})
	rn.Run(context.Background(), mapRunTask([]any{"1"}, 0), func(task.Result) { t.Error("answered") })
	testwait.Until(t, func() bool {
		rn.mu.Lock()
		defer rn.mu.Unlock()
		return len(rn.runs) == 0
	}, 10*time.Second, time.Millisecond)
	require.Empty(t, h.running())
	_, err := h.st.MapRunGet(context.Background(), mapRunArn)
	require.ErrorIs(t, err, store.ErrNotFound)
}

// Update changes the row of a run that is not in progress here.
func TestUpdateARunNotHere(t *testing.T) {
	h := newFakeHost(t)
	rn := New(h, Config{Now: h.Now})
	ctx := context.Background()
	require.NoError(t, h.st.MapRunPut(ctx, &store.MapRun{Arn: mapRunArn, Status: "RUNNING", MaxConcurrency: 5}))
	c, n := 7, int64(3)
	require.NoError(t, rn.Update(ctx, mapRunArn, &c, nil, &n))
	row, err := h.st.MapRunGet(ctx, mapRunArn)
	require.NoError(t, err)
	require.Equal(t, 7, row.MaxConcurrency)
	require.Equal(t, int64(3), row.ToleratedFailureCount)
	require.ErrorIs(t, rn.Update(ctx, mapRunArn+"x", &c, nil, nil), store.ErrNotFound)
}

// Large inputs go fewer at a time: a run's starts in flight hold at most
// StartBytes of input, but for the first, which goes whatever its size.
func TestStartsInFlightByBytes(t *testing.T) {
	for _, tc := range []struct {
		size, most int
	}{{StartBytes/3 + 1, 3}, {2 * StartBytes, 1}, {10, 8}} {
		h := newFakeHost(t)
		h.gate = make(chan struct{})
		rn := New(h, Config{Now: h.Now, Region: "us-east-1", Account: "123456789012"})
		items := make([]any, 8)
		for i := range items {
			items[i] = strings.Repeat("x", tc.size)
		}
		rn.Run(context.Background(), mapRunTask(items, 0), func(task.Result) {})
		names := maprun.NewNames(mapRunArn, "us-east-1", "123456789012", "fan", "M", false)
		for i := range items {
			testwait.Until(t, func() bool {
				h.mu.Lock()
				defer h.mu.Unlock()
				return h.inFlight == min(tc.most, len(items)-i)
			}, 10*time.Second, time.Millisecond, "size %d, start %d", tc.size, i)
			h.gate <- struct{}{}
			testwait.Until(t, func() bool {
				h.mu.Lock()
				defer h.mu.Unlock()
				return len(h.started) == i+1
			}, 10*time.Second, time.Millisecond)
		}
		for i := range items {
			h.end(rn, names.Arn(i), history.StatusSucceeded, `1`)
		}
		testwait.Until(t, func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.work == 0
		}, 10*time.Second, time.Millisecond)
		h.mu.Lock()
		require.Equal(t, tc.most, h.mostInFlight, "size %d", tc.size)
		h.mu.Unlock()
	}
}
