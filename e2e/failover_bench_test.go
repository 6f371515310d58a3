package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"stepwise/internal/testkit/pgtest"
)

// failoverLoop waits a second at a time, for ever: its history tells when
// a server last moved it.
const failoverLoop = `{"StartAt": "W", "States": {
  "W": {"Type": "Wait", "Seconds": 1, "Next": "Again"},
  "Again": {"Type": "Choice", "Choices": [{"Variable": "$", "IsPresent": true, "Next": "W"}], "Default": "Done"},
  "Done": {"Type": "Succeed"}}}`

// BenchmarkFailover measures, over 10 kills, the time from a kill -9 of
// one of three servers sharing a PostgreSQL database to the first state
// transition a survivor makes in one of the executions it took over (the
// earliest history event after the kill), with the default lease. Run it
// with -benchtime 1x:
//
//	go test ./e2e -run '^$' -bench Failover -benchtime 1x
func BenchmarkFailover(b *testing.B) {
	db := pgtest.NewDatabase(b)
	ctx := context.Background()
	ids := []string{"node-a", "node-b", "node-c"}
	servers := make([]*server, 3)
	for i, id := range ids {
		servers[i] = startServer(b, db, "--node-id", id)
	}
	if _, err := servers[0].client(b).CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("forever"), Definition: aws.String(failoverLoop), RoleArn: aws.String(roleArn)}); err != nil {
		b.Fatal(err)
	}
	var moved []time.Duration
	for round := range 10 {
		k := round % 3
		c := servers[k].client(b)
		var arns []string
		for i := range 10 {
			out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("forever")), Name: aws.String(fmt.Sprintf("f%d-%d", round, i))})
			if err != nil {
				b.Fatal(err)
			}
			arns = append(arns, aws.ToString(out.ExecutionArn))
		}
		time.Sleep(1500 * time.Millisecond) // the executions are running
		killed := time.Now()
		servers[k].kill()
		survivor := servers[(k+1)%3].client(b)
		var first time.Time
		for first.IsZero() {
			time.Sleep(20 * time.Millisecond)
			for _, arn := range arns {
				h, err := survivor.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), ReverseOrder: true, MaxResults: 1})
				if err != nil {
					b.Fatal(err)
				}
				if at := aws.ToTime(h.Events[0].Timestamp); at.After(killed) && (first.IsZero() || at.Before(first)) {
					first = at
				}
			}
		}
		moved = append(moved, first.Sub(killed))
		for _, arn := range arns {
			if _, err := survivor.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(arn)}); err != nil {
				b.Fatal(err)
			}
		}
		servers[k] = startServer(b, db, "--node-id", ids[k])
	}
	slices.Sort(moved)
	b.ReportMetric(float64(moved[len(moved)/2].Milliseconds()), "ms-failover-median")
	b.ReportMetric(float64(moved[len(moved)-1].Milliseconds()), "ms-failover-max")
	b.Logf("kill -9 to the first transition on a survivor: %v", moved)
}
