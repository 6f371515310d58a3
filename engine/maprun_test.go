package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/maprun"
	"stepwise/history"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/store"
)

// childStarts follows a map run's child starts across the rounds of a
// recovery test: a round is an engine on the test's store, whose
// starts the round's lose drops as a server that died before they
// committed would.
type childStarts struct {
	mu     sync.Mutex
	lose   func(i int) bool // this round's
	mapRun string
	stored map[int]bool // children stored, or whose start went through
	passed map[int]int  // starts that went through, by child, over all rounds
	lost   int          // starts lost this round
	tried  int          // starts tried this round
	bad    []string     // starts of children stored already
}

func (c *childStarts) hook(mapRunArn string, i int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mapRun = mapRunArn
	c.tried++
	if c.stored[i] {
		c.bad = append(c.bad, fmt.Sprintf("child %d started when it was stored already", i))
	}
	if c.lose != nil && c.lose(i) {
		c.lost++
		return true
	}
	c.stored[i] = true
	c.passed[i]++
	return false
}

// recoveryRun is a distributed Map of items children (batched by
// perBatch when not 0) run over rounds: each round's lose drops starts,
// then the engine stops and the next round's opens on the same store; a
// last round drops none. Afterwards every child was started exactly once
// and the run succeeded with every item counted.
func recoveryRun(t *testing.T, items, perBatch int, rounds []func(i int) bool) {
	t.Helper()
	c := &childStarts{stored: map[int]bool{}, passed: map[int]int{}}
	b := &testBundle{path: t.TempDir() + "/stepwise.db", tasks: newFakeTasks()}
	b.config = func(cfg *Config) { cfg.loseChildStart = c.hook }
	b.open(t, 0)
	ctx := context.Background()
	batcher := ""
	children := items
	if perBatch > 0 {
		batcher = fmt.Sprintf(`"ItemBatcher": {"MaxItemsPerBatch": %d},`, perBatch)
		children = (items + perBatch - 1) / perBatch
	}
	sm, m := b.machine(t, "fan", `{"StartAt": "M", "States": {"M": {"Type": "Map", `+batcher+`
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P",
			"States": {"P": {"Type": "Pass", "End": true}}}, "End": true}}}`)
	in := make([]string, items)
	for i := range in {
		in[i] = fmt.Sprint(i)
	}
	input := "[" + strings.Join(in, ",") + "]"

	// storedChildren lists the run's children in the store, by index.
	storedChildren := func() map[int]*store.Execution {
		c.mu.Lock()
		arn := c.mapRun
		c.mu.Unlock()
		out := map[int]*store.Execution{}
		if arn == "" {
			return out
		}
		p := &store.ExecutionListParams{MapRunArn: arn, Limit: 1000}
		for {
			rows, err := b.drv.Executor().ExecutionList(ctx, p)
			require.NoError(t, err)
			for _, row := range rows {
				var i int
				_, err := fmt.Sscanf(row.Name[strings.LastIndexByte(row.Name, '-')+1:], "%x", &i)
				require.NoError(t, err)
				require.Nil(t, out[i], "child %d stored twice", i)
				out[i] = row
			}
			if len(rows) < p.Limit {
				return out
			}
			last := rows[len(rows)-1]
			p.AfterStartDate, p.AfterArn = last.StartDate, last.Arn
		}
	}

	var parent *store.Execution
	for round, lose := range rounds {
		c.mu.Lock()
		c.lose, c.lost, c.tried = lose, 0, 0
		before := len(c.stored)
		c.mu.Unlock()
		if round == 0 {
			parent = b.start(t, sm, m, "parent", input)
		} else {
			b.open(t, 0)
		}
		// The round goes as far as it can: every child not stored is
		// tried, or maprun.Starters starts are lost (the run's starts in
		// flight, as at a crash); the starts that went through commit.
		testwait.Until(t, func() bool {
			c.mu.Lock()
			stuck := c.lost == maprun.Starters || c.tried == children-before
			want := len(c.stored)
			c.mu.Unlock()
			return stuck && len(storedChildren()) == want
		}, 2*time.Minute, 5*time.Millisecond, "round %d", round)
		found := storedChildren()
		c.mu.Lock()
		for i := range c.stored {
			require.NotNil(t, found[i], "round %d: child %d went through and is not stored", round, i)
		}
		require.Len(t, found, len(c.stored), "round %d", round)
		c.mu.Unlock()
		b.close()
	}
	c.mu.Lock()
	c.lose, c.lost, c.tried = nil, 0, 0
	c.mu.Unlock()
	b.open(t, 0)
	var row *store.Execution
	testwait.Until(t, func() bool {
		var err error
		row, err = b.drv.Executor().ExecutionGet(ctx, parent.Arn)
		require.NoError(t, err)
		return row.Status != history.StatusRunning
	}, 2*time.Minute, 5*time.Millisecond)
	require.Equal(t, history.StatusSucceeded, row.Status, "%s", derefOr(row.Cause))
	out, err := jsonvalue.ParseString(*row.Output)
	require.NoError(t, err)
	require.Len(t, out, children)

	found := storedChildren()
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Empty(t, c.bad)
	require.Len(t, found, children)
	for i := range children {
		require.Equal(t, 1, c.passed[i], "child %d: starts", i)
		require.Equal(t, history.StatusSucceeded, found[i].Status, "child %d", i)
	}
	mr, err := b.drv.Executor().MapRunGet(ctx, c.mapRun)
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", mr.Status)
	require.JSONEq(t, fmt.Sprintf(`{"aborted":0,"failed":0,"failuresNotRedrivable":0,"pending":0,"pendingRedrive":0,"resultsWritten":%[1]d,"running":0,"succeeded":%[1]d,"timedOut":0,"total":%[1]d}`, items), mr.ItemCounts)
	require.JSONEq(t, fmt.Sprintf(`{"aborted":0,"failed":0,"failuresNotRedrivable":0,"pending":0,"pendingRedrive":0,"resultsWritten":%[1]d,"running":0,"succeeded":%[1]d,"timedOut":0,"total":%[1]d}`, children), mr.ExecutionCounts)
}

// A map run picked up after its server died, whatever children of it
// were stored (every subset of six: a prefix, holes below the last
// stored, none, all), starts exactly those that were not, once each.
func TestMapRunRecoveryEverySubset(t *testing.T) {
	t.Parallel()
	const n = 6
	for set := range 1 << n {
		t.Run(fmt.Sprintf("stored=%06b", set), func(t *testing.T) {
			recoveryRun(t, n, 0, []func(int) bool{func(i int) bool { return set&(1<<i) == 0 }})
		})
	}
}

// Random losses over several rounds (each a server that died with starts
// in flight, holes below stored children, then recovered and died
// again), unbatched and batched: each child is started exactly once.
func TestMapRunRecoveryRandomRounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		items, perBatch int
		seed            uint64
	}{{300, 0, 1}, {300, 0, 2}, {300, 0, 3}, {500, 4, 4}, {120, 7, 5}} {
		t.Run(fmt.Sprintf("items=%d/batch=%d/seed=%d", tc.items, tc.perBatch, tc.seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(tc.seed, 0))
			var rounds []func(int) bool
			var mu sync.Mutex // the losses are drawn in the starts' goroutines
			for range 5 {
				p := []float64{0.02, 0.1, 0.5, 0.9}[rnd.IntN(4)]
				round := rand.New(rand.NewPCG(rnd.Uint64(), 0))
				rounds = append(rounds, func(int) bool {
					mu.Lock()
					defer mu.Unlock()
					return round.Float64() < p
				})
			}
			recoveryRun(t, tc.items, tc.perBatch, rounds)
		})
	}
}

// derefOr is *s, or "" for nil.
func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// The engine and the in-process Driver (`stepwise run`, `stepwise test`)
// run a map run on the same bookkeeping and name its children alike: the
// same parent gives children of the same names, ARNs and state machine.
func TestMapRunChildrenNamedAsTheDriverNamesThem(t *testing.T) {
	b := setup(t, 0)
	def := `{"StartAt": "M", "States": {"M": {"Type": "Map", "Label": "Fan", "MaxConcurrency": 2,
		"ItemBatcher": {"MaxItemsPerBatch": 2},
		"ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "P",
			"States": {"P": {"Type": "Pass", "End": true,
				"Parameters": {"name.$": "$$.Execution.Name", "id.$": "$$.Execution.Id", "machine.$": "$$.StateMachine.Id",
					"items.$": "$.Items"}}}},
		"End": true}}}`
	sm, m := b.machine(t, "fan", def)
	const input = `[1, 2, 3, 4, 5]`
	row := b.start(t, sm, m, "parent", input)
	done := b.waitStatus(t, row.Arn, history.StatusSucceeded)
	require.NotNil(t, done.Output)

	in, err := jsonvalue.ParseString(input)
	require.NoError(t, err)
	x := interp.New(m, interp.Info{ExecutionArn: row.Arn, Name: row.Name, RoleArn: sm.RoleArn, StartTime: row.StartDate,
		StateMachineArn: sm.Arn, StateMachineName: sm.Name, Region: region, Account: account}, in, interp.Options{})
	(&interp.Driver{}).Run(x, row.StartDate)
	require.Equal(t, history.StatusSucceeded, x.Status)
	require.Equal(t, *done.Output, jsonvalue.String(x.Output))

	out, err := jsonvalue.ParseString(*done.Output)
	require.NoError(t, err)
	first := out.([]any)[0].(*jsonvalue.Object)
	id, _ := first.Get("id")
	require.Contains(t, id, ":execution:fan/Fan:", "a child's ARN is …:execution:<machine>/<label>:<name>")
	machine, _ := first.Get("machine")
	require.Equal(t, sm.Arn+"/Fan", machine)
}
