package sigv4auth_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"stepwise/internal/security/sigv4auth"
)

const (
	keyID  = "AKIDEXAMPLE"
	secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	body   = `{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:m", "input": "{}"}`
)

var signedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type testBundle struct {
	verifier *sigv4auth.Verifier
	now      time.Time
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{now: signedAt.Add(time.Minute)}
	creds := sigv4auth.NewCredentials(map[string]string{keyID: secret, "AKIDOTHER": "other"})
	b.verifier = sigv4auth.NewVerifier("states", creds.Secret)
	b.verifier.Now = func() time.Time { return b.now }
	return b
}

// clientRequest is a request as the AWS SDK for Go sends it, signed at at
// with the key pair.
func clientRequest(t testing.TB, host, payload, id, key, token string, at time.Time) *http.Request {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, "http://"+host+"/", strings.NewReader(payload))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	r.Header.Set("X-Amz-Target", "AWSStepFunctions.StartExecution")
	r.Header.Set("User-Agent", "aws-sdk-go-v2/1.0 test")
	sum := sha256.Sum256([]byte(payload))
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(),
		aws.Credentials{AccessKeyID: id, SecretAccessKey: key, SessionToken: token},
		r, hex.EncodeToString(sum[:]), "states", "us-east-1", at))
	return r
}

// received is r as a server receives it.
func received(t testing.TB, r *http.Request) (*http.Request, []byte) {
	t.Helper()
	var payload []byte
	if r.Body != nil {
		var buf bytes.Buffer
		_, err := buf.ReadFrom(r.Body)
		require.NoError(t, err)
		payload = buf.Bytes()
	}
	in := httptest.NewRequest(r.Method, r.URL.RequestURI(), bytes.NewReader(payload))
	in.Host = r.Host
	if in.Host == "" {
		in.Host = r.URL.Host
	}
	for k, v := range r.Header {
		in.Header[k] = v
	}
	return in, payload
}

func TestVerifyGoSDK(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, host := range []string{"127.0.0.1:8083", "sync-127.0.0.1:8083", "stepwise.example.com"} {
		r, payload := received(t, clientRequest(t, host, body, keyID, secret, "", signedAt))
		require.Contains(t, r.Header.Get("Authorization"), "content-length;content-type;host;x-amz-date;x-amz-target")
		id, err := b.verifier.Verify(r, payload)
		require.NoError(t, err, host)
		require.Equal(t, keyID, id)
	}
}

func TestVerifySessionToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r, payload := received(t, clientRequest(t, "127.0.0.1:8083", body, keyID, secret, "any-token", signedAt))
	require.Contains(t, r.Header.Get("Authorization"), "x-amz-security-token")
	id, err := b.verifier.Verify(r, payload)
	require.NoError(t, err)
	require.Equal(t, keyID, id)
}

func TestVerifyEmptyBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r, payload := received(t, clientRequest(t, "127.0.0.1:8083", "", keyID, secret, "", signedAt))
	_, err := b.verifier.Verify(r, payload)
	require.NoError(t, err)
}

// The requests in testdata/botocore_request.json were signed by botocore
// (boto3's and the AWS CLI's signer), which signs no content-length and
// sends a session token as a signed header.
func TestVerifyBotocore(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/botocore_request.json")
	require.NoError(t, err)
	var fixture struct {
		Secret   string
		Requests []struct {
			Host    string
			Headers map[string]string
			Body    string
		}
	}
	require.NoError(t, json.Unmarshal(raw, &fixture))
	require.Len(t, fixture.Requests, 3)
	for _, fr := range fixture.Requests {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(fr.Body))
		r.Host = fr.Host
		for k, v := range fr.Headers {
			r.Header.Set(k, v)
		}
		at, err := time.Parse(sigv4auth.TimeFormat, fr.Headers["X-Amz-Date"])
		require.NoError(t, err)
		creds := sigv4auth.NewCredentials(map[string]string{"AKIDBOTOCORE": fixture.Secret})
		v := sigv4auth.NewVerifier("states", creds.Secret)
		v.Now = func() time.Time { return at.Add(2 * time.Minute) }
		id, err := v.Verify(r, []byte(fr.Body))
		require.NoError(t, err, fr.Host)
		require.Equal(t, "AKIDBOTOCORE", id)

		_, err = v.Verify(r, []byte(fr.Body+" "))
		requireReason(t, err, sigv4auth.Mismatch)
	}
}

func requireReason(t *testing.T, err error, want sigv4auth.Reason) *sigv4auth.Error {
	t.Helper()
	var e *sigv4auth.Error
	require.True(t, errors.As(err, &e), "error %v", err)
	require.Equal(t, want, e.Reason, "error %v", err)
	return e
}

func TestVerifyRefusals(t *testing.T) {
	t.Parallel()
	signed := func() (*http.Request, []byte) {
		return received(t, clientRequest(t, "127.0.0.1:8083", body, keyID, secret, "", signedAt))
	}
	for _, tc := range []struct {
		name   string
		change func(r *http.Request, payload []byte) []byte
		now    time.Time
		reason sigv4auth.Reason
		detail string
	}{
		{name: "no Authorization", reason: sigv4auth.Missing,
			change: func(r *http.Request, p []byte) []byte { r.Header.Del("Authorization"); return p }},
		{name: "another scheme", reason: sigv4auth.Missing,
			change: func(r *http.Request, p []byte) []byte { r.Header.Set("Authorization", "Bearer x"); return p }},
		{name: "no signature", reason: sigv4auth.Incomplete,
			detail: "Authorization header requires 'Signature' parameter. Authorization=AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260102/us-east-1/states/aws4_request, SignedHeaders=host;x-amz-date",
			change: func(r *http.Request, p []byte) []byte {
				r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260102/us-east-1/states/aws4_request, SignedHeaders=host;x-amz-date")
				return p
			}},
		{name: "no date", reason: sigv4auth.Incomplete,
			change: func(r *http.Request, p []byte) []byte { r.Header.Del("X-Amz-Date"); return p }},
		{name: "bad date", reason: sigv4auth.Incomplete,
			detail: "Date must be in ISO-8601 'basic format'. Got '2026-01-02'. See http://en.wikipedia.org/wiki/ISO_8601",
			change: func(r *http.Request, p []byte) []byte { r.Header.Set("X-Amz-Date", "2026-01-02"); return p }},
		{name: "expired", reason: sigv4auth.Expired, now: signedAt.Add(5*time.Minute + time.Second)},
		{name: "not yet current", reason: sigv4auth.NotYetCurrent, now: signedAt.Add(-5*time.Minute - time.Second)},
		{name: "host not signed", reason: sigv4auth.HostNotSigned,
			change: func(r *http.Request, p []byte) []byte {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "content-type;host;", "content-type;", 1))
				return p
			}},
		{name: "algorithm", reason: sigv4auth.Incomplete,
			detail: "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA512' (only AWS4-HMAC-SHA256 for now).",
			change: func(r *http.Request, p []byte) []byte {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "SHA256", "SHA512", 1))
				return p
			}},
		{name: "credential parts", reason: sigv4auth.Incomplete,
			detail: "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got 'AKIDEXAMPLE/20260102/us-east-1/aws4_request'",
			change: func(r *http.Request, p []byte) []byte {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/states/", "/", 1))
				return p
			}},
		{name: "scope", reason: sigv4auth.BadScope,
			detail: "Credential should be scoped to correct service: 'states'. Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20260101' != '20260102', from '20260102T030405Z'.",
			change: func(r *http.Request, p []byte) []byte {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "20260102/us-east-1/states/", "20260101/us-east-1/lambda/", 1))
				return p
			}},
		{name: "unknown key", reason: sigv4auth.UnknownKey,
			change: func(r *http.Request, p []byte) []byte {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), keyID, "AKIDNOBODY", 1))
				return p
			}},
		{name: "tampered body", reason: sigv4auth.Mismatch,
			change: func(r *http.Request, p []byte) []byte {
				return bytes.Replace(p, []byte(`"input": "{}"`), []byte(`"input": "[]"`), 1)
			}},
		{name: "tampered header", reason: sigv4auth.Mismatch,
			change: func(r *http.Request, p []byte) []byte {
				r.Header.Set("X-Amz-Target", "AWSStepFunctions.StopExecution")
				return p
			}},
		{name: "other host", reason: sigv4auth.Mismatch,
			change: func(r *http.Request, p []byte) []byte { r.Host = "127.0.0.1:9999"; return p }},
		{name: "another key's signature", reason: sigv4auth.Mismatch,
			change: func(r *http.Request, p []byte) []byte {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), keyID, "AKIDOTHER", 1))
				return p
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if !tc.now.IsZero() {
				b.now = tc.now
			}
			r, payload := signed()
			if tc.change != nil {
				payload = tc.change(r, payload)
			}
			_, err := b.verifier.Verify(r, payload)
			e := requireReason(t, err, tc.reason)
			if tc.detail != "" {
				require.Equal(t, tc.detail, strings.TrimSpace(e.Detail))
			}
		})
	}
}

func TestVerifyMismatchTellsWhatWasSigned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r, payload := received(t, clientRequest(t, "127.0.0.1:8083", body, keyID, secret, "", signedAt))
	_, err := b.verifier.Verify(r, append(payload, ' '))
	e := requireReason(t, err, sigv4auth.Mismatch)
	require.Equal(t, keyID, e.AccessKeyID)
	require.True(t, strings.HasPrefix(e.CanonicalRequest, "POST\n/\n\ncontent-length:"), e.CanonicalRequest)
	require.Contains(t, e.CanonicalRequest, "\nhost:127.0.0.1:8083\n")
	require.True(t, strings.HasPrefix(e.StringToSign, "AWS4-HMAC-SHA256\n20260102T030405Z\n20260102/us-east-1/states/aws4_request\n"), e.StringToSign)
}

func TestVerifyClockSkewEdges(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{5 * time.Minute, -5 * time.Minute, 0} {
		b := setup(t)
		b.now = signedAt.Add(d)
		r, payload := received(t, clientRequest(t, "127.0.0.1:8083", body, keyID, secret, "", signedAt))
		_, err := b.verifier.Verify(r, payload)
		require.NoError(t, err, d)
	}
}

func TestVerifyConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	done := make(chan error)
	for range 8 {
		r, payload := received(t, clientRequest(t, "127.0.0.1:8083", body, keyID, secret, "", signedAt))
		go func() {
			_, err := b.verifier.Verify(r, payload)
			done <- err
		}()
	}
	for range 8 {
		require.NoError(t, <-done)
	}
}

// BenchmarkVerify is the cost of verifying one signed request of a known
// key: a StartExecution of a small input, and one of 256 KiB (the largest
// execution input), where hashing the body dominates.
func BenchmarkVerify(b *testing.B) {
	creds := sigv4auth.NewCredentials(map[string]string{keyID: secret})
	v := sigv4auth.NewVerifier("states", creds.Secret)
	v.Now = func() time.Time { return signedAt }
	large := `{"stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:m", "input": "` + strings.Repeat("x", 256*1024) + `"}`
	for _, bc := range []struct{ name, body string }{{"small", body}, {"256KiB", large}} {
		b.Run(bc.name, func(b *testing.B) {
			r, payload := received(b, clientRequest(b, "127.0.0.1:8083", bc.body, keyID, secret, "", signedAt))
			b.ReportAllocs()
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				if _, err := v.Verify(r, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
