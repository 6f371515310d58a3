package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
	"stepwise/internal/testkit/testwait"
)

// historyTypes is an execution's history as event ids and types.
func historyTypes(t *testing.T, c *sfn.Client, arn string) []string {
	t.Helper()
	h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	require.NoError(t, err)
	var out []string
	for i, ev := range h.Events {
		require.Equal(t, int64(i+1), ev.Id, arn)
		out = append(out, fmt.Sprintf("%d %s", ev.Id, ev.Type))
	}
	return out
}

// getProbe returns the status and the body of a GET of a health probe.
func getProbe(t *testing.T, s *server, path string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(s.url() + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

// stepwise backup copies the database of a server that keeps starting
// executions while executions wait in Wait states; a second server
// started on the copy has every execution the copy holds, each with its
// whole history, and carries the waiting ones on to their end.
func TestBackupWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "stepwise.db")
	s := startServer(t, db)
	c := s.client(t)
	ctx := context.Background()

	pass := createMachine(t, c, "b-pass", `{"StartAt": "A", "States": {"A": {"Type": "Pass", "Result": {"n": 1}, "Next": "B"}, "B": {"Type": "Pass", "End": true}}}`)
	wait := createMachine(t, c, "b-wait", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 5, "Next": "D"}, "D": {"Type": "Pass", "End": true}}}`)

	var done, waiting []string
	for i := range 5 {
		done = append(done, startExecution(t, c, pass, fmt.Sprint("p", i), `{}`))
	}
	for _, arn := range done {
		waitDone(t, c, arn)
	}
	for i := range 5 {
		waiting = append(waiting, startExecution(t, c, wait, fmt.Sprint("w", i), fmt.Sprintf(`{"i": %d}`, i)))
	}

	// Executions keep starting while the copy is taken.
	var (
		wg      sync.WaitGroup
		stop    atomic.Bool
		mu      sync.Mutex
		started []string
	)
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(pass), Name: aws.String(fmt.Sprint("during", i))})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			started = append(started, aws.ToString(out.ExecutionArn))
			mu.Unlock()
		}
	})
	time.Sleep(200 * time.Millisecond)
	backup := filepath.Join(dir, "backup.db")
	out, err := exec.Command(binary, "backup", "--db", db, backup).CombinedOutput()
	require.NoError(t, err, string(out))
	stop.Store(true)
	wg.Wait()
	require.Regexp(t, "^stepwise: backed up "+regexp.QuoteMeta(db)+" to "+regexp.QuoteMeta(backup)+` \([0-9.]+ [kM]B in \d+ms\)\n$`, string(out))
	fi, err := os.Stat(backup)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	mu.Lock()
	t.Logf("%d executions started while serving; %s", len(started), out)
	mu.Unlock()

	// The waiting ones were running when the copy was taken: they still
	// are.
	for _, arn := range waiting {
		x, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err)
		require.Equal(t, types.ExecutionStatusRunning, x.Status)
	}

	// An existing file is refused without --force.
	out, err = exec.Command(binary, "backup", "--db", db, backup).CombinedOutput()
	require.Error(t, err)
	require.Equal(t, "stepwise: backup: "+backup+": file already exists (--force replaces it)\n", string(out))

	// The first server's view of the executions that ended before the copy.
	want := map[string][]string{}
	for _, arn := range done {
		want[arn] = historyTypes(t, c, arn)
	}

	// A second server on the copy.
	s2 := startServer(t, backup)
	c2 := s2.client(t)
	code, body := getProbe(t, s2, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok", body["status"])
	testwait.Until(t, func() bool {
		code, _ := getProbe(t, s2, "/readyz")
		return code == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond)

	for arn, h := range want {
		x, err := c2.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err)
		require.Equal(t, types.ExecutionStatusSucceeded, x.Status)
		require.Equal(t, h, historyTypes(t, c2, arn))
	}
	// The executions started during the copy: each one the copy has is
	// whole (one snapshot), and they are a prefix of those started.
	list, err := c2.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(pass), MaxResults: 1000})
	require.NoError(t, err)
	inCopy := map[string]bool{}
	for _, x := range list.Executions {
		inCopy[aws.ToString(x.ExecutionArn)] = true
	}
	copied := 0
	for i, arn := range started {
		if !inCopy[arn] {
			for _, later := range started[i:] {
				require.False(t, inCopy[later], "%s is in the copy but %s, started before it, is not", later, arn)
			}
			break
		}
		copied++
		x := waitDone(t, c2, arn)
		require.Equal(t, types.ExecutionStatusSucceeded, x.Status)
		require.Equal(t, historyTypes(t, c, arn), historyTypes(t, c2, arn))
	}
	require.Len(t, list.Executions, len(done)+copied)
	t.Logf("the copy has %d of the %d executions started while serving", copied, len(started))

	// The waiting ones resume on the second server and end there.
	for _, arn := range waiting {
		x := waitDone(t, c2, arn)
		require.Equal(t, types.ExecutionStatusSucceeded, x.Status)
		require.Equal(t, []string{"1 ExecutionStarted", "2 WaitStateEntered", "3 WaitStateExited", "4 PassStateEntered", "5 PassStateExited", "6 ExecutionSucceeded"},
			historyTypes(t, c2, arn))
	}
	s2.stop(t)

	// --force replaces the copy with a newer one.
	out, err = exec.Command(binary, "backup", "--db", db, "--force", backup).CombinedOutput()
	require.NoError(t, err, string(out))
	s.stop(t)
}
