package authn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"stepwise/internal/security/sigv4auth"
)

const (
	keyID  = "AKIDGATE"
	secret = "gate/secret"
	host   = "127.0.0.1:8083"
)

type testBundle struct {
	gate *Gate
	mu   sync.Mutex
	now  time.Time
	// pages counts the sign-in pages rendered, by status.
	pages map[int]int
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), pages: map[int]int{}}
	g, err := New(Config{
		Credentials: sigv4auth.NewCredentials(map[string]string{keyID: secret, "AKIDOTHER": "other"}),
		SessionKey:  []byte(strings.Repeat("k", 32)),
		SignInPage: func(w http.ResponseWriter, r *http.Request, status int, failed bool) {
			b.mu.Lock()
			b.pages[status]++
			b.mu.Unlock()
			w.WriteHeader(status)
			_, _ = w.Write([]byte("sign-in page, next=" + r.FormValue("next")))
		},
		Now: func() time.Time { b.mu.Lock(); defer b.mu.Unlock(); return b.now },
	})
	require.NoError(t, err)
	b.gate = g
	return b
}

func (b *testBundle) advance(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now = b.now.Add(d)
}

// signIn signs in and returns the session cookie.
func (b *testBundle) signIn(t *testing.T, id, key string) *http.Cookie {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://"+host+SignInPath, strings.NewReader(url.Values{"access_key_id": {id}, "secret_access_key": {key}, "next": {"/activities"}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	b.gate.SignIn().ServeHTTP(w, r)
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	require.Equal(t, "/activities", w.Header().Get("Location"))
	cookies := w.Result().Cookies()
	require.Len(t, cookies, 1)
	return cookies[0]
}

// page requests a console page through the gate.
func (b *testBundle) page(c *http.Cookie, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "http://"+host+"/executions/x", nil)
	if c != nil {
		r.AddCookie(c)
	}
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	b.gate.Console(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })).ServeHTTP(w, r)
	return w
}

func TestSessionLifetime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.signIn(t, keyID, secret)
	require.Equal(t, int(DefaultSessionTTL/time.Second), c.MaxAge)
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, c.SameSite)
	require.Equal(t, http.StatusTeapot, b.page(c, nil).Code)
	b.advance(DefaultSessionTTL - time.Second)
	require.Equal(t, http.StatusTeapot, b.page(c, nil).Code)
	b.advance(time.Second)
	w := b.page(c, nil)
	require.Equal(t, http.StatusSeeOther, w.Code)
	require.Equal(t, "/signin?next=%2Fexecutions%2Fx", w.Header().Get("Location"))
}

func TestSessionEndsWithItsKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.signIn(t, keyID, secret)
	other := b.signIn(t, "AKIDOTHER", "other")
	// The key gets another secret: its sessions end, the others' stay.
	b.gate.SetCredentials(sigv4auth.NewCredentials(map[string]string{keyID: "rotated", "AKIDOTHER": "other"}))
	require.Equal(t, http.StatusSeeOther, b.page(c, nil).Code)
	require.Equal(t, http.StatusTeapot, b.page(other, nil).Code)
	// Taken out: the same.
	b.gate.SetCredentials(sigv4auth.NewCredentials(map[string]string{keyID: "rotated"}))
	require.Equal(t, http.StatusSeeOther, b.page(other, nil).Code)
}

func TestSessionForgeries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.signIn(t, keyID, secret)
	parts := strings.Split(c.Value, ".")
	require.Len(t, parts, 4)
	for _, v := range []string{
		"", "v1", "v2." + strings.Join(parts[1:], "."),
		strings.Join([]string{parts[0], parts[1], "9999999999", parts[3]}, "."),         // a later expiry
		strings.Join([]string{parts[0], "QUtJRE9USEVS", parts[2], parts[3]}, "."),       // another key
		strings.Join([]string{parts[0], parts[1], parts[2], parts[3][:10] + "AA"}, "."), // another MAC
		strings.Join([]string{parts[0], parts[1], "x", parts[3]}, "."),
		strings.Join([]string{parts[0], "!!", parts[2], parts[3]}, "."),
	} {
		_, ok := b.gate.session(v)
		require.False(t, ok, v)
	}
	// Another server's key does not take this server's cookies.
	b2 := setup(t)
	b2.gate.cfg.SessionKey = []byte(strings.Repeat("o", 32))
	require.Equal(t, http.StatusSeeOther, b2.page(c, nil).Code)
}

func TestSignInRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t)
	post := func(form url.Values, header http.Header) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://"+host+SignInPath, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			r.Header[k] = v
		}
		w := httptest.NewRecorder()
		b.gate.SignIn().ServeHTTP(w, r)
		return w
	}
	for _, form := range []url.Values{
		{"access_key_id": {keyID}, "secret_access_key": {"wrong"}},
		{"access_key_id": {keyID}, "secret_access_key": {""}},
		{"access_key_id": {"AKIDNOBODY"}, "secret_access_key": {secret}},
		{"access_key_id": {""}, "secret_access_key": {""}},
	} {
		w := post(form, nil)
		require.Equal(t, http.StatusUnauthorized, w.Code, "%v", form)
		require.Empty(t, w.Result().Cookies())
	}
	require.Equal(t, 4, b.pages[http.StatusUnauthorized])
	// A sign-in from another origin is the server's cross-origin guard's
	// to refuse (cli's TestCrossOriginGuard).
	ok := url.Values{"access_key_id": {keyID}, "secret_access_key": {secret}}
	require.Equal(t, http.StatusSeeOther, post(ok, http.Header{"Origin": {"http://" + host}, "Sec-Fetch-Site": {"same-origin"}}).Code)
}

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"":                        "/",
		"/activities":             "/activities",
		"/executions/arn:aws:x?y": "/executions/arn:aws:x?y",
		"//evil.example/":         "/",
		"/\\evil.example":         "/",
		"https://evil.example/":   "/",
		"activities":              "/",
		"/signin?next=/":          "/",
		"/a\r\nSet-Cookie: x":     "/",
	} {
		require.Equal(t, want, safeNext(next), next)
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.signIn(t, keyID, secret)
	call := func(header http.Header, cookie bool, body string) error {
		r := httptest.NewRequest(http.MethodPost, "http://"+host+"/", strings.NewReader(body))
		for k, v := range header {
			r.Header[k] = v
		}
		if cookie {
			r.AddCookie(c)
		}
		return b.gate.Authenticate(r, []byte(body))
	}
	reason := func(err error) sigv4auth.Reason {
		var e *sigv4auth.Error
		if errors.As(err, &e) {
			return e.Reason
		}
		return 0
	}
	require.NoError(t, call(http.Header{"Origin": {"http://" + host}}, true, "{}"))
	require.NoError(t, call(http.Header{"Sec-Fetch-Site": {"same-origin"}}, true, "{}"))
	require.Equal(t, sigv4auth.Missing, reason(call(nil, true, "{}")))
	require.Equal(t, sigv4auth.Missing, reason(call(http.Header{"Origin": {"http://localhost:8083"}}, true, "{}")))
	require.Equal(t, sigv4auth.Missing, reason(call(http.Header{"Origin": {"http://" + host}}, false, "{}")))

	// A signature, checked at the gate's clock.
	r := httptest.NewRequest(http.MethodPost, "http://"+host+"/", strings.NewReader("{}"))
	sum := sha256.Sum256([]byte("{}"))
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret},
		r, hex.EncodeToString(sum[:]), Service, "eu-west-1", b.now))
	require.NoError(t, call(r.Header, false, "{}"))
	require.Equal(t, sigv4auth.Mismatch, reason(call(r.Header, false, "{} ")))
	// A signature that fails is not saved by a session cookie.
	require.Equal(t, sigv4auth.Mismatch, reason(call(withOrigin(r.Header), true, "[]")))
	b.advance(6 * time.Minute)
	require.Equal(t, sigv4auth.Expired, reason(call(r.Header, false, "{}")))
}

func withOrigin(h http.Header) http.Header {
	h = h.Clone()
	h.Set("Origin", "http://"+host)
	return h
}

// Identify names the user of a session: "console:<access key id>"; a
// request without a valid session, nobody.
func TestIdentify(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.signIn(t, "AKIDOTHER", "other")
	r := httptest.NewRequest(http.MethodPost, "http://"+host+"/", nil)
	require.Empty(t, b.gate.Identify(r))
	r.AddCookie(c)
	require.Equal(t, "console:AKIDOTHER", b.gate.Identify(r))
	b.advance(DefaultSessionTTL + time.Minute)
	require.Empty(t, b.gate.Identify(r), "an expired session names nobody")
}
