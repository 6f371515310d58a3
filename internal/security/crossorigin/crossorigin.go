// Package crossorigin keeps web pages of other origins from changing
// anything on the server: one rule, and the guard that applies it to
// every route.
//
// # The rule
//
// A browser says where a request comes from: Origin (on every request but
// a GET or HEAD) and, in current browsers, Sec-Fetch-Site. A request is
// refused when a browser says it comes from a page that is not of the
// server's own origin:
//
//	Sec-Fetch-Site: cross-site or same-site ──► refused
//	Origin set, and its host is not Host    ──► refused (Origin: null too)
//	otherwise                               ──► allowed
//
// Same-site is refused too: a page on another port of the same host, or
// another subdomain, is the same site but not this server. A request that
// says nothing (the AWS CLI and SDKs send neither header) is allowed, and
// so is the console's own page (Origin equal to Host, or Sec-Fetch-Site:
// same-origin).
//
// # The guard
//
// Guard applies the rule to every request whose method may change
// something (any but GET and HEAD) before any route sees it, so a
// request browsers send without a preflight (a form's POST, or a fetch
// with Content-Type text/plain) cannot act on the Step Functions API, the
// Scheduler API or the sign-in form. The refusal is written by the caller,
// in the words of the route's protocol. GET and HEAD requests only read:
// the same-origin policy keeps another site from reading the answer.
package crossorigin

import (
	"net/http"
	"net/url"
	"strings"
)

// Message is the text of a refusal.
const Message = "Cross-origin requests are refused: the server answers AWS clients and the console of its own origin"

// Refused reports whether a browser says the request comes from a page
// that is not of the server's own origin.
func Refused(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return true
	}
	if o := r.Header.Get("Origin"); o != "" {
		return !isHost(o, r.Host)
	}
	return false
}

// SameOrigin reports whether a browser says the request comes from a
// page of the server's own origin: its Origin is the server's host, or
// Sec-Fetch-Site says same-origin. A request that says nothing is not:
// a cookie alone must not act for its owner.
func SameOrigin(r *http.Request) bool {
	if Refused(r) {
		return false
	}
	return r.Header.Get("Origin") != "" || r.Header.Get("Sec-Fetch-Site") == "same-origin"
}

// Guard returns next behind the rule: a request of a method that may
// change something, which Refused says comes from another origin, is
// answered by refuse (with 403 and Message, in the route's words) and
// never reaches next.
func Guard(next http.Handler, refuse http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if Changes(r.Method) && Refused(r) {
			refuse(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Changes reports whether a request of method may change something: any
// method but GET and HEAD.
func Changes(method string) bool {
	return method != http.MethodGet && method != http.MethodHead
}

func isHost(origin, host string) bool {
	u, err := url.Parse(origin)
	// Host names are case-insensitive; browsers send Origin in lower case.
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}
