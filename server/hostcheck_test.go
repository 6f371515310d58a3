package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
	"stepwise/internal/security/crossorigin"
	"stepwise/internal/security/hostcheck"
)

// The Host of a page whose name re-resolves to the server (DNS
// rebinding): its requests say they are of its own origin.
const rebindHost = "rebind.attacker.test:18771"

// rebound makes r a request of the rebinding page, from a browser on the
// server's machine.
func rebound(r *http.Request) *http.Request {
	r.Host = rebindHost
	r.Header.Set("Origin", "http://"+rebindHost)
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.RemoteAddr = "127.0.0.1:50000"
	return r
}

// hostBundle is a server without credentials, given an --addr host and an
// --allowed-host, taking deploys.
type hostBundle struct {
	api *Server
}

func setupHostCheck(t *testing.T) *hostBundle {
	t.Helper()
	p := newAPIParts(t)
	p.cfg.Addr = "stepwise-addr.test:8083"
	p.cfg.Insecure = true // a name that is not a loopback one; the tests do not listen
	p.cfg.AllowedHosts = []string{"stepwise.internal", ".corp.example"}
	api := p.api(t, true, nil)
	return &hostBundle{api: api}
}

// serve sends a request to the server's handler, from host.
func (b *hostBundle) serve(method, path, body string, host string, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
	r.RemoteAddr = "127.0.0.1:50000"
	for k, v := range header {
		r.Header[k] = v
	}
	if host == rebindHost {
		rebound(r)
	}
	r.Host = host
	rec := httptest.NewRecorder()
	b.api.Handler().ServeHTTP(rec, r)
	return rec
}

func (b *hostBundle) call(op, body, host string) *httptest.ResponseRecorder {
	return b.serve(http.MethodPost, "/", body, host, http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amz-Target": {awsjson.TargetPrefix + op}})
}

// deployBody deploys a stack of one state machine, name.
func deployBody(t *testing.T, name string) string {
	t.Helper()
	tmpl := fmt.Sprintf("Resources:\n  M:\n    Type: AWS::StepFunctions::StateMachine\n    Properties:\n      StateMachineName: %s\n"+
		"      RoleArn: arn:aws:iam::123456789012:role/r\n      DefinitionString: '{\"StartAt\": \"P\", \"States\": {\"P\": {\"Type\": \"Pass\", \"End\": true}}}'\n", name)
	body, err := json.Marshal(DeployRequest{StackName: name, Template: tmpl, BaseDir: t.TempDir()})
	require.NoError(t, err)
	return string(body)
}

// TestHostCheckRebinding: a page whose name re-resolves to 127.0.0.1
// sends same-origin requests from the server's own machine; the server
// without credentials refuses them, for its Host, on the deploy route,
// the Step Functions API, the console and the Scheduler API, each in its
// own words naming --allowed-host; the probes answer. The server's
// names (localhost, its addresses, its --addr host, its --allowed-host
// names) are answered.
func TestHostCheckRebinding(t *testing.T) {
	t.Parallel()
	b := setupHostCheck(t)
	message := hostcheck.Message(rebindHost)
	require.Contains(t, message, "--allowed-host rebind.attacker.test")
	machine := func(name string) string { return "arn:aws:states:us-east-1:123456789012:stateMachine:" + name }
	exists := func(name string) bool {
		return b.call("DescribeStateMachine", fmt.Sprintf(`{"stateMachineArn": %q}`, machine(name)), "127.0.0.1:8083").Code == http.StatusOK
	}

	// A deploy (which runs code from the machine's folders).
	rec := b.serve(http.MethodPost, DeployPath, deployBody(t, "rebound"), rebindHost, nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	require.JSONEq(t, fmt.Sprintf(`{"error": %q}`, message), rec.Body.String())
	require.False(t, exists("rebound"))

	// StartExecution, in the API's words.
	rec = b.call("CreateStateMachine", fmt.Sprintf(`{"name": "target", "roleArn": "arn:aws:iam::123456789012:role/r", "definition": %q}`,
		`{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`), "127.0.0.1:8083")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	start := fmt.Sprintf(`{"stateMachineArn": %q, "name": "rebound"}`, machine("target"))
	rec = b.call("StartExecution", start, rebindHost)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.NotEmpty(t, rec.Header().Get("x-amzn-RequestId"))
	require.JSONEq(t, fmt.Sprintf(`{"__type": "com.amazon.coral.service#AccessDeniedException", "message": %q}`, message), rec.Body.String())
	execution := `{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:target:rebound"}`
	require.Equal(t, http.StatusBadRequest, b.call("DescribeExecution", execution, "127.0.0.1:8083").Code, "no execution started")

	// The console's pages, which show every execution's input.
	for _, path := range []string{"/", "/state-machines/" + machine("target"), "/activities", "/static/style.css",
		"/console/executions/status?arn=x", "/schedule-list"} {
		rec = b.serve(http.MethodGet, path, "", rebindHost, nil)
		require.Equal(t, http.StatusForbidden, rec.Code, path)
		require.Equal(t, "text/plain; charset=utf-8", rec.Header().Get("Content-Type"), path)
		require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), path)
		require.Equal(t, message+"\n", rec.Body.String(), path)
	}

	// The Scheduler API, in its words.
	rec = b.serve(http.MethodGet, "/schedules", "", rebindHost, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "AccessDeniedException", rec.Header().Get("X-Amzn-ErrorType"))
	require.JSONEq(t, fmt.Sprintf(`{"Message": %q}`, message), rec.Body.String())

	// The probes answer any Host: monitors name the server as they
	// please, and they change and show nothing of the executions.
	for _, path := range []string{"/healthz", "/readyz", "/health"} {
		require.Equal(t, http.StatusOK, b.serve(http.MethodGet, path, "", rebindHost, nil).Code, path)
		require.Equal(t, http.StatusOK, b.serve(http.MethodHead, path, "", rebindHost, nil).Code, path)
	}
	// /metrics names the state machines and functions: not to a
	// rebinding page, but to a scraper that names the server by address.
	require.Equal(t, http.StatusForbidden, b.serve(http.MethodGet, "/metrics", "", rebindHost, nil).Code)
	require.Equal(t, http.StatusOK, b.serve(http.MethodGet, "/metrics", "", "10.1.2.3:8083", nil).Code)

	// Every route of the server's and the Scheduler API's tables refuses
	// the rebinding Host, whatever its method.
	for _, rt := range b.api.routes {
		method, path, ok := strings.Cut(rt.pattern, " ")
		if !ok {
			method, path = http.MethodPost, rt.pattern
		}
		rec := b.serve(method, path, `{}`, rebindHost, http.Header{"X-Amz-Target": {awsjson.TargetPrefix + "ListStateMachines"}})
		if probePaths[path] {
			require.NotEqual(t, http.StatusForbidden, rec.Code, rt.pattern)
			continue
		}
		require.Equal(t, http.StatusForbidden, rec.Code, rt.pattern)
		require.Contains(t, rec.Body.String(), "--allowed-host rebind.attacker.test", rt.pattern)
	}
	for _, pattern := range b.api.scheduleAPI.Patterns() {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			method, path = http.MethodPatch, "/schedules/x"
		}
		path = strings.NewReplacer("{name}", "x", "{arn...}", "x").Replace(path)
		rec := b.serve(method, path, `{}`, rebindHost, nil)
		require.Equal(t, http.StatusForbidden, rec.Code, pattern)
		require.Contains(t, rec.Body.String(), "--allowed-host rebind.attacker.test", pattern)
	}

	// The server's own names: a deploy, a start and a page each.
	for i, host := range []string{"localhost:18771", "127.0.0.1:18771", "[::1]:18771", "LOCALHOST", "stepwise.localhost:8083",
		"10.0.0.7:8083", "stepwise-addr.test:8083", "stepwise.internal:443", "ci.corp.example", ""} {
		name := fmt.Sprintf("own%d", i)
		page := http.Header{"Sec-Fetch-Site": {"same-origin"}}
		if host != "" {
			page.Set("Origin", "http://"+host)
		}
		rec := b.serve(http.MethodPost, DeployPath, deployBody(t, name), host, page)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", host, rec.Body.String())
		require.True(t, exists(name), host)
		rec = b.call("StartExecution", fmt.Sprintf(`{"stateMachineArn": %q, "name": %q}`, machine(name), name), host)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", host, rec.Body.String())
		require.Equal(t, http.StatusOK, b.serve(http.MethodGet, "/", "", host, nil).Code, host)
	}
}

// TestHostCheckSDK: the AWS SDK for Go, over TCP, at 127.0.0.1 and at
// localhost, is answered; the same connection with a rebinding Host is
// not.
func TestHostCheckSDK(t *testing.T) {
	t.Parallel()
	b := setupHostCheck(t)
	srv := httptest.NewServer(b.api.Handler())
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	require.NoError(t, err)
	cfg, err := awsconfig.LoadDefaultConfig(context.Background(), awsconfig.WithRegion("us-east-1"),
		awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")))
	require.NoError(t, err)
	ctx := context.Background()
	for i, endpoint := range []string{srv.URL, "http://localhost:" + port} {
		c := sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(endpoint) })
		out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(fmt.Sprintf("sdk%d", i)),
			RoleArn: aws.String("arn:aws:iam::123456789012:role/r"), Definition: aws.String(`{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)})
		require.NoError(t, err, endpoint)
		run, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: out.StateMachineArn, Input: aws.String(`{}`)})
		require.NoError(t, err, endpoint)
		require.Eventually(t, func() bool {
			x, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: run.ExecutionArn})
			return err == nil && x.Status == "SUCCEEDED"
		}, 10*time.Second, 10*time.Millisecond, endpoint)
	}
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
	require.NoError(t, err)
	req.Host = rebindHost
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// TestHostCheckWithCredentials: with --credentials, requests are signed
// or carry a session, which a rebinding page cannot have: Host is not
// checked, and an unsigned request is refused by authentication.
func TestHostCheckWithCredentials(t *testing.T) {
	t.Parallel()
	p := newAPIParts(t)
	p.cfg.AllowedHosts = nil
	auth := &apiAuth{keys: map[string]string{"AKIDHOST": "secret"}}
	api := p.api(t, false, auth)
	serve := func(r *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		api.Handler().ServeHTTP(rec, r)
		return rec
	}
	call := func(sign bool) *httptest.ResponseRecorder {
		body := `{}`
		r := httptest.NewRequest(http.MethodPost, "http://stepwise.example.com:8083/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-amz-json-1.0")
		r.Header.Set("X-Amz-Target", awsjson.TargetPrefix+"ListStateMachines")
		if sign {
			sum := sha256.Sum256([]byte(body))
			require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AKIDHOST", SecretAccessKey: "secret"},
				r, hex.EncodeToString(sum[:]), "states", "us-east-1", time.Now()))
		}
		return serve(r)
	}
	rec := call(true)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = call(false)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "MissingAuthenticationTokenException")
	rec = serve(rebound(httptest.NewRequest(http.MethodGet, "/activities", nil)))
	require.Equal(t, http.StatusSeeOther, rec.Code, "a page without a session sends to the sign-in page")
	require.Equal(t, "/signin?next="+url.QueryEscape("/activities"), rec.Header().Get("Location"))
}

// In a container (--container), a server without credentials listens on
// every address, answers the names without a dot (compose or CI service
// names) besides its own, and still refuses other names and cross-origin
// requests.
func TestHostCheckContainer(t *testing.T) {
	t.Parallel()
	p := newAPIParts(t)
	p.cfg.Addr = "0.0.0.0:0"
	p.cfg.AllowedHosts = nil
	p.cfg.Container = true
	b := &hostBundle{api: p.api(t, false, nil)}
	require.NoError(t, b.api.Listen())

	rec := b.call("ListStateMachines", "{}", "stepwise:8083")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	rec = b.call("ListStateMachines", "{}", "evil.example.com")
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "is not a name of this server")

	// A page of another site, sent to the container's name.
	rec = b.serve(http.MethodPost, "/", "{}", "stepwise:8083", http.Header{
		"Content-Type": {"text/plain"}, "X-Amz-Target": {awsjson.TargetPrefix + "ListStateMachines"},
		"Origin": {"http://evil.example.com"}, "Sec-Fetch-Site": {"cross-site"},
	})
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), crossorigin.Message)

	// Outside a container, neither the address nor the name is taken.
	p = newAPIParts(t)
	p.cfg.Addr = "0.0.0.0:0"
	p.cfg.AllowedHosts = nil
	_, err := p.new(t, false, nil)
	require.ErrorContains(t, err, "refusing to serve on an address other than a loopback one without authentication")
	p.cfg.Insecure = true
	outside := &hostBundle{api: p.api(t, false, nil)}
	rec = outside.call("ListStateMachines", "{}", "stepwise:8083")
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
}
