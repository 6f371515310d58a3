package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testcert"
	"stepwise/internal/testkit/testwait"
)

// servedSerial dials the server and returns the serial of the certificate
// it serves, after verifying it with the CA.
func servedSerial(t *testing.T, addr string, ca *testcert.CA) *big.Int {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"})
	require.NoError(t, err)
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber
}

// HTTPS with a certificate of a test CA: the Go SDK (trusting the CA)
// runs an execution, HTTP/2 is negotiated, the AWS CLI works with
// --ca-bundle, and SIGHUP swaps the certificate for a new one while a
// broken one is refused and logged.
func TestTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	caFile := ca.WriteCA(t, dir)
	first := ca.Issue(t)
	certFile, keyFile := first.Write(t, dir)
	s := startServer(t, filepath.Join(dir, "tls.db"), "--tls-cert", certFile, "--tls-key", keyFile, "--credentials", writeCredentials(t))
	require.Equal(t, "https", s.scheme)
	require.Equal(t, first.Serial, servedSerial(t, s.addr, ca))

	// The Go SDK, trusting the test CA.
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCustomCABundle(bytes.NewReader(ca.CertPEM)),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(authKeyID, authSecret, "")))
	require.NoError(t, err)
	c := sfn.NewFromConfig(cfg, func(o *sfn.Options) {
		o.BaseEndpoint = aws.String(s.url())
		o.APIOptions = append(o.APIOptions, disableHostPrefix)
	})
	arn := createMachine(t, c, "tls", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": "over TLS", "End": true}}}`)
	x := startExecution(t, c, arn, "one", `{}`)
	d := waitDone(t, c, x)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status)
	require.Equal(t, `"over TLS"`, aws.ToString(d.Output))

	// HTTP/2 and HTTP/1.1 are both served.
	for _, h2 := range []bool{true, false} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
		}
		resp, err := (&http.Client{Transport: tr}).Get(s.url() + "/health")
		require.NoError(t, err)
		resp.Body.Close()
		tr.CloseIdleConnections()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		if h2 {
			require.Equal(t, 2, resp.ProtoMajor)
			require.Equal(t, "h2", resp.TLS.NegotiatedProtocol)
		} else {
			require.Equal(t, 1, resp.ProtoMajor)
		}
	}
	// The console's session cookie is Secure over TLS.
	signIn, err := (&http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}).PostForm(s.url()+"/signin", url.Values{"access_key_id": {authKeyID}, "secret_access_key": {authSecret}})
	require.NoError(t, err)
	signIn.Body.Close()
	require.Equal(t, http.StatusSeeOther, signIn.StatusCode)
	cookie, err := http.ParseSetCookie(signIn.Header.Get("Set-Cookie"))
	require.NoError(t, err)
	require.True(t, cookie.Secure)

	// The AWS CLI with --ca-bundle.
	if _, err := exec.LookPath("aws"); err == nil {
		cmd := exec.Command("aws", "stepfunctions", "--endpoint-url", s.url(), "--ca-bundle", caFile, "--output", "json",
			"describe-execution", "--execution-arn", x)
		cmd.Env = append(cliEnv(), "AWS_ACCESS_KEY_ID="+ciKeyID, "AWS_SECRET_ACCESS_KEY="+ciSecret)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), `"status": "SUCCEEDED"`)
	} else if os.Getenv("CI") == "true" {
		t.Fatal("the AWS CLI (aws) is required on CI")
	} else {
		t.Log("the aws command is not on PATH: the AWS CLI part is skipped")
	}

	// SIGHUP: a new certificate is served to new connections.
	second := ca.Issue(t)
	second.Write(t, dir)
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGHUP))
	testwait.Until(t, func() bool { return servedSerial(t, s.addr, ca).Cmp(second.Serial) == 0 }, 30*time.Second, 20*time.Millisecond)
	testwait.Until(t, func() bool { return strings.Contains(s.stderr.String(), "serve: certificate reloaded") }, 30*time.Second, 10*time.Millisecond)

	// A broken certificate is logged; the one served stays.
	require.NoError(t, os.WriteFile(certFile, []byte("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n"), 0o600))
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGHUP))
	testwait.Until(t, func() bool {
		return strings.Contains(s.stderr.String(), "serve: certificate not reloaded, the previous one stays")
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, second.Serial, servedSerial(t, s.addr, ca))
	_, err = c.ListStateMachines(context.Background(), &sfn.ListStateMachinesInput{})
	require.NoError(t, err)
}
