package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/security/sigv4auth"
)

// The load generator signs with a key of the server's credentials file
// when the server is given one.
func TestBenchKey(t *testing.T) {
	t.Parallel()
	id, secret, err := benchKey([]string{"--time-skip"})
	require.NoError(t, err)
	require.Equal(t, "bench", id)
	require.Equal(t, "bench", secret)

	path := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, os.WriteFile(path, []byte("[b]\naws_access_key_id = KB\naws_secret_access_key = sb\n[a]\naws_access_key_id = KA\naws_secret_access_key = sa\n"), 0o600))
	for _, args := range [][]string{{"--credentials", path}, {"--time-skip", "--credentials=" + path}} {
		id, secret, err = benchKey(args)
		require.NoError(t, err)
		require.Equal(t, "KA", id)
		require.Equal(t, "sa", secret)
	}
	_, _, err = benchKey([]string{"--credentials", path + ".missing"})
	require.ErrorContains(t, err, "credentials: stat")
}

// The model's line says per unit what the database did between two
// samples, without the probe's own statements, and leaves out what it
// could not read.
func TestBenchDBPerUnit(t *testing.T) {
	t.Parallel()
	before := dbSample{writes: 100, stmts: 1000, walSyncs: 10, walBytes: 0, cpu: 1.5}
	after := dbSample{writes: 200, stmts: 2004, walSyncs: 15, walBytes: 150000, cpu: 2.5}
	require.Equal(t, ", database cpu 10000 µs, 1.0000 write transactions, 10.000 statements, 0.0500 WAL flushes, 1500 WAL bytes per task",
		before.perUnit(after, 100, "task"))
	unread := dbSample{writes: -1, stmts: -1, walSyncs: -1, walBytes: -1, cpu: -1}
	require.Equal(t, "", unread.perUnit(unread, 100, "task"))
	require.Equal(t, ", 1.0000 write transactions per transition",
		dbSample{writes: 100, stmts: -1, walSyncs: -1, walBytes: -1, cpu: -1}.perUnit(dbSample{writes: 200, stmts: -1, walSyncs: -1, walBytes: -1, cpu: -1}, 100, "transition"))
	var probe *dbProbe // no PostgreSQL: nothing read, nothing waited for
	require.Equal(t, unread, probe.sample(t.Context()))
	require.NoError(t, probe.analyze(t.Context()))
}

// The database's CPU is read from /proc only for a PostgreSQL server of
// this machine; the CPU of a process with its children is read there.
func TestBenchDBProc(t *testing.T) {
	t.Parallel()
	comm, ppid, ok := procParent(os.Getpid())
	require.True(t, ok)
	require.NotEmpty(t, comm)
	require.Equal(t, os.Getppid(), ppid)
	require.Zero(t, localPostmaster(os.Getpid())) // not a postgres
	require.Zero(t, localPostmaster(-1))
	require.GreaterOrEqual(t, clusterCPU(os.Getpid()), procCPU(os.Getpid()))
}

// The machine's share says how many cores were busy over a measurement
// and how many of them went to other processes than the bench's.
func TestBenchMachineShare(t *testing.T) {
	t.Parallel()
	db := dbSample{cpu: 1}
	require.Regexp(t, `^; machine: 1\.50 of \d+ cores busy, 0\.50 by other processes$`,
		machineShare(10, 13, 2, 1, 0.5, db, dbSample{cpu: 1.5}))
	require.Regexp(t, `, 0\.00 by other processes$`, machineShare(10, 11, 2, 1, 0.5, db, dbSample{cpu: 1.5}))
	require.Equal(t, "", machineShare(-1, 13, 2, 1, 0.5, db, db))
	require.Positive(t, machineBusy())
}

// The servers' pool size, for the warning that they may not fit in the
// database's max_connections.
func TestBenchPoolSize(t *testing.T) {
	t.Parallel()
	url := "postgres://u@h/db?sslmode=disable"
	require.Equal(t, max(4, runtime.NumCPU()), benchPoolSize(url, nil))
	require.Equal(t, 7, benchPoolSize(url+"&pool_max_conns=7", nil))
	require.Equal(t, 9, benchPoolSize(url+"&pool_max_conns=7", []string{"--db-pool-max=9"}))
	require.Equal(t, 3, benchPoolSize(url, []string{"--time-skip", "--db-pool-max", "3"}))
}

// The bench's lean client posts the AWS JSON 1.0 wire signed with SigV4
// (the server's verifier accepts it), reads the member it needs from the
// answer, and reports an error answer with its type and message.
func TestBenchLeanCaller(t *testing.T) {
	t.Parallel()
	verifier := sigv4auth.NewVerifier("states", func(id string) (string, bool) { return "sk", id == "KA" })
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		if _, err := verifier.Verify(r, body); err != nil {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"__type":"InvalidSignatureException","message":%q}`, err.Error())
			return
		}
		var in map[string]string
		require.NoError(t, json.Unmarshal(body, &in))
		require.Equal(t, "application/x-amz-json-1.0", r.Header.Get("Content-Type"))
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AWSStepFunctions.")
		mu.Lock()
		seen = append(seen, op+" "+in["stateMachineArn"]+in["executionArn"]+in["activityArn"]+in["taskToken"]+" "+in["name"]+in["workerName"]+" "+in["input"]+in["output"])
		mu.Unlock()
		switch op {
		case "StartExecution":
			fmt.Fprint(w, `{"executionArn":"arn:x:`+in["name"]+`","startDate":1.5}`)
		case "DescribeExecution":
			fmt.Fprint(w, `{"executionArn":"`+in["executionArn"]+`","status":"SUCCEEDED","output":"{}"}`)
		case "StartSyncExecution":
			fmt.Fprint(w, `{"status":"FAILED","error":"E","output":"{\"a\":1}"}`)
		case "GetActivityTask":
			if in["workerName"] == "idle" {
				fmt.Fprint(w, `{}`)
				return
			}
			fmt.Fprint(w, `{"input":"{\"taskToken\":\"no\"}","taskToken":"tok-1"}`)
		case "SendTaskSuccess":
			fmt.Fprint(w, `{}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"UnknownOperationException","message":"no"}`)
		}
	}))
	defer srv.Close()
	ctx := t.Context()
	l := newLeanCaller(srv.URL, 2, "KA", "sk")
	arn, err := l.startExecution(ctx, "arn:sm", "n1", `{"k":1}`)
	require.NoError(t, err)
	require.Equal(t, "arn:x:n1", arn)
	status, err := l.executionStatus(ctx, arn)
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", status)
	status, err = l.startSync(ctx, "arn:sm", `{}`)
	require.NoError(t, err)
	require.Equal(t, "FAILED", status)
	token, input, err := l.getActivityTask(ctx, "arn:act", "w1")
	require.NoError(t, err)
	require.Equal(t, "tok-1", token)
	require.Equal(t, `{"taskToken":"no"}`, input)
	token, input, err = l.getActivityTask(ctx, "arn:act", "idle")
	require.NoError(t, err)
	require.Empty(t, token)
	require.Empty(t, input)
	require.NoError(t, l.sendTaskSuccess(ctx, "tok-1", `{"done":true}`))
	require.Equal(t, []string{"StartExecution arn:sm n1 {\"k\":1}", "DescribeExecution arn:x:n1  ", "StartSyncExecution arn:sm  {}",
		"GetActivityTask arn:act w1 ", "GetActivityTask arn:act idle ", "SendTaskSuccess tok-1  {\"done\":true}"}, seen)

	_, err = newLeanCaller(srv.URL, 2, "KA", "wrong").startSync(ctx, "arn:sm", `{}`)
	require.ErrorContains(t, err, "StartSyncExecution: HTTP 403 InvalidSignatureException: ")
}

// The lean client reads a string member of an answer without decoding the
// rest, escapes included, and not from inside another string.
func TestBenchMemberString(t *testing.T) {
	t.Parallel()
	body := []byte(`{"output":"{\"status\":\"x\"}","redriveStatus":"NOT","status":"SUCCEEDED","name":"a\"b\\c\u00e9","n":1}`)
	for name, want := range map[string]string{"status": "SUCCEEDED", "name": "a\"b\\cé", "output": `{"status":"x"}`, "redriveStatus": "NOT"} {
		got, ok := memberString(body, name)
		require.True(t, ok, name)
		require.Equal(t, want, got, name)
	}
	for _, name := range []string{"n", "missing", "statu"} {
		_, ok := memberString(body, name)
		require.False(t, ok, name)
	}
}
