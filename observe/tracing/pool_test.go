package tracing

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
)

// Once warm, the spans of an execution of `stepwise bench`'s machine (10
// Pass states) are made with no allocation: their records, and the
// execution's trace, are those of the executions before it.
// (Not parallel: AllocsPerRun refuses to run in a parallel test.)
func TestSpanRecordsUsedAgain(t *testing.T) {
	now := time.Now()
	events := []event{{typ: history.EventExecutionStarted, id: 1, at: now}}
	for i := range 10 {
		id := int64(len(events))
		name := fmt.Sprintf("S%d", i)
		events = append(events,
			event{typ: "PassStateEntered", id: id + 1, prev: id, at: now, name: name},
			event{typ: "PassStateExited", id: id + 2, prev: id + 1, at: now, name: name})
	}
	events = append(events, event{typ: history.EventExecutionSucceeded, id: 22, prev: 21, at: now})
	spans := 0
	b := builder{ended: func(*span) { spans++ }}
	run := func() {
		x := b.newExecTrace("arn:aws:states:us-east-1:123456789012:execution:bench:e", "arn:aws:states:us-east-1:123456789012:stateMachine:bench", "")
		for i := range events {
			b.apply(x, &events[i])
		}
		b.drop(x)
	}
	run()
	require.Equal(t, 11, spans)
	require.Len(t, b.free, 11, "every span's record is let go")
	require.Len(t, b.freeX, 1)
	require.Zero(t, testing.AllocsPerRun(100, run))
	require.Len(t, b.free, 11)
}
