package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"stepwise/internal/pgtest"
)

// failoverLoop waits a second at a time, for ever: its history tells when
// a server last moved it.
const failoverLoop = `{"StartAt": "W", "States": {
  "W": {"Type": "Wait", "Seconds": 1, "Next": "Again"},
  "Again": {"Type": "Choice", "Choices": [{"Variable": "$", "IsPresent": true, "Next": "W"}], "Default": "Done"},
  "Done": {"Type": "Succeed"}}}`

// BenchmarkFailover measures, over 10 kills, the time from a kill -9 of
// the server holding a PostgreSQL database to the first state transition
// a standby makes in one of the executions it took over (the earliest
// history event after the kill). Run it with -benchtime 1x:
//
//	go test ./e2e -run '^$' -bench Failover -benchtime 1x
func BenchmarkFailover(b *testing.B) {
	db := pgtest.NewDatabase(b)
	ctx := context.Background()
	active := startServer(b, db)
	c := active.client(b)
	if _, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("forever"), Definition: aws.String(failoverLoop), RoleArn: aws.String(roleArn)}); err != nil {
		b.Fatal(err)
	}
	var arns []string
	for i := range 20 {
		out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("forever")), Name: aws.String(fmt.Sprintf("f%d", i))})
		if err != nil {
			b.Fatal(err)
		}
		arns = append(arns, aws.ToString(out.ExecutionArn))
	}
	var served, moved []time.Duration
	for range 10 {
		standby := make(chan *server, 1)
		go func() { standby <- startServer(b, db, "--standby") }()
		time.Sleep(1500 * time.Millisecond) // the standby is waiting, the executions running
		killed := time.Now()
		active.kill()
		next := <-standby
		served = append(served, time.Since(killed))
		c = next.client(b)
		var first time.Time
		for first.IsZero() {
			time.Sleep(20 * time.Millisecond)
			for _, arn := range arns {
				h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), ReverseOrder: true, MaxResults: 1})
				if err != nil {
					b.Fatal(err)
				}
				if at := aws.ToTime(h.Events[0].Timestamp); at.After(killed) && (first.IsZero() || at.Before(first)) {
					first = at
				}
			}
		}
		moved = append(moved, first.Sub(killed))
		active = next
	}
	slices.Sort(served)
	slices.Sort(moved)
	b.ReportMetric(float64(moved[len(moved)/2].Milliseconds()), "ms-failover-median")
	b.ReportMetric(float64(moved[len(moved)-1].Milliseconds()), "ms-failover-max")
	b.ReportMetric(float64(served[len(served)/2].Milliseconds()), "ms-serving-median")
	b.Logf("kill -9 to serving: %v; to the first transition on the standby: %v", served, moved)
}
