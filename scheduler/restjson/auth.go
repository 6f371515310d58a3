package restjson

import (
	"errors"
	"net/http"

	"stepwise/internal/frontdoor"
	"stepwise/internal/security/sigv4auth"
	"stepwise/scheduler"
)

// Authenticator decides whether a request may use the API; body is its
// whole body. It returns nil or the reason (a *sigv4auth.Error).
type Authenticator interface {
	Authenticate(r *http.Request, body []byte) error
}

// RequireAuth returns next, the API's handler, behind auth: a refused
// request is answered 403 as AWS's REST-JSON services answer it, and
// never reaches next. The body is read once, here, through the front
// door (a body past MaxBodySize is refused before it is authenticated).
func RequireAuth(next http.Handler, auth Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := refuser.ReadBody(r)
		if err != nil {
			refuser.Fail(w, r, err)
			return
		}
		if err := auth.Authenticate(r, body); err != nil {
			refuser.Fail(w, r, authError(err))
			return
		}
		next.ServeHTTP(w, frontdoor.WithBody(r, body))
	})
}

func authError(err error) error {
	var e *sigv4auth.Error
	if !errors.As(err, &e) {
		return err
	}
	forbidden := func(code, msg string) error {
		return &scheduler.Error{Code: code, Status: http.StatusForbidden, Message: msg}
	}
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
