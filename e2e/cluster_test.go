package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/pgtest"
)

// nodes are the servers of a cluster on one database, some of them dead.
type nodes struct {
	t    *testing.T
	db   string
	args []string
	mu   sync.Mutex
	list []*server // nil for a dead node
	ids  []string
}

func startNodes(t *testing.T, db string, n int, args ...string) *nodes {
	ns := &nodes{t: t, db: db, args: args}
	for i := range n {
		ns.ids = append(ns.ids, fmt.Sprintf("node-%c", 'a'+i))
		ns.list = append(ns.list, nil)
		ns.start(i)
	}
	return ns
}

func (ns *nodes) start(i int) *server {
	s := startServer(ns.t, ns.db, append([]string{"--node-id", ns.ids[i]}, ns.args...)...)
	ns.mu.Lock()
	ns.list[i] = s
	ns.mu.Unlock()
	return s
}

func (ns *nodes) get(i int) *server {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return ns.list[i]
}

// client is a client of a live node: node i, or the next one alive.
func (ns *nodes) client(i int) *sfn.Client {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	for k := range len(ns.list) {
		if s := ns.list[(i+k)%len(ns.list)]; s != nil {
			return s.client(ns.t)
		}
	}
	ns.t.Error("no node is alive")
	return nil
}

func (ns *nodes) kill(i int) {
	ns.mu.Lock()
	s := ns.list[i]
	ns.list[i] = nil
	ns.mu.Unlock()
	s.kill()
}

func (ns *nodes) stop(i int) {
	ns.mu.Lock()
	s := ns.list[i]
	ns.list[i] = nil
	ns.mu.Unlock()
	s.stop(ns.t)
}

// workers poll an activity through every node, each answering through the
// next node, and count the tokens they were handed.
type workers struct {
	mu     sync.Mutex
	tokens map[string]int
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func startWorkers(ns *nodes, activityArn string, n int) *workers {
	ctx, cancel := context.WithCancel(context.Background())
	w := &workers{tokens: map[string]int{}, cancel: cancel}
	for i := range n {
		w.done.Go(func() {
			for ctx.Err() == nil {
				task, err := ns.client(i).GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: aws.String(activityArn), WorkerName: aws.String(fmt.Sprintf("w%d", i))})
				if err != nil {
					time.Sleep(50 * time.Millisecond) // a node died under the poll
					continue
				}
				if task.TaskToken == nil {
					continue
				}
				w.mu.Lock()
				w.tokens[aws.ToString(task.TaskToken)]++
				w.mu.Unlock()
				for try := range 20 {
					_, err := ns.client(i+1+try).SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`"ok"`)})
					if err == nil || ctx.Err() != nil {
						break
					}
					var over *types.TaskTimedOut
					if errors.As(err, &over) {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	return w
}

func (w *workers) stop() map[string]int {
	w.cancel()
	w.done.Wait()
	return w.tokens
}

// validHistory checks an execution's history: ids 1..N, each event after
// the one it follows, one terminal event (the last), and each state of
// want entered as often as it says.
func validHistory(t *testing.T, c *sfn.Client, arn string, want map[string]int) []types.HistoryEvent {
	t.Helper()
	var events []types.HistoryEvent
	var token *string
	for {
		out, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000, NextToken: token})
		require.NoError(t, err)
		events = append(events, out.Events...)
		if out.NextToken == nil {
			break
		}
		token = out.NextToken
	}
	entered := map[string]int{}
	terminal := 0
	for i, e := range events {
		require.Equal(t, int64(i+1), e.Id, "%s: event ids have a gap or a duplicate", arn)
		require.Less(t, e.PreviousEventId, e.Id)
		if d := e.StateEnteredEventDetails; d != nil {
			entered[aws.ToString(d.Name)]++
		}
		switch e.Type {
		case types.HistoryEventTypeExecutionSucceeded, types.HistoryEventTypeExecutionFailed,
			types.HistoryEventTypeExecutionAborted, types.HistoryEventTypeExecutionTimedOut:
			terminal++
		}
	}
	require.Equal(t, want, entered, "%s: states entered", arn)
	require.Equal(t, 1, terminal, "%s: one terminal event", arn)
	require.Equal(t, types.HistoryEventTypeExecutionSucceeded, events[len(events)-1].Type, arn)
	return events
}

// clusterWork is workDefinition with room for a loaded machine: hundreds
// of tasks wait for six workers, whose answers cross nodes.
var clusterWork = strings.NewReplacer(`"TimeoutSeconds": 30`, `"TimeoutSeconds": 60`, `"MaxAttempts": 3`, `"MaxAttempts": 6`).Replace(workDefinition)

// TestPostgresCluster runs three servers on one PostgreSQL database: 300
// executions mixing Wait, Parallel, Map and activity tasks, started on
// all of them and worked by pollers spread over all of them, while one
// node is killed with kill -9, then another, and then every node is
// restarted in turn (gracefully) under more load. Every execution ends
// once, with a valid history; no activity task is handed out twice.
func TestPostgresCluster(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	ns := startNodes(t, db, 3, "--wait-time-scale", "0.3", "--lease", "2s")
	ctx := context.Background()

	// Created on one node, there on all.
	act, err := ns.client(0).CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("work")})
	require.NoError(t, err)
	_, err = ns.client(1).CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("loop"), Definition: aws.String(loopDefinition), RoleArn: aws.String(roleArn)})
	require.NoError(t, err)
	_, err = ns.client(2).CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("work"),
		Definition: aws.String(fmt.Sprintf(clusterWork, aws.ToString(act.ActivityArn))), RoleArn: aws.String(roleArn)})
	require.NoError(t, err)
	_, err = ns.client(0).DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smArn("work"))})
	require.NoError(t, err)

	var mu sync.Mutex
	var loops, works []string
	start := func(i int, kind string) {
		name := fmt.Sprintf("%s%d", kind, i)
		input := fmt.Sprintf(`{"id": %d}`, i)
		if kind == "work" {
			input = `{"items": [1, 2, 3]}`
		}
		for try := range 50 {
			out, err := ns.client(i+try).StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn(kind)),
				Name: aws.String(name), Input: aws.String(input)})
			if err == nil {
				mu.Lock()
				if kind == "work" {
					works = append(works, aws.ToString(out.ExecutionArn))
				} else {
					loops = append(loops, aws.ToString(out.ExecutionArn))
				}
				mu.Unlock()
				return
			}
			time.Sleep(100 * time.Millisecond) // a node died under the call
		}
		t.Errorf("%s was never started", name)
	}
	startMany := func(from, to int) {
		var wg sync.WaitGroup
		for i := from; i < to; i++ {
			wg.Go(func() {
				kind := "loop"
				if i%3 == 0 {
					kind = "work"
				}
				start(i, kind)
			})
			if i%20 == 19 {
				wg.Wait()
			}
		}
		wg.Wait()
	}
	w := startWorkers(ns, aws.ToString(act.ActivityArn), 6)

	// 300 executions, with node a killed a third of the way and node b two
	// thirds of the way.
	startMany(0, 100)
	ns.kill(0)
	startMany(100, 200)
	time.Sleep(time.Second)
	ns.kill(1)
	startMany(200, 300)

	// A rolling restart under load: the dead come back, then each node in
	// turn is stopped gracefully and started again.
	ns.start(0)
	ns.start(1)
	for i := range 3 {
		startMany(300+20*i, 320+20*i)
		ns.stop(i)
		ns.start(i)
	}

	c := ns.client(2)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, loops, 240)
	require.Len(t, works, 120)
	for _, arn := range loops {
		out := waitDone(t, c, arn)
		require.Equal(t, types.ExecutionStatusSucceeded, out.Status, arn)
		validHistory(t, c, arn, map[string]int{"Init": 1, "W": 5, "Inc": 5, "More": 5, "Done": 1})
	}
	for _, arn := range works {
		out := waitDone(t, c, arn)
		require.Equal(t, types.ExecutionStatusSucceeded, out.Status, "%s: %s", arn, aws.ToString(out.Cause))
		events := validHistory(t, c, arn, map[string]int{"Fan": 1, "A": 1, "B": 1, "Each": 1, "C": 3, "Rest": 1})
		succeeded := 0
		for _, e := range events {
			if e.Type == types.HistoryEventTypeActivitySucceeded {
				succeeded++
			}
		}
		require.Equal(t, 4, succeeded, "%s: one activity in the Parallel, three in the Map", arn)
	}
	for tok, n := range w.stop() {
		require.Equal(t, 1, n, "token %.40s… handed out %d times", tok, n)
	}
	for i := range 3 {
		ns.stop(i)
	}
}

// TestPostgresFencing pauses a node (SIGSTOP) past its lease while its
// executions run: another node takes them over, and when the paused node
// resumes it writes nothing (its steps are fenced) and stops, saying it
// lost its lease. The executions end once, with valid histories.
func TestPostgresFencing(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	ns := startNodes(t, db, 2, "--wait-time-scale", "0.3", "--lease", "1s")
	ctx := context.Background()
	a := ns.get(0)
	ca := a.client(t)
	_, err := ca.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("loop"), Definition: aws.String(loopDefinition), RoleArn: aws.String(roleArn)})
	require.NoError(t, err)
	var arns []string
	for i := range 30 {
		out, err := ca.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("loop")),
			Name: aws.String(fmt.Sprintf("l%d", i)), Input: aws.String(fmt.Sprintf(`{"id": %d}`, i))})
		require.NoError(t, err)
		arns = append(arns, aws.ToString(out.ExecutionArn))
	}
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGSTOP))
	time.Sleep(3 * time.Second) // past the lease: node b claims the executions, which move on
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGCONT))
	select {
	case err := <-a.done:
		require.Error(t, err, "the paused node exits with an error")
	case <-time.After(15 * time.Second):
		t.Fatal("the paused node kept serving after it lost its lease")
	}
	require.Contains(t, a.stderr.String(), "lost its lease")
	c := ns.get(1).client(t)
	for _, arn := range arns {
		out := waitDone(t, c, arn)
		require.Equal(t, types.ExecutionStatusSucceeded, out.Status, arn)
		validHistory(t, c, arn, map[string]int{"Init": 1, "W": 5, "Inc": 5, "More": 5, "Done": 1})
	}
	ns.stop(1)
}
