// Command nullserver answers the calls of "stepwise bench" as fast as it
// can and does nothing else: no engine, no store, no durability. Activity
// tasks are handed out from a channel (a started execution queues one, a
// SendTaskSuccess whose output has Step < 5 queues the next). It measures
// what the load generator and net/http alone cost on a machine:
//
//	go build -o /tmp/nullserver ./cli/testdata/nullserver
//	stepwise bench --server-command /tmp/nullserver --runs 1 --warmup 0 --sync-calls 0 --activity-runs 2000
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// steps is the bench's default number of activity tasks per execution.
const steps = 5

func main() {
	tasks := make(chan string, 1<<16)
	var tokens atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var in map[string]any
		if err := json.Unmarshal(body, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		str := func(k string) string { s, _ := in[k].(string); return s }
		var out any = map[string]any{}
		switch strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AWSStepFunctions.") {
		case "CreateActivity":
			out = map[string]any{"activityArn": "arn:aws:states:us-east-1:123456789012:activity:" + str("name"), "creationDate": 1}
		case "CreateStateMachine":
			out = map[string]any{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:" + str("name"), "creationDate": 1}
		case "StartExecution":
			if strings.HasSuffix(str("stateMachineArn"), ":bench-activities") {
				tasks <- str("input")
			}
			out = map[string]any{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:x:" + str("name"), "startDate": 1}
		case "DescribeExecution":
			out = map[string]any{"executionArn": str("executionArn"), "stateMachineArn": "x", "status": "SUCCEEDED", "startDate": 1}
		case "StartSyncExecution":
			out = map[string]any{"executionArn": "x", "status": "SUCCEEDED", "startDate": 1, "stopDate": 1}
		case "GetActivityTask":
			select {
			case t := <-tasks:
				out = map[string]any{"taskToken": fmt.Sprintf("token-%d", tokens.Add(1)), "input": t}
			case <-time.After(60 * time.Second):
			case <-r.Context().Done():
				return
			}
		case "SendTaskSuccess":
			var o struct{ Step int }
			if json.Unmarshal([]byte(str("output")), &o) == nil && o.Step < steps {
				tasks <- str("output")
			}
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		json.NewEncoder(w).Encode(out)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The line "stepwise bench" reads a server's address from.
	fmt.Printf("nullserver: serving on http://%s (no data)\n", ln.Addr())
	fmt.Fprintln(os.Stderr, http.Serve(ln, h))
}
