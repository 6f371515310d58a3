package activity

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/interp"
)

func TestTokens(t *testing.T) {
	k := NewTokens([]byte("key"))
	tok := k.Make("arn:x", "t1")
	arn, id, ok := k.Parse(tok)
	require.True(t, ok)
	require.Equal(t, "arn:x", arn)
	require.Equal(t, "t1", id)
	require.Equal(t, tok, k.Make("arn:x", "t1"), "the same task has the same token")
	_, _, ok = NewTokens([]byte("other key")).Parse(tok)
	require.False(t, ok, "a token of another key is refused")
	_, _, ok = k.Parse("not a token")
	require.False(t, ok)
}

func TestQueue(t *testing.T) {
	q := NewQueue()
	mk := func(id string) *task.Task {
		return &task.Task{ExecutionArn: "arn:x", ID: id, Request: &interp.TaskRequest{Resource: "arn:act"}}
	}
	q.Add(mk("1"), false)
	q.Add(mk("2"), false)
	q.Add(mk("1"), true) // queued already: keeps its place
	q.Add(mk("0"), true)
	require.Equal(t, 3, q.Status("arn:act").Waiting)
	q.Remove("arn:x", "2")
	var got []string
	for {
		tk, ready := q.Pop("arn:act")
		if tk == nil {
			q.Unwait("arn:act", ready)
			break
		}
		got = append(got, tk.ID)
	}
	require.Equal(t, []string{"0", "1"}, got)
	_, ready := q.Pop("arn:act")
	q.Add(mk("3"), false)
	select {
	case <-ready:
	default:
		t.Fatal("a waiting poller is woken by a task")
	}
}

func TestPoll(t *testing.T) {
	q := NewQueue()
	mk := func(id string) *task.Task {
		return &task.Task{ExecutionArn: "arn:x", ID: id, Request: &interp.TaskRequest{Resource: "arn:act"}}
	}
	q.Add(mk("ended"), false)
	q.Add(mk("live"), false)
	var tried []string
	h, err := q.Poll(context.Background(), "arn:act", "w", time.Hour, nil, func(tk *task.Task) (*Handout, error) {
		tried = append(tried, tk.ID)
		if tk.ID == "ended" {
			return nil, nil // the task ended meanwhile: the next one is taken
		}
		return &Handout{Token: "tok-" + tk.ID}, nil
	}, nil)
	require.NoError(t, err)
	require.Equal(t, "tok-live", h.Token)
	require.Equal(t, []string{"ended", "live"}, tried)

	released := make(chan struct{})
	close(released)
	h, err = q.Poll(context.Background(), "arn:act", "w", time.Hour, released, nil, nil)
	require.NoError(t, err)
	require.Nil(t, h, "a released poll with no task is answered with none")
}

// A task given to a poller of a cluster's queue waiting here is handed
// out by that poller alone, without a take from the store's queue; one
// given to a poller that stops waiting is given back, and none is lost.
func TestPollSharedGiven(t *testing.T) {
	t.Parallel()
	q := NewQueue()
	require.False(t, q.GiveShared("arn:act", "arn:x", "early"), "no poller waits")
	type back struct{ arn, id string }
	backs := make(chan back, 4)
	giveBack := func(arn, id string) { backs <- back{arn, id} }
	took := make(chan struct{}, 16)
	none := func() (string, string, bool) {
		took <- struct{}{}
		return "", "", false
	}
	handed := make(chan *Handout, 1)
	go func() {
		h, err := q.PollShared(context.Background(), "arn:act", time.Hour, time.Hour, nil, none,
			func(arn, id string) (*Handout, error) { return &Handout{Token: arn + "/" + id}, nil }, giveBack)
		require.NoError(t, err)
		handed <- h
	}()
	<-took // the poller waits now
	for !q.GiveShared("arn:act", "arn:x", "1") {
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, "arn:x/1", (<-handed).Token)
	require.Len(t, took, 0, "a given task is not taken from the store's queue")
	require.False(t, q.GiveShared("arn:act", "arn:x", "2"), "the poller waits no more")

	// A poller that stops waiting gives back the task it was given.
	ready := q.Listen("arn:act")
	require.True(t, q.GiveShared("arn:act", "arn:x", "3"))
	require.NoError(t, q.stop("arn:act", ready, giveBack))
	require.Equal(t, back{"arn:x", "3"}, <-backs)

	// One that took a task from the store's queue meanwhile gives back
	// the one it was given.
	taken := false
	h, err := q.PollShared(context.Background(), "arn:act", time.Hour, time.Hour, nil, func() (string, string, bool) {
		if !taken {
			taken = true
			require.True(t, q.GiveShared("arn:act", "arn:x", "4"))
			return "arn:y", "5", true
		}
		return "", "", false
	}, func(arn, id string) (*Handout, error) { return &Handout{Token: arn + "/" + id}, nil }, giveBack)
	require.NoError(t, err)
	require.Equal(t, "arn:y/5", h.Token)
	require.Equal(t, back{"arn:x", "4"}, <-backs)
	require.Empty(t, q.handed)
}

// A waiting poller can be claimed by a step that schedules a task: it is
// given the task (not through the queue), or, when the claim is undone,
// waits on and takes a task queued later. A poller that timed out while
// claimed waits for the claim to be settled and gets its task.
func TestPollClaimed(t *testing.T) {
	t.Parallel()
	q := NewQueue()
	mk := func(id string) *task.Task {
		return &task.Task{ExecutionArn: "arn:x", ID: id, Request: &interp.TaskRequest{Resource: "arn:act"}}
	}
	queued := func(tk *task.Task) (*Handout, error) { return &Handout{Token: "queued-" + tk.ID}, nil }
	given := func(tk *task.Task) (*Handout, error) { return &Handout{Token: "given-" + tk.ID}, nil }
	poll := func(wait time.Duration) <-chan *Handout {
		out := make(chan *Handout, 1)
		go func() {
			h, err := q.Poll(context.Background(), "arn:act", "w1", wait, nil, queued, given)
			require.NoError(t, err)
			out <- h
		}()
		return out
	}
	claim := func() *Direct {
		var d *Direct
		require.Eventually(t, func() bool { d = q.Claim("arn:act"); return d != nil }, 10*time.Second, time.Millisecond)
		return d
	}

	got := poll(time.Hour)
	d := claim()
	require.Equal(t, "w1", d.Worker)
	require.Nil(t, q.Claim("arn:act"), "a poller is claimed once")
	q.Give(d, mk("a"))
	require.Equal(t, "given-a", (<-got).Token)

	got = poll(time.Hour)
	d = claim()
	q.Unclaim("arn:act", d)
	q.Add(mk("b"), false)
	require.Equal(t, "queued-b", (<-got).Token, "an unclaimed poller takes from the queue")

	got = poll(50 * time.Millisecond)
	d = claim()
	time.Sleep(100 * time.Millisecond) // its wait is over while it is claimed
	q.Give(d, mk("c"))
	require.Equal(t, "given-c", (<-got).Token)
	require.Nil(t, q.Claim("arn:act"))
}
