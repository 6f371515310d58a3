package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/mounttest"
)

// rawConn is a plain TCP connection to a server, for requests no HTTP
// client would send.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, s *server) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", s.addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return &rawConn{Conn: conn, r: bufio.NewReader(conn)}
}

// requestHead is the header block of a request to the API with a body of
// length bytes, without the blank line that ends it.
func requestHead(s *server, op string, length int) string {
	return fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.0\r\n"+
		"X-Amz-Target: AWSStepFunctions.%s\r\nContent-Length: %d\r\n", s.addr, op, length)
}

// trickle writes one byte of text every interval until the text is
// written, a write fails or done is closed.
func trickle(c net.Conn, text string, interval time.Duration, done <-chan struct{}) {
	for i := 0; i < len(text); i++ {
		select {
		case <-done:
			return
		case <-time.After(interval):
		}
		if _, err := c.Write([]byte{text[i]}); err != nil {
			return
		}
	}
}

// readResponse reads one response, waiting at most 15 s.
func (c *rawConn) readResponse(t *testing.T) (*http.Response, []byte) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(15*time.Second)))
	res, err := http.ReadResponse(c.r, nil)
	require.NoError(t, err, "no response within 15 s")
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, body
}

// requireClosed waits at most 15 s for the server to close the
// connection, reading nothing more.
func (c *rawConn) requireClosed(t *testing.T) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(15*time.Second)))
	n, err := c.r.Read(make([]byte, 1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server did not close the connection within 15 s")
	}
	require.Zero(t, n)
	require.Error(t, err) // io.EOF, or a reset after the server closed with unread data
}

func awsError(t *testing.T, res *http.Response, body []byte) (string, string) {
	t.Helper()
	require.Equal(t, "application/x-amz-json-1.0", res.Header.Get("Content-Type"), string(body))
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(body, &e), string(body))
	return e.Type, e.Message
}

func TestHardeningTimeouts(t *testing.T) {
	t.Parallel()

	s := startServer(t, ":memory:", "--read-timeout", "1s", "--read-header-timeout", "1s", "--idle-timeout", "1s")

	t.Run("SlowBody", func(t *testing.T) {
		t.Parallel()
		c := dialRaw(t, s)
		body := `{"maxResults": 10}` + strings.Repeat(" ", 200)
		_, err := fmt.Fprintf(c, "%s\r\n%s", requestHead(s, "ListStateMachines", len(body)), body[:5])
		require.NoError(t, err)
		done := make(chan struct{})
		defer close(done)
		go trickle(c, body[5:], 100*time.Millisecond, done)

		res, resBody := c.readResponse(t)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, string(resBody))
		typ, msg := awsError(t, res, resBody)
		require.Equal(t, "com.amazon.coral.service#SerializationException", typ)
		require.Contains(t, msg, "Could not read the request body")
		require.Contains(t, msg, "timeout")
		c.requireClosed(t)
	})

	t.Run("SlowHeaders", func(t *testing.T) {
		t.Parallel()
		c := dialRaw(t, s)
		_, err := fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\n", s.addr)
		require.NoError(t, err)
		done := make(chan struct{})
		defer close(done)
		go trickle(c, strings.Repeat("X-Slow: a\r\n", 100), 100*time.Millisecond, done)
		c.requireClosed(t)
	})

	t.Run("IdleConnection", func(t *testing.T) {
		t.Parallel()
		c := dialRaw(t, s)
		_, err := fmt.Fprintf(c, "%s\r\n{}", requestHead(s, "ListStateMachines", 2))
		require.NoError(t, err)
		res, body := c.readResponse(t)
		require.Equal(t, http.StatusOK, res.StatusCode, string(body))
		c.requireClosed(t)
	})

	t.Run("LongPollOutlastsReadTimeout", func(t *testing.T) {
		t.Parallel()
		client := s.client(t)
		ctx := context.Background()
		act, err := client.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("slow-poll")})
		require.NoError(t, err)
		def := fmt.Sprintf(`{"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": %q, "End": true}}}`, *act.ActivityArn)
		sm, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
			Name: aws.String("slow-poll"), Definition: aws.String(def), RoleArn: aws.String(roleArn),
		})
		require.NoError(t, err)

		type poll struct {
			out *sfn.GetActivityTaskOutput
			err error
		}
		polled := make(chan poll, 1)
		go func() {
			out, err := client.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn})
			polled <- poll{out, err}
		}()
		// The poll has waited longer than the read timeout when the task
		// comes.
		time.Sleep(2500 * time.Millisecond)
		_, err = client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Input: aws.String(`{"n": 1}`)})
		require.NoError(t, err)
		select {
		case p := <-polled:
			require.NoError(t, p.err)
			require.NotNil(t, p.out.TaskToken, "the poll ended without the task")
			require.JSONEq(t, `{"n": 1}`, aws.ToString(p.out.Input))
		case <-time.After(30 * time.Second):
			t.Fatal("the poll did not get the task within 30 s")
		}
	})
}

func TestHardeningOversizedHeader(t *testing.T) {
	t.Parallel()

	s := startServer(t, ":memory:", "--max-header-bytes", "4096")
	c := dialRaw(t, s)
	// Go's server reads up to 4 KiB past the limit before refusing.
	_, err := fmt.Fprintf(c, "%sX-Padding: %s\r\n\r\n{}", requestHead(s, "ListStateMachines", 2), strings.Repeat("p", 16*1024))
	require.NoError(t, err)
	res, body := c.readResponse(t)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode, string(body))
	typ, msg := awsError(t, res, body)
	require.Equal(t, "com.amazonaws.swf.service.v2.model#RequestHeaderFieldsTooLargeException", typ)
	require.Equal(t, "Request header fields exceed the maximum size of 4096 bytes", msg)
	require.NotEmpty(t, res.Header.Get("x-amzn-RequestId"))

	// A header block within the limit is served.
	c = dialRaw(t, s)
	_, err = fmt.Fprintf(c, "%sX-Padding: %s\r\n\r\n{}", requestHead(s, "ListStateMachines", 2), strings.Repeat("p", 2*1024))
	require.NoError(t, err)
	res, body = c.readResponse(t)
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
}

func TestHardeningUnpairedSurrogateNames(t *testing.T) {
	t.Parallel()

	s := startServer(t, ":memory:")
	call := func(t *testing.T, op, body string) (*http.Response, []byte) {
		t.Helper()
		c := dialRaw(t, s)
		_, err := fmt.Fprintf(c, "%s\r\n%s", requestHead(s, op, len(body)), body)
		require.NoError(t, err)
		return c.readResponse(t)
	}
	def := `{\"StartAt\": \"P\", \"States\": {\"P\": {\"Type\": \"Pass\", \"End\": true}}}`
	res, body := call(t, "CreateStateMachine", `{"name": "sm\ud800", "definition": "`+def+`", "roleArn": "`+roleArn+`"}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, string(body))
	typ, _ := awsError(t, res, body)
	require.Equal(t, "com.amazonaws.swf.service.v2.model#InvalidName", typ)
	// The name comes back as it was sent.
	require.Contains(t, string(body), `"message":"Invalid Name: 'sm\ud800'"`)

	res, body = call(t, "CreateStateMachine", `{"name": "sm", "definition": "`+def+`", "roleArn": "`+roleArn+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	res, body = call(t, "StartExecution", `{"stateMachineArn": "`+smArn("sm")+`", "name": "\udc00x"}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, string(body))
	require.Contains(t, string(body), `"message":"Invalid Name: '\udc00x'"`)

	// Escapes inside the input's JSON text are the input's own.
	input := `{\"a\": \"\\ud800\"}`
	res, body = call(t, "StartExecution", `{"stateMachineArn": "`+smArn("sm")+`", "name": "x", "input": "`+input+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	out, err := s.client(t).DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{
		ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:sm:x"),
	})
	require.NoError(t, err)
	require.Equal(t, `{"a": "\ud800"}`, aws.ToString(out.Input))
}

func TestHardeningDatabaseFiles(t *testing.T) {
	t.Parallel()

	t.Run("OwnerOnly", func(t *testing.T) {
		t.Parallel()
		db := filepath.Join(t.TempDir(), "stepwise.db")
		s := startServer(t, db)
		_, err := s.client(t).ListStateMachines(context.Background(), &sfn.ListStateMachinesInput{})
		require.NoError(t, err)
		for _, name := range []string{db, db + "-wal", db + "-shm"} {
			fi, err := os.Stat(name)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
		}
	})

	// serveFails runs "stepwise serve" on db and returns what it printed
	// on stderr, requiring it to exit with status 1.
	serveFails := func(t *testing.T, db string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, binary, "serve", "--addr", "127.0.0.1:0", "--db", db)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "serve did not fail: %s", stderr.String())
		require.Equal(t, 1, exit.ExitCode(), stderr.String())
		return stderr.String()
	}

	t.Run("ReadOnlyDirectory", func(t *testing.T) {
		t.Parallel()
		dir := mounttest.Tmpfs(t, "ro,size=1m")
		db := filepath.Join(dir, "x.db")
		require.Equal(t, fmt.Sprintf("stepwise: open store %s: the directory %s is not writable: read-only file system\n", db, dir), serveFails(t, db))
	})

	t.Run("FullDisk", func(t *testing.T) {
		t.Parallel()
		dir := mounttest.Tmpfs(t, "size=16k")
		db := filepath.Join(dir, "x.db")
		require.Equal(t, fmt.Sprintf("stepwise: open store %s: the disk holding %s is full: no space left on device\n", db, dir), serveFails(t, db))
	})

	t.Run("MissingDirectory", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "nowhere")
		db := filepath.Join(dir, "x.db")
		require.Equal(t, fmt.Sprintf("stepwise: open store %s: the directory %s does not exist\n", db, dir), serveFails(t, db))
	})
}
