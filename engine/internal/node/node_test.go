package node

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

// The wire encoding of a request and an answer: what nodes of different
// builds exchange during a rolling restart, so its names stay.
func TestWireEncoding(t *testing.T) {
	body, err := json.Marshal(&Request{Kind: ReqHandOut, Arn: "arn:x", Task: "t1", Worker: "w"})
	require.NoError(t, err)
	require.JSONEq(t, `{"kind": "handout", "arn": "arn:x", "task": "t1", "worker": "w"}`, string(body))
	body, err = json.Marshal(&Answer{Handed: true, Token: "tok", Input: "{}"})
	require.NoError(t, err)
	require.JSONEq(t, `{"handed": true, "token": "tok", "input": "{}"}`, string(body))
	body, err = json.Marshal(&Answer{Error: ErrorMoved})
	require.NoError(t, err)
	require.JSONEq(t, `{"error": "moved"}`, string(body))
}

// Wake-ups reach the engine's callbacks and the node's own loops.
func TestHeard(t *testing.T) {
	woken := map[string]int{}
	missed := 0
	c := New(nil, nil, Config{ID: "n1", OnActivity: func(arn string, n int) { woken[arn] += n }, OnMissed: func() { missed++ }})

	c.heard(store.ChannelActivity, "arn:a\n3")
	c.heard(store.ChannelActivity, "arn:b")
	require.Equal(t, map[string]int{"arn:a": 3, "arn:b": 1}, woken)

	c.heard(store.ChannelSignal, "n2")
	require.Empty(t, c.signals, "a request for another node")
	c.heard(store.ChannelSignal, "n1")
	require.Len(t, c.signals, 1)

	c.heard(store.ChannelReleased, "n1")
	require.Empty(t, c.claim, "its own release")
	c.heard(store.ChannelReleased, "n2")
	require.Len(t, c.ClaimNow(), 1)

	reply := make(chan struct{}, 1)
	c.replies[7] = reply
	c.heard(store.ChannelReply, "7")
	require.Len(t, reply, 1)

	<-reply
	<-c.claim
	<-c.signals
	c.heard("", "")
	require.Equal(t, 1, missed)
	require.Len(t, reply, 1, "listening began: every sender looks again")
	require.Len(t, c.claim, 1)
	require.Len(t, c.signals, 1)
}
