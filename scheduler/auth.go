package scheduler

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"stepwise/internal/security/sigv4auth"
)

// Authenticator decides whether a request may use the API; body is its
// whole body. It returns nil or the reason (a *sigv4auth.Error).
type Authenticator interface {
	Authenticate(r *http.Request, body []byte) error
}

// RequireAuth returns next behind auth: a refused request is answered
// 403 as AWS's REST-JSON services answer it, and never reaches next.
func RequireAuth(next http.Handler, auth Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodySize+1))
		if err != nil {
			writeError(w, validationError("Could not read the request body: %v", err))
			return
		}
		if err := auth.Authenticate(r, body); err != nil {
			writeError(w, authError(err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func authError(err error) error {
	var e *sigv4auth.Error
	if !errors.As(err, &e) {
		return err
	}
	forbidden := func(code, msg string) error { return &Error{Code: code, Status: http.StatusForbidden, Message: msg} }
	switch e.Reason {
	case sigv4auth.Missing:
		return forbidden("MissingAuthenticationTokenException", "Missing Authentication Token")
	case sigv4auth.UnknownKey:
		return forbidden("UnrecognizedClientException", "The security token included in the request is invalid.")
	case sigv4auth.Mismatch:
		return forbidden("InvalidSignatureException", "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
	case sigv4auth.Incomplete:
		return forbidden("IncompleteSignatureException", e.Detail)
	}
	return forbidden("InvalidSignatureException", e.Error())
}
