package awsjson_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
	"stepwise/internal/security/quota"
	"stepwise/internal/security/sigv4auth"
	"stepwise/sfnapi"
)

// authFunc is an Authenticator of a function.
type authFunc func(r *http.Request, body []byte) error

func (f authFunc) Authenticate(r *http.Request, body []byte) error { return f(r, body) }

// Every refusal of the authenticator is answered in AWS's words, a 400
// with a request id, and the operation does not run.
func TestRequireAuthRefusals(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := at.Add(10 * time.Minute)
	for _, tc := range []struct {
		err        error
		typ, msg   string
		wantStatus int
	}{
		{&sigv4auth.Error{Reason: sigv4auth.Missing}, "com.amazon.coral.service#MissingAuthenticationTokenException", "Request is missing Authentication Token", 400},
		{&sigv4auth.Error{Reason: sigv4auth.Incomplete, Detail: "Authorization header requires 'Signature' parameter. Authorization=AWS4-HMAC-SHA256 Credential=a"},
			"com.amazon.coral.service#IncompleteSignatureException", "Authorization header requires 'Signature' parameter. Authorization=AWS4-HMAC-SHA256 Credential=a", 400},
		{&sigv4auth.Error{Reason: sigv4auth.Expired, SignedAt: at, Now: now, MaxSkew: 5 * time.Minute},
			"com.amazon.coral.service#InvalidSignatureException", "Signature expired: 20260102T030405Z is now earlier than 20260102T030905Z (20260102T031405Z - 5 min.)", 400},
		{&sigv4auth.Error{Reason: sigv4auth.NotYetCurrent, SignedAt: now, Now: at, MaxSkew: 5 * time.Minute},
			"com.amazon.coral.service#InvalidSignatureException", "Signature not yet current: 20260102T031405Z is still later than 20260102T030905Z (20260102T030405Z + 5 min.)", 400},
		{&sigv4auth.Error{Reason: sigv4auth.HostNotSigned}, "com.amazon.coral.service#InvalidSignatureException", "'Host' must be a 'SignedHeader' in the AWS Authorization.", 400},
		{&sigv4auth.Error{Reason: sigv4auth.BadScope, Detail: "Credential should be scoped to correct service: 'states'."},
			"com.amazon.coral.service#InvalidSignatureException", "Credential should be scoped to correct service: 'states'.", 400},
		{&sigv4auth.Error{Reason: sigv4auth.UnknownKey, AccessKeyID: "AKID"}, "com.amazon.coral.service#UnrecognizedClientException", "The security token included in the request is invalid.", 400},
		{&sigv4auth.Error{Reason: sigv4auth.Mismatch, CanonicalRequest: "POST\n/\n\nhost:x\n\nhost\nabc", StringToSign: "AWS4-HMAC-SHA256\n..."},
			"com.amazon.coral.service#InvalidSignatureException", "The request signature we calculated does not match the signature you provided. " +
				"Check your AWS Secret Access Key and signing method. Consult the service documentation for details.\n\n" +
				"The Canonical String for this request should have been\n'POST\n/\n\nhost:x\n\nhost\nabc'\n\n" +
				"The String-to-Sign should have been\n'AWS4-HMAC-SHA256\n...'\n", 400},
		{sfnapi.NewError(sfnapi.CodeAccessDenied, "no"), "com.amazon.coral.service#AccessDeniedException", "no", 403},
	} {
		b := setup(t)
		ran := false
		b.handler = awsjson.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true }),
			authFunc(func(*http.Request, []byte) error { return tc.err }), nil)
		res := b.call(t, "ListStateMachines", map[string]any{})
		require.Equal(t, tc.wantStatus, res.status, tc.msg)
		typ, msg := res.errorType(t)
		require.Equal(t, tc.typ, typ)
		require.Equal(t, tc.msg, msg)
		require.NotEmpty(t, res.header.Get("x-amzn-RequestId"))
		require.Equal(t, "application/x-amz-json-1.0", res.header.Get("Content-Type"))
		require.False(t, ran)
	}
}

// The authenticator sees the whole body, and the operation gets the same
// body without reading it again.
func TestRequireAuthPassesTheBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var mu sync.Mutex
	var seen []string
	b.handler = awsjson.RequireAuth(awsjson.New(b.svc, nil), authFunc(func(r *http.Request, body []byte) error {
		mu.Lock()
		seen = append(seen, string(body))
		mu.Unlock()
		return nil
	}), nil)
	created := b.mustCall(t, "CreateStateMachine", map[string]any{"name": "sm", "definition": passDefinition, "roleArn": roleArn})
	require.NotEmpty(t, created["stateMachineArn"])
	require.Len(t, seen, 1)
	require.Contains(t, seen[0], `"name":"sm"`)
}

// A body over the limit is refused for its size without being
// authenticated (it is not read whole), as without authentication.
func TestRequireAuthLargeBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	called := false
	b.handler = awsjson.RequireAuth(awsjson.New(b.svc, nil), authFunc(func(*http.Request, []byte) error { called = true; return nil }), nil)
	large := []byte(`{"name": "` + strings.Repeat("x", awsjson.MaxBodySize) + `"}`)
	res := b.do(t, newRequest(awsjson.TargetPrefix+"ListStateMachines", large))
	require.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	req := newRequest(awsjson.TargetPrefix+"ListStateMachines", large)
	req.ContentLength = -1 // chunked: read up to the limit, then refused
	req.Body = io.NopCloser(bytes.NewReader(large))
	res = b.do(t, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.status)
	require.False(t, called)
}

// A refused request takes nothing from its operation's quota.
func TestRequireAuthBeforeQuota(t *testing.T) {
	t.Parallel()
	b := setupQuotas(t, map[string]quota.Limit{"ListStateMachines": {Bucket: 1, Refill: 0.001}})
	refuse := true
	b.handler = awsjson.RequireAuth(awsjson.NewWith(b.svc, awsjson.Options{Quotas: b.quotas}), authFunc(func(*http.Request, []byte) error {
		if refuse {
			return &sigv4auth.Error{Reason: sigv4auth.Missing}
		}
		return nil
	}), nil)
	for range 3 {
		res := b.call(t, "ListStateMachines", map[string]any{})
		require.Equal(t, http.StatusBadRequest, res.status)
	}
	refuse = false
	b.mustCall(t, "ListStateMachines", map[string]any{})
	require.Equal(t, float64(1), b.consumed["ListStateMachines"])
}
