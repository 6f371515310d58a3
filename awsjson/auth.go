package awsjson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"stepwise/internal/frontdoor"
	"stepwise/internal/security/sigv4auth"
	"stepwise/sfnapi"
)

// Authenticator decides whether a request may use the API. body is the
// request's whole body. It returns nil, a *sigv4auth.Error (worded here
// as AWS words it) or an *sfnapi.Error.
type Authenticator interface {
	Authenticate(r *http.Request, body []byte) error
}

// RequireAuth returns next, the API's handler, behind auth: a request auth
// refuses is answered as AWS answers an unsigned or badly signed request,
//
//	HTTP/1.1 400 Bad Request
//	{"__type": "com.amazon.coral.service#MissingAuthenticationTokenException", "message": "Request is missing Authentication Token"}
//
// and never reaches next (nor its quotas). The body is read once, here,
// up to MaxBodySize; a larger one goes to next unread, which refuses it
// for its size.
func RequireAuth(next http.Handler, auth Authenticator, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &authHandler{next: next, auth: auth, log: logger, door: newDoor(logger)}
}

type authHandler struct {
	next http.Handler
	auth Authenticator
	log  *slog.Logger
	door *frontdoor.Door
}

func (a *authHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > MaxBodySize {
		a.next.ServeHTTP(w, r) // refused for its size, unread
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodySize+1))
	if err != nil {
		a.reject(w, r, sfnapi.NewError(sfnapi.CodeSerialization, "Could not read the request body: %v", err))
		return
	}
	if len(body) > MaxBodySize {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		a.next.ServeHTTP(w, r)
		return
	}
	if err := a.auth.Authenticate(r, body); err != nil {
		a.reject(w, r, authError(err))
		return
	}
	r = frontdoor.WithBody(r, body)
	a.next.ServeHTTP(w, r.WithContext(withActor(r.Context(), identify(r, a.auth))))
}

// reject answers a request refused before the API saw it.
func (a *authHandler) reject(w http.ResponseWriter, r *http.Request, err error) {
	status := a.door.Fail(w, r, err)
	if a.log.Enabled(r.Context(), slog.LevelDebug) {
		a.log.DebugContext(r.Context(), "awsjson: request refused", logOperation, strings.TrimPrefix(r.Header.Get("X-Amz-Target"), TargetPrefix),
			logRequestID, w.Header().Get(frontdoor.RequestIDHeader), logStatus, status, logError, err)
	}
}

// authError words a refusal of the authenticator as AWS's JSON-protocol
// services (Coral) word it: every one is a 400.
func authError(err error) error {
	var e *sigv4auth.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Reason {
	case sigv4auth.Missing:
		return sfnapi.NewError(sfnapi.CodeMissingAuthToken, "Request is missing Authentication Token")
	case sigv4auth.Incomplete:
		return sfnapi.NewError(sfnapi.CodeIncompleteSignature, "%s", e.Detail)
	case sigv4auth.Expired:
		return sfnapi.NewError(sfnapi.CodeInvalidSignature, "Signature expired: %s is now earlier than %s (%s - %s)",
			amzTime(e.SignedAt), amzTime(e.Now.Add(-e.MaxSkew)), amzTime(e.Now), skewText(e.MaxSkew))
	case sigv4auth.NotYetCurrent:
		return sfnapi.NewError(sfnapi.CodeInvalidSignature, "Signature not yet current: %s is still later than %s (%s + %s)",
			amzTime(e.SignedAt), amzTime(e.Now.Add(e.MaxSkew)), amzTime(e.Now), skewText(e.MaxSkew))
	case sigv4auth.HostNotSigned:
		return sfnapi.NewError(sfnapi.CodeInvalidSignature, "'Host' must be a 'SignedHeader' in the AWS Authorization.")
	case sigv4auth.BadScope:
		return sfnapi.NewError(sfnapi.CodeInvalidSignature, "%s", e.Detail)
	case sigv4auth.UnknownKey:
		return sfnapi.NewError(sfnapi.CodeUnrecognizedClient, "The security token included in the request is invalid.")
	case sigv4auth.Mismatch:
		msg := "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
		if e.CanonicalRequest != "" {
			msg += "\n\nThe Canonical String for this request should have been\n'" + e.CanonicalRequest + "'\n\nThe String-to-Sign should have been\n'" + e.StringToSign + "'\n"
		}
		return sfnapi.NewError(sfnapi.CodeInvalidSignature, "%s", msg)
	}
	return sfnapi.NewError(sfnapi.CodeIncompleteSignature, "%s", e.Error())
}

func amzTime(t time.Time) string { return t.UTC().Format(sigv4auth.TimeFormat) }

// skewText is how AWS writes the allowed skew: "5 min.".
func skewText(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d min.", int(d/time.Minute))
	}
	return d.String()
}
