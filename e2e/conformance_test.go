package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/conformance"
)

// minPassRate is the lowest acceptable pass rate of the non-JSONata
// execution cases through the wire.
const minPassRate = 97.0

// TestConformanceThroughSDK replays the recorded execution and
// express_sync cases against the real server with the AWS SDK for Go: the
// state machine is created, the execution started and awaited, and status,
// output, error, cause and event types compared; the full history, fetched
// as raw JSON, is compared event by event.
func TestConformanceThroughSDK(t *testing.T) {
	t.Parallel()
	dir, ok := conformance.Dir()
	if !ok {
		t.Skip("conformance corpus not found: expected ../shared/conformance beside the repository (or set " + conformance.EnvDir + ")")
	}
	all, err := conformance.Load(dir, "")
	require.NoError(t, err)
	s := startServer(t, filepath.Join(t.TempDir(), "corpus.db"), "--wait-time-scale", "0")
	c := s.client(t)

	type result struct {
		kind, name string
		jsonata    bool
		diff, hist string
		hasHistory bool
	}
	var cases []*conformance.Case
	for _, cs := range all {
		if cs.Kind == "execution" || cs.Kind == "express_sync" {
			cases = append(cases, cs)
		}
	}
	results := make([]result, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cs := cases[i]
				r := result{kind: cs.Kind, name: cs.Name, jsonata: cs.HasFeature("jsonata")}
				r.diff, r.hist, r.hasHistory = runWireCase(c, s, cs, i)
				results[i] = r
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()

	for _, kind := range []string{"execution", "express_sync"} {
		for _, jsonata := range []bool{false, true} {
			total, passed, withHist, histOK := 0, 0, 0, 0
			var fails []string
			for _, r := range results {
				if r.kind != kind || r.jsonata != jsonata {
					continue
				}
				total++
				if r.diff == "" {
					passed++
				} else {
					fails = append(fails, r.name+"\n    "+strings.ReplaceAll(r.diff, "\n", "\n    "))
				}
				if r.hasHistory {
					withHist++
					if r.hist == "" {
						histOK++
					}
				}
			}
			if total == 0 {
				continue
			}
			label := "non-JSONata"
			if jsonata {
				label = "JSONata"
			}
			rate := float64(passed) * 100 / float64(total)
			t.Logf("through the SDK, %s %s cases: %d/%d passed (%.1f%%); full histories identical: %d/%d", kind, label, passed, total, rate, histOK, withHist)
			sort.Strings(fails)
			for _, f := range fails {
				t.Logf("FAIL %s", f)
			}
			require.GreaterOrEqual(t, rate, minPassRate, "%s %s pass rate", kind, label)
		}
	}
}

// runWireCase runs one case; it returns the result difference, the history
// difference and whether the case has a recorded history.
func runWireCase(c *sfn.Client, s *server, cs *conformance.Case, i int) (string, string, bool) {
	ctx := context.Background()
	name := fmt.Sprintf("case%d", i)
	typ := types.StateMachineTypeStandard
	if cs.Kind == "express_sync" {
		typ = types.StateMachineTypeExpress
	}
	created, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String(name), Definition: aws.String(cs.DefinitionText()), RoleArn: aws.String(roleArn), Type: typ,
	})
	if err != nil {
		return "create: " + trimErr(err), "", false
	}
	r := &conformance.Result{}
	if cs.Kind == "express_sync" {
		out, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{
			StateMachineArn: created.StateMachineArn, Input: aws.String(cs.InputText()),
		})
		if err != nil {
			return "start sync: " + trimErr(err), "", false
		}
		r.Status, r.Output, r.Error, r.Cause = string(out.Status), aws.ToString(out.Output), out.Error, out.Cause
		return cs.CheckExecution(r), "", false
	}
	started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: created.StateMachineArn, Name: aws.String("run"), Input: aws.String(cs.InputText()),
	})
	if err != nil {
		return "start: " + trimErr(err), "", false
	}
	var out *sfn.DescribeExecutionOutput
	for {
		out, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: started.ExecutionArn})
		if err != nil {
			return "describe: " + trimErr(err), "", false
		}
		if out.Status != types.ExecutionStatusRunning {
			break
		}
	}
	r.Status, r.Output, r.Error, r.Cause = string(out.Status), aws.ToString(out.Output), out.Error, out.Cause
	hist, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: started.ExecutionArn, MaxResults: 1000})
	if err != nil {
		return "history: " + trimErr(err), "", false
	}
	for _, e := range hist.Events {
		r.Events = append(r.Events, string(e.Type))
	}
	diff := cs.CheckExecution(r)
	raw, err := rawCall(s, "GetExecutionHistory", fmt.Sprintf(`{"executionArn": %q, "maxResults": 1000}`, aws.ToString(started.ExecutionArn)))
	if err != nil {
		return diff, err.Error(), len(cs.History) > 0
	}
	events := raw[bytes.IndexByte(raw, '[') : bytes.LastIndexByte(raw, ']')+1]
	return diff, cs.CheckHistory(events), len(cs.History) > 0 && !cs.ParallelEventsSorted
}

// rawCall sends one AWS JSON 1.0 request and returns the response body.
func rawCall(s *server, op, body string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, s.url()+"/", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %s", op, resp.StatusCode, b)
	}
	return b, nil
}
