package http

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"stepwise/failure"
	"stepwise/internal/security/egress"
)

// ErrorInvalidConnectionState fails a task whose connection cannot
// authorize: its OAuth token endpoint refused or failed.
const ErrorInvalidConnectionState = "Events.ConnectionResource.InvalidConnectionState"

// tokenSkew is how long before its expiry a cached token is renewed.
const tokenSkew = 10 * time.Second

// maxTokenResponse is the largest token endpoint answer read.
const maxTokenResponse = 1 << 20

// tokenCache holds an OAuth connection's access token until it expires
// (a token given without expires_in is kept until an API answers 401).
// The lock is held while a token is fetched, so concurrent calls wait for
// one request.
type tokenCache struct {
	mu      sync.Mutex
	token   string
	expires time.Time // zero: no expiry given
}

// get returns the cached token or fetches a new one.
func (tc *tokenCache) get(ctx context.Context, fetch func(context.Context) (string, time.Duration, error)) (string, error) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	now := time.Now()
	if tc.token != "" && (tc.expires.IsZero() || now.Before(tc.expires.Add(-tokenSkew))) {
		return tc.token, nil
	}
	token, ttl, err := fetch(ctx)
	if err != nil {
		return "", err
	}
	tc.token, tc.expires = token, time.Time{}
	if ttl > 0 {
		tc.expires = now.Add(ttl)
	}
	return token, nil
}

// clear drops the cached token: the API refused it.
func (tc *tokenCache) clear() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.token = ""
}

// fetchToken asks a connection's authorization endpoint for a token with
// the client credentials grant: the client ID and secret as Basic
// authorization, grant_type=client_credentials and the connection's
// OAuthHttpParameters in the body (in the query for GET). The endpoint
// is held to the rules of the task's own endpoint (the guard's).
func fetchToken(ctx context.Context, client *http.Client, guard *egress.Guard, c *connection) (string, time.Duration, error) {
	req, err := tokenRequest(ctx, c)
	if err != nil {
		return "", 0, err
	}
	if err := guard.CheckURL(req.URL); err != nil {
		return "", 0, tokenFailure(c, err.Error())
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, tokenFailure(c, err.Error())
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	if err != nil {
		return "", 0, tokenFailure(c, err.Error())
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", 0, tokenFailure(c, fmt.Sprintf("status %s: %s", resp.Status, data))
	}
	return parseToken(c, data)
}

func tokenRequest(ctx context.Context, c *connection) (*http.Request, error) {
	u, err := url.Parse(c.AuthorizationEndpoint)
	if err != nil {
		return nil, tokenFailure(c, err.Error())
	}
	params := c.OAuthHTTPParameters
	if params == nil {
		params = &httpParameters{}
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	for _, p := range params.BodyParameters {
		form.Set(p.Key, p.Value)
	}
	query := u.Query()
	for _, p := range params.QueryStringParameters {
		query.Set(p.Key, p.Value)
	}
	var body io.Reader = http.NoBody
	if c.HTTPMethod == http.MethodGet {
		for k, vs := range form {
			query[k] = vs
		}
	} else {
		body = strings.NewReader(form.Encode())
	}
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, c.HTTPMethod, u.String(), body)
	if err != nil {
		return nil, tokenFailure(c, err.Error())
	}
	if c.HTTPMethod != http.MethodGet {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "application/json")
	for _, p := range params.HeaderParameters {
		req.Header.Set(p.Key, p.Value)
	}
	req.SetBasicAuth(c.ClientID, c.ClientSecret)
	return req, nil
}

// parseToken reads {"access_token": ..., "expires_in": seconds}; some
// servers give expires_in as a string.
func parseToken(c *connection, data []byte) (string, time.Duration, error) {
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   any    `json:"expires_in"`
	}
	if err := json.Unmarshal(data, &tok); err != nil || tok.AccessToken == "" {
		return "", 0, tokenFailure(c, "the answer has no access_token: "+string(data))
	}
	var seconds float64
	switch v := tok.ExpiresIn.(type) {
	case float64:
		seconds = v
	case string:
		seconds, _ = strconv.ParseFloat(v, 64)
	}
	return tok.AccessToken, time.Duration(seconds * float64(time.Second)), nil
}

func tokenFailure(c *connection, why string) error {
	return failure.Newf(ErrorInvalidConnectionState,
		"The OAuth token request to '%s' failed: %s", c.AuthorizationEndpoint, why)
}
