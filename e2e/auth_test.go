package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

// The keys of the credentials file of the tests: two profiles.
const (
	authKeyID  = "AKIDSTEPWISETEST"
	authSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYSTEPWISE"
	ciKeyID    = "AKIDSTEPWISECI"
	ciSecret   = "ci/secret"
)

// writeCredentials writes a shared-credentials file of the tests' keys.
func writeCredentials(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, os.WriteFile(path, []byte("[default]\naws_access_key_id = "+authKeyID+"\naws_secret_access_key = "+authSecret+
		"\n\n[ci]\naws_access_key_id = "+ciKeyID+"\naws_secret_access_key = "+ciSecret+"\nregion = us-east-1\n"), 0o600))
	return path
}

// startAuthServer runs a server that requires signed requests.
func startAuthServer(t testing.TB, args ...string) *server {
	t.Helper()
	return startServer(t, filepath.Join(t.TempDir(), "auth.db"), append([]string{"--credentials", writeCredentials(t)}, args...)...)
}

// clientAs returns an SDK client signing with a key pair (none when id is
// empty: the SDK then sends requests unsigned).
func (s *server) clientAs(t testing.TB, id, secret, token string, optFns ...func(*sfn.Options)) *sfn.Client {
	t.Helper()
	var provider aws.CredentialsProvider = aws.AnonymousCredentials{}
	if id != "" {
		provider = credentials.NewStaticCredentialsProvider(id, secret, token)
	}
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(provider),
	)
	require.NoError(t, err)
	return sfn.NewFromConfig(cfg, append([]func(*sfn.Options){func(o *sfn.Options) {
		o.BaseEndpoint = aws.String(s.url())
		o.APIOptions = append(o.APIOptions, disableHostPrefix)
	}}, optFns...)...)
}

// requireAPIError checks an SDK call's error: its code, HTTP status and
// message.
func requireAPIError(t testing.TB, err error, code string, status int, message string) {
	t.Helper()
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "error %v", err)
	require.Equal(t, code, apiErr.ErrorCode(), "error %v", err)
	var re *awshttp.ResponseError
	require.True(t, errors.As(err, &re), "error %v", err)
	require.Equal(t, status, re.HTTPStatusCode())
	if message != "" {
		require.Equal(t, message, apiErr.ErrorMessage())
	}
}

// A server with --credentials serves the Go SDK signing with a key of the
// file (any profile's, with or without a session token), refuses unsigned
// requests, unknown keys and wrong secrets as AWS does, keeps /health
// open, and its own Task states still call its API in-process.
func TestAuthGoSDK(t *testing.T) {
	t.Parallel()
	s := startAuthServer(t)
	ctx := context.Background()
	c := s.clientAs(t, authKeyID, authSecret, "")

	// A state machine whose Task calls the server's own API (aws-sdk:sfn).
	arn := createMachine(t, c, "self", `{"StartAt": "Describe", "States": {"Describe": {"Type": "Task",
		"Resource": "arn:aws:states:::aws-sdk:sfn:describeStateMachine",
		"Parameters": {"StateMachineArn.$": "$$.StateMachine.Id"}, "ResultSelector": {"name.$": "$.Name"}, "End": true}}}`)
	x := startExecution(t, c, arn, "first", `{}`)
	d := waitDone(t, c, x)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%s %s", aws.ToString(d.Error), aws.ToString(d.Cause))
	require.JSONEq(t, `{"name": "self"}`, aws.ToString(d.Output))

	// The other profile's key, and a session token (the key decides).
	for _, other := range []*sfn.Client{s.clientAs(t, ciKeyID, ciSecret, ""), s.clientAs(t, authKeyID, authSecret, "a-session-token")} {
		out, err := other.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(x)})
		require.NoError(t, err)
		require.Equal(t, types.ExecutionStatusSucceeded, out.Status)
	}

	_, err := s.clientAs(t, "AKIDNOBODY", authSecret, "").ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	requireAPIError(t, err, "UnrecognizedClientException", 400, "The security token included in the request is invalid.")
	_, err = s.clientAs(t, authKeyID, "not-the-secret", "").ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	requireAPIError(t, err, "InvalidSignatureException", 400, "")
	require.Contains(t, err.Error(), "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
	require.Contains(t, err.Error(), "The Canonical String for this request should have been")
	_, err = s.clientAs(t, "", "", "").ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	requireAPIError(t, err, "MissingAuthenticationTokenException", 400, "Request is missing Authentication Token")

	resp, err := http.Get(s.url() + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// sign signs a request of the API as the Go SDK does, at a time.
func sign(t testing.TB, endpoint, target, body, id, secret string, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint+"/", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+target)
	sum := sha256.Sum256([]byte(body))
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: id, SecretAccessKey: secret},
		req, hex.EncodeToString(sum[:]), "states", "us-east-1", at))
	return req
}

// answer is an API response: its status and error, if any.
type answer struct {
	status         int
	code, message  string
	requestID      string
	body           []byte
	contentTypeSet bool
}

func send(t testing.TB, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode, requestID: resp.Header.Get("x-amzn-RequestId"), body: body,
		contentTypeSet: resp.Header.Get("Content-Type") == "application/x-amz-json-1.0"}
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Type != "" {
		a.code, a.message = e.Type, e.Message
	}
	return a
}

// Requests signed by hand: a body changed after signing, a signature of
// ten minutes ago (or ahead), no signature at all; AWS's answers, with a
// request id.
func TestAuthRefusals(t *testing.T) {
	t.Parallel()
	s := startAuthServer(t)
	const body = `{"maxResults": 10}`

	ok := send(t, sign(t, s.url(), "ListStateMachines", body, authKeyID, authSecret, time.Now()))
	require.Equal(t, http.StatusOK, ok.status, "%s", ok.body)

	tampered := sign(t, s.url(), "ListStateMachines", body, authKeyID, authSecret, time.Now())
	tampered.Body = io.NopCloser(strings.NewReader(`{"maxResults": 20}`)) // same length
	a := send(t, tampered)
	require.Equal(t, 400, a.status)
	require.Equal(t, "com.amazon.coral.service#InvalidSignatureException", a.code)
	require.True(t, strings.HasPrefix(a.message, "The request signature we calculated does not match the signature you provided. "+
		"Check your AWS Secret Access Key and signing method. Consult the service documentation for details.\n\n"+
		"The Canonical String for this request should have been\n'POST\n/\n\ncontent-length:18\ncontent-type:application/x-amz-json-1.0\n"), a.message)
	require.NotEmpty(t, a.requestID)
	require.True(t, a.contentTypeSet)

	old := time.Now().Add(-10 * time.Minute)
	a = send(t, sign(t, s.url(), "ListStateMachines", body, authKeyID, authSecret, old))
	require.Equal(t, 400, a.status)
	require.Equal(t, "com.amazon.coral.service#InvalidSignatureException", a.code)
	require.Regexp(t, `^Signature expired: `+old.UTC().Format("20060102T150405Z")+` is now earlier than \d{8}T\d{6}Z \(\d{8}T\d{6}Z - 5 min\.\)$`, a.message)

	ahead := time.Now().Add(10 * time.Minute)
	a = send(t, sign(t, s.url(), "ListStateMachines", body, authKeyID, authSecret, ahead))
	require.Equal(t, "com.amazon.coral.service#InvalidSignatureException", a.code)
	require.Regexp(t, `^Signature not yet current: `+ahead.UTC().Format("20060102T150405Z")+` is still later than \d{8}T\d{6}Z \(\d{8}T\d{6}Z \+ 5 min\.\)$`, a.message)

	unsigned, err := http.NewRequest(http.MethodPost, s.url()+"/", strings.NewReader(body))
	require.NoError(t, err)
	unsigned.Header.Set("Content-Type", "application/x-amz-json-1.0")
	unsigned.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	a = send(t, unsigned)
	require.Equal(t, 400, a.status)
	require.Equal(t, "com.amazon.coral.service#MissingAuthenticationTokenException", a.code)
	require.Equal(t, "Request is missing Authentication Token", a.message)

	unknown := sign(t, s.url(), "ListStateMachines", body, "AKIDNOBODY", authSecret, time.Now())
	a = send(t, unknown)
	require.Equal(t, "com.amazon.coral.service#UnrecognizedClientException", a.code)

	incomplete, err := http.NewRequest(http.MethodPost, s.url()+"/", strings.NewReader(body))
	require.NoError(t, err)
	incomplete.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	incomplete.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
	incomplete.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+authKeyID+"/20260101/us-east-1/states/aws4_request, SignedHeaders=host;x-amz-date")
	a = send(t, incomplete)
	require.Equal(t, 400, a.status)
	require.Equal(t, "com.amazon.coral.service#IncompleteSignatureException", a.code)
	require.Equal(t, "Authorization header requires 'Signature' parameter. Authorization=AWS4-HMAC-SHA256 Credential="+authKeyID+
		"/20260101/us-east-1/states/aws4_request, SignedHeaders=host;x-amz-date", a.message)

	// A body over the API's limit is refused for its size, as without
	// credentials.
	large := sign(t, s.url(), "ListStateMachines", `{"x": "`+strings.Repeat("x", 2<<20)+`"}`, authKeyID, authSecret, time.Now())
	a = send(t, large)
	require.Equal(t, http.StatusRequestEntityTooLarge, a.status)
}

// StartSyncExecution with the SDK's "sync-" host prefix on: the request
// goes to sync-localhost:PORT (dialed at the server here), signed for that
// host, and is verified as it was signed.
func TestAuthSyncHostPrefix(t *testing.T) {
	t.Parallel()
	s := startAuthServer(t)
	_, port, err := net.SplitHostPort(s.addr)
	require.NoError(t, err)
	var mu sync.Mutex
	var dialed []string
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, addr)
			mu.Unlock()
			return (&net.Dialer{}).DialContext(ctx, network, s.addr)
		}
	})
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"), config.WithHTTPClient(httpClient),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(authKeyID, authSecret, "")))
	require.NoError(t, err)
	c := sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String("http://localhost:" + port) })
	ctx := context.Background()
	out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("sync"), RoleArn: aws.String(roleArn),
		Type: types.StateMachineTypeExpress, Definition: aws.String(`{"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": {"ok": true}, "End": true}}}`)})
	require.NoError(t, err)
	run, err := c.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: out.StateMachineArn, Input: aws.String(`{}`)})
	require.NoError(t, err)
	require.Equal(t, types.SyncExecutionStatusSucceeded, run.Status)
	require.JSONEq(t, `{"ok": true}`, aws.ToString(run.Output))
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, dialed, "sync-localhost:"+port)
}

// needBoto3 skips a test without python3 and boto3 (fails it on CI).
func needBoto3(t *testing.T) {
	t.Helper()
	if err := exec.Command("python3", "-c", "import boto3").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 with boto3 is required on CI")
		}
		t.Skip("python3 with boto3 is not available; install boto3 to run this test")
	}
}

// needAWSCLI skips a test without the aws command (fails it on CI).
func needAWSCLI(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("aws"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the AWS CLI (aws) is required on CI")
		}
		t.Skip("the aws command is not on PATH; install the AWS CLI to run this test")
	}
}

// boto3 runs testdata/auth_boto3.py and returns what it printed.
func boto3(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out, err := exec.Command("python3", append([]string{"testdata/auth_boto3.py"}, args...)...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var v map[string]any
	require.NoError(t, json.Unmarshal(bytes.TrimSpace(out), &v), "%s", out)
	return v
}

// boto3 (botocore signs without content-length, and signs a session
// token) with the right keys, with the "sync-" host prefix on; a wrong
// key and a wrong secret are refused as AWS refuses them.
func TestAuthBoto3(t *testing.T) {
	t.Parallel()
	needBoto3(t)
	s := startAuthServer(t)
	got := boto3(t, s.url(), authKeyID, authSecret, "plain")
	require.Equal(t, "SUCCEEDED", got["status"], "%v", got)
	require.JSONEq(t, `{"greeting": "Hello, boto3!"}`, got["output"].(string))
	require.Contains(t, got["prefixedHosts"], "sync-127.0.0.1")
	got = boto3(t, s.url(), ciKeyID, ciSecret, "token", "a-session-token")
	require.Equal(t, "SUCCEEDED", got["status"], "%v", got)

	got = boto3(t, s.url(), "AKIDNOBODY", authSecret, "nobody")
	require.Equal(t, map[string]any{"error": "UnrecognizedClientException", "message": "The security token included in the request is invalid.", "httpStatus": 400.0}, got)
	got = boto3(t, s.url(), authKeyID, "wrong", "wrong")
	require.Equal(t, "InvalidSignatureException", got["error"], "%v", got)
}

// awsCLI runs the aws command with credentials from a shared-credentials
// file and returns its output, or its error output when it fails.
func awsCLI(t *testing.T, endpoint string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("aws", append([]string{"stepfunctions", "--endpoint-url", endpoint, "--output", "json"}, args...)...)
	cmd.Env = append(cliEnv(), "AWS_DISABLE_HOST_PREFIX_INJECTION=true")
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return stderr.String(), err
	}
	return string(out), nil
}

// cliEnv is the environment of the AWS CLI in a test: without the AWS_
// settings of the machine, in us-east-1, with no config file or pager.
func cliEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return append(env, "AWS_DEFAULT_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_PAGER=")
}

// The AWS CLI, its keys in a shared-credentials file (the server's own
// file: any profile), works against a server that requires signatures;
// with a key the server does not know, it reports AWS's error.
func TestAuthAWSCLI(t *testing.T) {
	t.Parallel()
	needAWSCLI(t)
	creds := writeCredentials(t)
	s := startServer(t, filepath.Join(t.TempDir(), "cli.db"), "--credentials", creds)
	def := filepath.Join(t.TempDir(), "def.json")
	require.NoError(t, os.WriteFile(def, []byte(`{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`), 0o644))
	file := []string{"AWS_SHARED_CREDENTIALS_FILE=" + creds}

	out, err := awsCLI(t, s.url(), file, "create-state-machine", "--name", "cli", "--definition", "file://"+def, "--role-arn", roleArn)
	require.NoError(t, err, out)
	out, err = awsCLI(t, s.url(), append(file, "AWS_PROFILE=ci"), "start-execution", "--state-machine-arn", smArn("cli"), "--name", "one", "--input", `{"a": 1}`)
	require.NoError(t, err, out)
	var started struct{ ExecutionArn string }
	require.NoError(t, json.Unmarshal([]byte(out), &started))
	waitDone(t, s.clientAs(t, authKeyID, authSecret, ""), started.ExecutionArn)
	out, err = awsCLI(t, s.url(), file, "describe-execution", "--execution-arn", started.ExecutionArn)
	require.NoError(t, err, out)
	require.Contains(t, out, `"status": "SUCCEEDED"`)

	other := filepath.Join(t.TempDir(), "other")
	require.NoError(t, os.WriteFile(other, []byte("[default]\naws_access_key_id = AKIDNOBODY\naws_secret_access_key = x\n"), 0o600))
	out, err = awsCLI(t, s.url(), []string{"AWS_SHARED_CREDENTIALS_FILE=" + other}, "list-state-machines")
	require.Error(t, err)
	require.Contains(t, out, "An error occurred (UnrecognizedClientException) when calling the ListStateMachines operation: The security token included in the request is invalid.")
}

// The AWS CLI's own StartSyncExecution to the "sync-" prefixed host: the
// CLI runs in Python with that host resolved to the server's.
func TestAuthAWSCLISyncHostPrefix(t *testing.T) {
	t.Parallel()
	needAWSCLI(t)
	if err := exec.Command("python3", "-c", "import awscli.clidriver").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the AWS CLI's Python package (awscli) is required on CI")
		}
		t.Skip("the AWS CLI is not importable from python3 (awscli); it is needed to resolve the sync- host")
	}
	creds := writeCredentials(t)
	s := startServer(t, filepath.Join(t.TempDir(), "clisync.db"), "--credentials", creds)
	c := s.clientAs(t, authKeyID, authSecret, "")
	_, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String("express"), RoleArn: aws.String(roleArn),
		Type: types.StateMachineTypeExpress, Definition: aws.String(`{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)})
	require.NoError(t, err)
	script := `import socket, sys
_gai = socket.getaddrinfo
def gai(host, *a, **k):
    if isinstance(host, str) and host.startswith("sync-"):
        host = host[5:]
    return _gai(host, *a, **k)
socket.getaddrinfo = gai
from awscli.clidriver import main
sys.exit(main())`
	cmd := exec.Command("python3", "-c", script, "stepfunctions", "--endpoint-url", s.url(), "--output", "json",
		"start-sync-execution", "--state-machine-arn", smArn("express"), "--input", `{"via": "cli"}`)
	cmd.Env = append(cliEnv(), "AWS_SHARED_CREDENTIALS_FILE="+creds)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), `"status": "SUCCEEDED"`)
	require.Contains(t, string(out), `"output": "{\"via\":\"cli\"}"`)
}

var refusalRE = regexp.MustCompile(`refusing to serve on an address other than a loopback one without authentication`)

// serve runs the binary's serve command to its end (or for 2 s) and
// returns its exit code and output.
func serveBriefly(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--db", ":memory:"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), out.String(), errOut.String()
		}
		require.NoError(t, err)
		return 0, out.String(), errOut.String()
	case <-time.After(2 * time.Second):
		cmd.Process.Kill()
		<-done
		return -1, out.String(), errOut.String()
	}
}

// serve refuses an address others can reach without --credentials,
// unless --insecure; and --tls-cert needs --tls-key.
func TestServeListenRefusals(t *testing.T) {
	t.Parallel()
	code, _, stderr := serveBriefly(t, "--addr", "0.0.0.0:0")
	require.Equal(t, 2, code, stderr)
	require.Regexp(t, refusalRE, stderr)
	require.Contains(t, stderr, "Give --credentials FILE (an AWS shared-credentials file) to require signed requests, or --insecure to serve without authentication anyway")

	code, _, stderr = serveBriefly(t, "--addr", ":0")
	require.Equal(t, 2, code, stderr)
	require.Regexp(t, refusalRE, stderr)

	code, stdout, stderr := serveBriefly(t, "--addr", "0.0.0.0:0", "--insecure")
	require.Equal(t, -1, code, stderr) // still serving
	require.Contains(t, stdout, "serving the Step Functions API on http://")

	code, stdout, stderr = serveBriefly(t, "--addr", "0.0.0.0:0", "--credentials", writeCredentials(t))
	require.Equal(t, -1, code, stderr)
	require.Contains(t, stdout, "serving the Step Functions API on http://")

	code, _, stderr = serveBriefly(t, "--addr", "127.0.0.1:0", "--tls-cert", "cert.pem")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "tls-cert and tls-key: give both (the certificate and its private key) or neither")

	missing := filepath.Join(t.TempDir(), "missing")
	code, _, stderr = serveBriefly(t, "--addr", "127.0.0.1:0", "--credentials", missing)
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "credentials: stat "+missing)
}
