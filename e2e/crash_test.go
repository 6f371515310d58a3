package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// loopDefinition waits and counts to rounds, one Wait per round.
const loopDefinition = `{"StartAt": "Init", "States": {
  "Init": {"Type": "Pass", "Parameters": {"i": 0, "id.$": "$.id"}, "Next": "W"},
  "W": {"Type": "Wait", "Seconds": 1, "Next": "Inc"},
  "Inc": {"Type": "Pass", "Parameters": {"i.$": "States.MathAdd($.i, 1)", "id.$": "$.id"}, "Next": "More"},
  "More": {"Type": "Choice", "Choices": [{"Variable": "$.i", "NumericLessThan": 5, "Next": "W"}], "Default": "Done"},
  "Done": {"Type": "Succeed"}}}`

// TestCrashRecovery starts 1,000 looping executions, kills the server with
// SIGKILL several times while they run, restarts it on the same file, and
// checks every execution finishes with the right output and a history with
// no gap, no duplicate and no state entered twice.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	n := 1000
	if testing.Short() {
		n = 100
	}
	db := filepath.Join(t.TempDir(), "crash.db")
	args := []string{"--wait-time-scale", "0.3"} // each execution runs ≥ 1.5 s
	s := startServer(t, db, args...)
	c := s.client(t)
	ctx := context.Background()
	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("loop"), Definition: aws.String(loopDefinition), RoleArn: aws.String(roleArn),
	})
	require.NoError(t, err)

	// start sends StartExecution for ids [from, to) with 16 workers. A name
	// sent again after a crash is fine: it is idempotent while running and
	// ExecutionAlreadyExists once ended.
	start := func(c *sfn.Client, from, to int) {
		var wg sync.WaitGroup
		ids := make(chan int)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range ids {
					_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{
						StateMachineArn: aws.String(smArn("loop")),
						Name:            aws.String("e" + strconv.Itoa(i)),
						Input:           aws.String(fmt.Sprintf(`{"id": %d}`, i)),
					})
					var exists *types.ExecutionAlreadyExists
					if err != nil && !errors.As(err, &exists) {
						t.Errorf("start e%d: %v", i, err)
					}
				}
			}()
		}
		for i := from; i < to; i++ {
			ids <- i
		}
		close(ids)
		wg.Wait()
	}

	start(c, 0, n/2)
	s.kill() // crash with half the executions started
	s = startServer(t, db, args...)
	resumed := 0
	c = s.client(t)
	start(c, 0, n) // the first half again: idempotent
	for crash := range 4 {
		time.Sleep(time.Duration(100+50*crash) * time.Millisecond)
		s.kill()
		if regexp.MustCompile(`resuming running executions`).MatchString(s.stderr.String()) {
			resumed++
		}
		s = startServer(t, db, args...)
	}
	c = s.client(t)
	require.GreaterOrEqual(t, resumed, 4, "every restart but the last resumed running executions")

	for i := range n {
		arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:loop:e%d", i)
		out := waitDone(t, c, arn)
		require.Equal(t, types.ExecutionStatusSucceeded, out.Status, "e%d", i)
		require.JSONEq(t, fmt.Sprintf(`{"i": 5, "id": %d}`, i), aws.ToString(out.Output))
		checkHistory(t, c, arn)
	}
	s.stop(t)
	info, err := os.Stat(db)
	require.NoError(t, err)
	t.Logf("%d executions survived 5 crashes; database %d bytes (%.0f bytes per execution)", n, info.Size(), float64(info.Size())/float64(n))
}

// checkHistory checks ids 1..n without gap or duplicate, linkage to
// earlier events only, and each state entered as often as the loop says.
func checkHistory(t *testing.T, c *sfn.Client, arn string) {
	t.Helper()
	var events []types.HistoryEvent
	var token *string
	for {
		out, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{
			ExecutionArn: aws.String(arn), MaxResults: 1000, NextToken: token,
		})
		require.NoError(t, err)
		events = append(events, out.Events...)
		if out.NextToken == nil {
			break
		}
		token = out.NextToken
	}
	entered := map[string]int{}
	for i, e := range events {
		require.Equal(t, int64(i+1), e.Id, "%s: event ids have a gap or a duplicate", arn)
		require.Less(t, e.PreviousEventId, e.Id)
		if d := e.StateEnteredEventDetails; d != nil {
			entered[aws.ToString(d.Name)]++
		}
	}
	require.Equal(t, map[string]int{"Init": 1, "W": 5, "Inc": 5, "More": 5, "Done": 1}, entered, "%s: states entered", arn)
	require.Equal(t, types.HistoryEventTypeExecutionSucceeded, events[len(events)-1].Type)
}
