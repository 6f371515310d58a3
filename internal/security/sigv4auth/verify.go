package sigv4auth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/logging"
)

// DefaultMaxSkew is how far X-Amz-Date may be from the server's clock, as
// on AWS.
const DefaultMaxSkew = 5 * time.Minute

// Verifier verifies SigV4 signatures.
type Verifier struct {
	// Secret returns the secret access key of an access key id.
	Secret func(accessKeyID string) (secret string, ok bool)
	// Service is the service a credential scope must name ("states").
	Service string
	// MaxSkew is how far X-Amz-Date may be from Now (DefaultMaxSkew
	// when 0).
	MaxSkew time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	once   sync.Once
	signer *v4.Signer
}

// NewVerifier returns a verifier of the signatures of service made with
// the keys secret gives.
func NewVerifier(service string, secret func(accessKeyID string) (string, bool)) *Verifier {
	return &Verifier{Secret: secret, Service: service}
}

// Verify checks the signature of r, whose body is body (read whole; r.Body
// is not read), and returns the access key id that signed it, or an
// *Error.
func (v *Verifier) Verify(r *http.Request, body []byte) (accessKeyID string, err error) {
	h := r.Header.Get("Authorization")
	if h == "" || !strings.HasPrefix(strings.TrimSpace(h), "AWS4-") {
		return "", &Error{Reason: Missing}
	}
	a, err := ParseAuthorization(h)
	if err != nil {
		return "", err
	}
	amzDate := r.Header.Get("X-Amz-Date")
	if amzDate == "" {
		return "", &Error{Reason: Incomplete, Detail: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=" + h}
	}
	signedAt, err := time.Parse(TimeFormat, amzDate)
	if err != nil {
		return "", &Error{Reason: Incomplete, Detail: "Date must be in ISO-8601 'basic format'. Got '" + amzDate + "'. See http://en.wikipedia.org/wiki/ISO_8601"}
	}
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	now = now.UTC().Truncate(time.Second)
	skew := cmp.Or(v.MaxSkew, DefaultMaxSkew)
	switch {
	case signedAt.Before(now.Add(-skew)):
		return "", &Error{Reason: Expired, SignedAt: signedAt, Now: now, MaxSkew: skew}
	case signedAt.After(now.Add(skew)):
		return "", &Error{Reason: NotYetCurrent, SignedAt: signedAt, Now: now, MaxSkew: skew}
	}
	if !slices.Contains(a.Headers, "host") {
		return "", &Error{Reason: HostNotSigned}
	}
	if a.Algorithm != Algorithm {
		return "", &Error{Reason: Incomplete, Detail: "Unsupported AWS 'algorithm': '" + a.Algorithm + "' (only " + Algorithm + " for now). "}
	}
	scope, err := ParseCredential(a.Credential)
	if err != nil {
		return "", err
	}
	if detail := v.checkScope(scope, amzDate); detail != "" {
		return "", &Error{Reason: BadScope, Detail: detail}
	}
	secret, ok := v.Secret(scope.AccessKeyID)
	if !ok {
		return "", &Error{Reason: UnknownKey, AccessKeyID: scope.AccessKeyID}
	}

	req := rebuild(r, a.Headers, len(body))
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	creds := aws.Credentials{AccessKeyID: scope.AccessKeyID, SecretAccessKey: secret}
	if err := v.sign(req, creds, payloadHash, scope, signedAt, nil); err != nil {
		return "", err
	}
	got, _ := ParseAuthorization(req.Header.Get("Authorization"))
	if got == nil || got.SignedHeaders != a.SignedHeaders ||
		subtle.ConstantTimeCompare([]byte(got.Signature), []byte(strings.ToLower(a.Signature))) != 1 {
		e := &Error{Reason: Mismatch, AccessKeyID: scope.AccessKeyID}
		// Sign again, to tell the client what was signed.
		var log signingLog
		_ = v.sign(rebuild(r, a.Headers, len(body)), creds, payloadHash, scope, signedAt, &log)
		e.CanonicalRequest, e.StringToSign = log.canonical, log.stringToSign
		return "", e
	}
	return scope.AccessKeyID, nil
}

// checkScope words what is wrong with a credential scope, "" when
// nothing.
func (v *Verifier) checkScope(s Scope, amzDate string) string {
	var b strings.Builder
	if s.Region == "" {
		b.WriteString("Credential should be scoped to a valid region, not ''. ")
	}
	if s.Service != v.Service {
		b.WriteString("Credential should be scoped to correct service: '" + v.Service + "'. ")
	}
	if s.Terminator != Terminator {
		b.WriteString("Credential should be scoped with a valid terminator: '" + Terminator + "', not '" + s.Terminator + "'. ")
	}
	if s.Date != amzDate[:8] {
		b.WriteString("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '" + s.Date + "' != '" + amzDate[:8] + "', from '" + amzDate + "'.")
	}
	return strings.TrimSpace(b.String())
}

// rebuild makes the request the client signed: r's method, host, path and
// query, and of its headers exactly those named (host and content-length
// are the signer's own: content-length is signed when named, from the
// length of the body received).
func rebuild(r *http.Request, signed []string, bodyLen int) *http.Request {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	req := &http.Request{
		Method: r.Method,
		URL:    &url.URL{Scheme: scheme, Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery},
		Host:   r.Host,
		Header: make(http.Header, len(signed)+2),
	}
	for _, name := range signed {
		switch name {
		case "host":
			continue
		case "content-length":
			req.ContentLength = int64(bodyLen)
			continue
		}
		key := http.CanonicalHeaderKey(name)
		if vals := r.Header.Values(key); len(vals) > 0 {
			req.Header[key] = vals
		} else {
			req.Header[key] = []string{""}
		}
	}
	return req
}

// sign signs req with the SDK's signer, logging the canonical request and
// string to sign into log when it is set.
func (v *Verifier) sign(req *http.Request, creds aws.Credentials, payloadHash string, s Scope, at time.Time, log *signingLog) error {
	v.once.Do(func() {
		// The session token, when signed, is among the headers already.
		v.signer = v4.NewSigner(func(o *v4.SignerOptions) { o.DisableSessionToken = true })
	})
	return v.signer.SignHTTP(context.Background(), creds, req, payloadHash, s.Service, s.Region, at, func(o *v4.SignerOptions) {
		if log != nil {
			o.Logger, o.LogSigning = log, true
		}
	})
}

// signingLog receives the signer's log of what it signed.
type signingLog struct{ canonical, stringToSign string }

var _ logging.Logger = (*signingLog)(nil)

func (l *signingLog) Logf(_ logging.Classification, _ string, v ...any) {
	if len(v) >= 2 {
		l.canonical, _ = v[0].(string)
		l.stringToSign, _ = v[1].(string)
	}
}
