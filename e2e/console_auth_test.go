package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"stepwise/internal/testkit/testwait"
)

// consolePage is a response of the console.
type consolePage struct {
	status int
	header http.Header
	body   string
}

// fetchPage requests a console URL without following redirects.
func fetchPage(t *testing.T, method, u string, header http.Header, form url.Values) consolePage {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return consolePage{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// The console with --credentials: pages send a browser to the sign-in
// page (in English or Japanese), a wrong pair is refused, the right one
// sets an HttpOnly, SameSite=Strict session cookie that opens the pages
// and, from the console's own origin only, the API; signing out clears
// it, and a key taken out of the credentials file (SIGHUP) ends its
// sessions.
func TestConsoleSignIn(t *testing.T) {
	t.Parallel()
	creds := writeCredentials(t)
	s := startServer(t, t.TempDir()+"/console.db", "--credentials", creds)
	base := s.url()

	p := fetchPage(t, "GET", base+"/state-machines/x?status=RUNNING", nil, nil)
	require.Equal(t, http.StatusSeeOther, p.status)
	require.Equal(t, "/signin?next=%2Fstate-machines%2Fx%3Fstatus%3DRUNNING", p.header.Get("Location"))
	p = fetchPage(t, "GET", base+"/console/executions/status?arn=x", nil, nil)
	require.Equal(t, http.StatusUnauthorized, p.status)
	require.Contains(t, p.body, "Sign in to the console first")
	p = fetchPage(t, "GET", base+"/static/style.css", nil, nil)
	require.Equal(t, http.StatusOK, p.status)

	p = fetchPage(t, "GET", base+"/signin?next=/activities", nil, nil)
	require.Equal(t, http.StatusOK, p.status)
	require.Contains(t, p.body, `<h1>Sign in</h1>`)
	require.Contains(t, p.body, `<input type="hidden" name="next" value="/activities">`)
	require.Contains(t, p.body, `name="secret_access_key"`)
	p = fetchPage(t, "GET", base+"/signin", http.Header{"Accept-Language": {"ja,en;q=0.8"}}, nil)
	require.Contains(t, p.body, `<h1>サインイン</h1>`)
	require.Contains(t, p.body, "アクセスキー ID")
	require.Contains(t, p.body, "シークレットアクセスキー")

	wrong := url.Values{"access_key_id": {authKeyID}, "secret_access_key": {"nope"}, "next": {"/activities"}}
	p = fetchPage(t, "POST", base+"/signin", nil, wrong)
	require.Equal(t, http.StatusUnauthorized, p.status)
	require.Contains(t, p.body, "The access key ID or the secret access key is not right.")
	require.Empty(t, p.header.Values("Set-Cookie"))
	p = fetchPage(t, "POST", base+"/signin", http.Header{"Cookie": {"stepwise-lang=ja"}}, wrong)
	require.Contains(t, p.body, "アクセスキー ID またはシークレットアクセスキーが正しくありません。")
	testwait.Until(t, func() bool { return strings.Contains(s.stderr.String(), "authn: console sign-in refused") }, 30*time.Second, 10*time.Millisecond)

	right := url.Values{"access_key_id": {authKeyID}, "secret_access_key": {authSecret}, "next": {"/activities"}}
	p = fetchPage(t, "POST", base+"/signin", http.Header{"Origin": {"http://evil.example"}}, right)
	require.Equal(t, http.StatusForbidden, p.status)
	p = fetchPage(t, "POST", base+"/signin", http.Header{"Origin": {base}, "Sec-Fetch-Site": {"same-origin"}}, right)
	require.Equal(t, http.StatusSeeOther, p.status)
	require.Equal(t, "/activities", p.header.Get("Location"))
	cookies, err := http.ParseSetCookie(p.header.Get("Set-Cookie"))
	require.NoError(t, err)
	require.Equal(t, "stepwise-session", cookies.Name)
	require.True(t, cookies.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, cookies.SameSite)
	require.Equal(t, "/", cookies.Path)
	require.Equal(t, 12*60*60, cookies.MaxAge)
	require.False(t, cookies.Secure) // plain HTTP
	session := http.Header{"Cookie": {cookies.Name + "=" + cookies.Value}}

	// The pages, and their sign-out button.
	p = fetchPage(t, "GET", base+"/", session, nil)
	require.Equal(t, http.StatusOK, p.status)
	require.Contains(t, p.body, `<form class="signout" method="post" action="/signout">`)
	p = fetchPage(t, "GET", base+"/signin?next=/activities", session, nil)
	require.Equal(t, http.StatusSeeOther, p.status)
	require.Equal(t, "/activities", p.header.Get("Location"))
	// A page request a browser marks as coming from another site does not
	// count as signed in.
	p = fetchPage(t, "GET", base+"/", withHeader(session, "Sec-Fetch-Site", "cross-site"), nil)
	require.Equal(t, http.StatusSeeOther, p.status)
	// A forged cookie does not either.
	p = fetchPage(t, "GET", base+"/", http.Header{"Cookie": {cookies.Name + "=" + strings.Replace(cookies.Value, ".", ".x", 1)}}, nil)
	require.Equal(t, http.StatusSeeOther, p.status)

	// The API takes the cookie from the console's own origin only.
	call := func(h http.Header) answer {
		req, err := http.NewRequest(http.MethodPost, base+"/", strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
		return send(t, req)
	}
	require.Equal(t, http.StatusOK, call(withHeader(session, "Origin", base)).status)
	require.Equal(t, http.StatusOK, call(withHeader(session, "Sec-Fetch-Site", "same-origin")).status)
	a := call(session) // no word of where it comes from
	require.Equal(t, 400, a.status)
	require.Equal(t, "com.amazon.coral.service#MissingAuthenticationTokenException", a.code)
	// From another origin, the cross-origin guard refuses it before it
	// is authenticated.
	for _, h := range []http.Header{
		withHeader(session, "Origin", "http://127.0.0.1:1"), // another port: same site, not same origin
		withHeader(withHeader(session, "Origin", base), "Sec-Fetch-Site", "same-site"),
		withHeader(session, "Origin", "null"),
	} {
		a := call(h)
		require.Equal(t, 403, a.status, "%v", h)
		require.Equal(t, "com.amazon.coral.service#AccessDeniedException", a.code, "%v", h)
	}

	// A SigV4-signed GET of a page works without a session.
	req, err := http.NewRequest(http.MethodGet, base+"/activities", nil)
	require.NoError(t, err)
	sum := sha256.Sum256(nil)
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: ciKeyID, SecretAccessKey: ciSecret},
		req, hex.EncodeToString(sum[:]), "states", "us-east-1", time.Now()))
	p = fetchPage(t, "GET", base+"/activities", req.Header, nil)
	require.Equal(t, http.StatusOK, p.status, p.body)

	// Signing out clears the cookie.
	p = fetchPage(t, "POST", base+"/signout", withHeader(session, "Origin", base), url.Values{})
	require.Equal(t, http.StatusSeeOther, p.status)
	require.Equal(t, "/signin", p.header.Get("Location"))
	cleared, err := http.ParseSetCookie(p.header.Get("Set-Cookie"))
	require.NoError(t, err)
	require.Equal(t, "stepwise-session", cleared.Name)
	require.Empty(t, cleared.Value)
	require.Less(t, cleared.MaxAge, 0)

	// A key taken out of the file ends its sessions once the server
	// reloads it; the other keys' stay.
	p = fetchPage(t, "POST", base+"/signin", nil, url.Values{"access_key_id": {ciKeyID}, "secret_access_key": {ciSecret}})
	require.Equal(t, http.StatusSeeOther, p.status)
	ci, err := http.ParseSetCookie(p.header.Get("Set-Cookie"))
	require.NoError(t, err)
	ciSession := http.Header{"Cookie": {ci.Name + "=" + ci.Value}}
	require.Equal(t, http.StatusOK, fetchPage(t, "GET", base+"/", session, nil).status) // the cookie copied before the sign-out
	require.NoError(t, os.WriteFile(creds, []byte("[ci]\naws_access_key_id = "+ciKeyID+"\naws_secret_access_key = "+ciSecret+"\n"), 0o600))
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGHUP))
	testwait.Until(t, func() bool { return fetchPage(t, "GET", base+"/", session, nil).status == http.StatusSeeOther }, 30*time.Second, 20*time.Millisecond)
	require.Equal(t, http.StatusOK, fetchPage(t, "GET", base+"/", ciSession, nil).status)
}

func withHeader(h http.Header, k, v string) http.Header {
	h = h.Clone()
	h.Set(k, v)
	return h
}

// The console with --credentials in a real browser: a page sends it to
// the sign-in page (in Japanese too), a wrong secret is refused, the
// right pair brings it back to the page it asked for, whose Start button
// calls the API with the session cookie; signing out ends it.
func TestConsoleSignInInTheBrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s := startAuthServer(t)
	c := s.clientAs(t, authKeyID, authSecret, "")
	arn := createMachine(t, c, "hello", `{"StartAt": "Hi", "States": {"Hi": {"Type": "Pass", "Result": "hi", "End": true}}}`)

	do(t, ctx, chromedp.Navigate(s.url()+"/state-machines/"+url.PathEscape(arn)), chromedp.WaitVisible(css(`main[data-page="sign-in"]`)))
	require.Equal(t, s.url()+"/signin?next="+url.QueryEscape("/state-machines/"+url.PathEscape(arn)), eval[string](t, ctx, `location.href`))
	do(t, ctx, chromedp.Click(css(`a[data-lang="ja"]`)), chromedp.WaitVisible(css(`html[lang="ja"] main[data-page="sign-in"]`)))
	require.Equal(t, "サインイン", strings.TrimSpace(eval[string](t, ctx, `document.querySelector('h1').textContent`)))
	screenshot(t, ctx, "console-sign-in-ja")
	do(t, ctx, chromedp.Click(css(`a[data-lang="en"]`)), chromedp.WaitVisible(css(`html[lang="en"] main[data-page="sign-in"]`)))

	do(t, ctx,
		chromedp.SendKeys(css(`input[name="access_key_id"]`), authKeyID),
		chromedp.SendKeys(css(`input[name="secret_access_key"]`), "not the secret"),
		chromedp.Click(css(`form.signin button[type="submit"]`)),
		chromedp.WaitVisible(css(`[data-field="sign-in-error"]`)))
	require.Contains(t, eval[string](t, ctx, `document.querySelector('[data-field="sign-in-error"]').textContent`), "is not right")
	do(t, ctx,
		chromedp.SendKeys(css(`input[name="access_key_id"]`), authKeyID),
		chromedp.SendKeys(css(`input[name="secret_access_key"]`), authSecret),
		chromedp.Click(css(`form.signin button[type="submit"]`)),
		chromedp.WaitVisible(css(`#start-form`)))
	require.Equal(t, s.url()+"/state-machines/"+url.PathEscape(arn), eval[string](t, ctx, `location.href`))
	require.NotContains(t, eval[string](t, ctx, `document.cookie`), "stepwise-session", "the session cookie is HttpOnly")

	// Start, from the page: an API call with the session cookie.
	do(t, ctx, chromedp.Click(css(`#start-form button[type="submit"]`)), chromedp.WaitVisible(css(`main[data-page="execution"]`)))
	screenshot(t, ctx, "console-signed-in")
	out, err := c.ListExecutions(context.Background(), &sfn.ListExecutionsInput{StateMachineArn: aws.String(arn)})
	require.NoError(t, err)
	require.Len(t, out.Executions, 1)
	require.Equal(t, "SUCCEEDED", string(waitDone(t, c, aws.ToString(out.Executions[0].ExecutionArn)).Status))

	do(t, ctx, chromedp.Click(css(`form.signout button`)), chromedp.WaitVisible(css(`main[data-page="sign-in"]`)))
	do(t, ctx, chromedp.Navigate(s.url()+"/activities"), chromedp.WaitVisible(css(`main[data-page="sign-in"]`)))
}
