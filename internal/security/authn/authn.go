// Package authn guards the server when it has credentials (serve
// --credentials FILE): who may call the API and open the console.
//
// # The API
//
// A request to the API must be signed with SigV4 by one of the access
// keys of the credentials (sigv4auth verifies it), or come from the
// console's own page with the console's session cookie:
//
//	POST / ──► Authorization? ──yes──► SigV4 verified? ──► the API
//	               │
//	               no ──► session cookie, and Origin (or Sec-Fetch-Site)
//	                      says the console's own origin? ──► the API
//	                          │
//	                          no ──► MissingAuthenticationTokenException
//
// # The console
//
// The console's pages and their JSON take the session cookie (or a SigV4
// signature) from any request a browser does not mark as coming from
// another site; a browser without one is sent to GET /signin, a form of
// an access key id and its secret access key. POST /signin checks the
// pair against the credentials and sets the cookie: HttpOnly,
// SameSite=Strict, Secure over TLS, valid for SessionTTL. Its value is
// the access key id and the expiry, signed with HMAC-SHA256 under the
// server's session key, over a digest of the key's secret too: a key
// removed from the credentials, or given another secret, ends its
// sessions at the next reload. POST /signout clears it. The server's
// cross-origin guard (crossorigin.Guard) refuses a sign-in or sign-out
// from another origin before it gets here.
//
// Sessions are not stored: a cookie is valid until it expires, even
// after a sign-out elsewhere (the cookie's copy in that browser is
// cleared, a copy taken before is not).
package authn

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"stepwise/internal/security/crossorigin"
	"stepwise/internal/security/sigv4auth"
)

// Service is the SigV4 service name of Step Functions.
const Service = "states"

// CookieName is the session cookie's name.
const CookieName = "stepwise-session"

// DefaultSessionTTL is how long a console session lasts.
const DefaultSessionTTL = 12 * time.Hour

// Paths of the sign-in page and of signing out.
const (
	SignInPath  = "/signin"
	SignOutPath = "/signout"
)

// Log keys.
const (
	logAccessKey  = "access_key_id"
	logRemoteAddr = "remote_addr"
	logError      = "error"
)

// Config configures a Gate.
type Config struct {
	// Credentials are the accepted access keys (required).
	Credentials *sigv4auth.Credentials
	// SessionKey signs session cookies: at least 32 random bytes, kept
	// with the data so that sessions outlive a restart and are shared by
	// nodes.
	SessionKey []byte
	// SessionTTL is how long a session lasts (DefaultSessionTTL when 0).
	SessionTTL time.Duration
	// SignInPage renders the sign-in page with status; failed says that
	// a sign-in was just refused. The form posts access_key_id,
	// secret_access_key and next (the page to go to) to SignInPath.
	SignInPage func(w http.ResponseWriter, r *http.Request, status int, failed bool)
	// Logger logs refused sign-ins; nil discards.
	Logger *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Gate checks requests against the credentials.
type Gate struct {
	cfg      Config
	creds    atomic.Pointer[sigv4auth.Credentials]
	verifier *sigv4auth.Verifier
}

// New returns a gate.
func New(cfg Config) (*Gate, error) {
	if cfg.Credentials.Len() == 0 {
		return nil, errors.New("authn: no credentials")
	}
	if len(cfg.SessionKey) < 32 {
		return nil, errors.New("authn: the session key must be at least 32 bytes")
	}
	if cfg.SignInPage == nil {
		return nil, errors.New("authn: no sign-in page")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	g := &Gate{cfg: cfg}
	g.creds.Store(cfg.Credentials)
	g.verifier = sigv4auth.NewVerifier(Service, func(id string) (string, bool) { return g.creds.Load().Secret(id) })
	g.verifier.Now = cfg.Now
	return g, nil
}

// SetCredentials replaces the accepted access keys (a reload).
func (g *Gate) SetCredentials(c *sigv4auth.Credentials) { g.creds.Store(c) }

// Authenticate decides whether a request may use the API (it is an
// awsjson.Authenticator): a SigV4 signature, or the session cookie on a
// request of the console's own origin.
func (g *Gate) Authenticate(r *http.Request, body []byte) error {
	if r.Header.Get("Authorization") == "" {
		if c, err := r.Cookie(CookieName); err == nil && crossorigin.SameOrigin(r) {
			if _, ok := g.session(c.Value); ok {
				return nil
			}
		}
		return &sigv4auth.Error{Reason: sigv4auth.Missing}
	}
	_, err := g.verifier.Verify(r, body)
	return err
}

// Identify names who made a request Authenticate let through with the
// session cookie: "console:<access key id>" (a signed request is named
// by its signature's access key id, by the API).
func (g *Gate) Identify(r *http.Request) string {
	if c, err := r.Cookie(CookieName); err == nil {
		if id, ok := g.session(c.Value); ok {
			return "console:" + id
		}
	}
	return ""
}

// Console guards the console's pages: next serves a request with a
// session (or a SigV4 signature); a page request without one is sent to
// the sign-in page, a request of the pages' JSON (/console/...) is
// answered 401.
func (g *Gate) Console(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.signedIn(r) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if r.Header.Get("Authorization") != "" {
			if _, err := g.verifier.Verify(r, nil); err != nil {
				http.Error(w, err.Error(), http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/console/") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]string{"message": "Sign in to the console first (" + SignInPath + ")"})
			return
		}
		http.Redirect(w, r, SignInPath+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	})
}

// SignInPage serves GET /signin: the form, or the next page for a
// browser already signed in.
func (g *Gate) SignInPage() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.signedIn(r) {
			http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
			return
		}
		g.cfg.SignInPage(w, r, http.StatusOK, false)
	})
}

// SignIn serves POST /signin: an access key id and its secret access key
// give a session.
func (g *Gate) SignIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 16*1024)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "sign-in refused: "+err.Error(), http.StatusBadRequest)
			return
		}
		id := strings.TrimSpace(r.PostFormValue("access_key_id"))
		given := r.PostFormValue("secret_access_key")
		secret, ok := g.creds.Load().Secret(id)
		// Compare digests, so that the time taken says nothing of the
		// secret's length; an unknown key is compared too.
		a, b := sha256.Sum256([]byte(secret)), sha256.Sum256([]byte(given))
		if subtle.ConstantTimeCompare(a[:], b[:]) != 1 || !ok {
			g.cfg.Logger.WarnContext(r.Context(), "authn: console sign-in refused", logAccessKey, id, logRemoteAddr, r.RemoteAddr)
			g.cfg.SignInPage(w, r, http.StatusUnauthorized, true)
			return
		}
		http.SetCookie(w, g.cookie(r, id, secret))
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
	})
}

// SignOut serves POST /signout: the session cookie is cleared.
func (g *Gate) SignOut() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
			HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, SignInPath, http.StatusSeeOther)
	})
}

// signedIn reports whether a page request carries a valid session.
func (g *Gate) signedIn(r *http.Request) bool {
	c, err := r.Cookie(CookieName)
	if err != nil || crossorigin.Refused(r) {
		return false
	}
	_, ok := g.session(c.Value)
	return ok
}

// cookie is a new session's cookie.
func (g *Gate) cookie(r *http.Request, id, secret string) *http.Cookie {
	expires := g.cfg.Now().Add(g.cfg.SessionTTL).Unix()
	exp := strconv.FormatInt(expires, 10)
	value := "v1." + base64.RawURLEncoding.EncodeToString([]byte(id)) + "." + exp + "." +
		base64.RawURLEncoding.EncodeToString(g.mac(id, exp, secret))
	return &http.Cookie{Name: CookieName, Value: value, Path: "/", MaxAge: int(g.cfg.SessionTTL / time.Second),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode}
}

// session checks a session cookie's value: the access key id it is of.
func (g *Gate) session(value string) (string, bool) {
	parts := strings.Split(value, ".")
	if len(parts) != 4 || parts[0] != "v1" {
		return "", false
	}
	rawID, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	expires, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || g.cfg.Now().Unix() >= expires {
		return "", false
	}
	sum, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil {
		return "", false
	}
	id := string(rawID)
	secret, ok := g.creds.Load().Secret(id)
	if !ok || !hmac.Equal(sum, g.mac(id, parts[2], secret)) {
		return "", false
	}
	return id, true
}

// mac signs a session: its key, its expiry and a digest of the key's
// secret.
func (g *Gate) mac(id, expires, secret string) []byte {
	digest := sha256.Sum256([]byte(secret))
	m := hmac.New(sha256.New, g.cfg.SessionKey)
	m.Write([]byte("stepwise-session/v1\n" + id + "\n" + expires + "\n" + hex.EncodeToString(digest[:])))
	return m.Sum(nil)
}

// safeNext is the page to go to after signing in: a path of this server,
// "/" otherwise.
func safeNext(next string) string {
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.ContainsAny(next, "\r\n") || strings.HasPrefix(next, SignInPath) {
		return "/"
	}
	return next
}

// ServiceGate authenticates the requests of another API served on the
// same port (the Scheduler API's, signed for "scheduler") with the
// gate's keys and sessions.
type ServiceGate struct {
	g        *Gate
	verifier *sigv4auth.Verifier
}

// ForService returns the gate of the requests signed for service.
func (g *Gate) ForService(service string) *ServiceGate {
	v := sigv4auth.NewVerifier(service, func(id string) (string, bool) { return g.creds.Load().Secret(id) })
	v.Now = g.cfg.Now
	return &ServiceGate{g: g, verifier: v}
}

// Authenticate is Gate.Authenticate with the service's signing name.
func (s *ServiceGate) Authenticate(r *http.Request, body []byte) error {
	if r.Header.Get("Authorization") == "" {
		if c, err := r.Cookie(CookieName); err == nil && crossorigin.SameOrigin(r) {
			if _, ok := s.g.session(c.Value); ok {
				return nil
			}
		}
		return &sigv4auth.Error{Reason: sigv4auth.Missing}
	}
	_, err := s.verifier.Verify(r, body)
	return err
}
