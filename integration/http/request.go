package http

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"

	"stepwise/jsonvalue"
)

// The headers Step Functions adds to every HTTP Task request.
const (
	contentTypeJSON = "application/json; charset=UTF-8"
	contentTypeForm = "application/x-www-form-urlencoded"
	userAgentPrefix = "Amazon|StepFunctions|HttpInvoke|"
	rangeHeader     = "bytes=0-262144"
)

// secretHeadersKey carries, in a request's context, the names of the
// headers that hold a connection's secrets: they are not sent on when a
// redirect leaves the host.
type secretHeadersKey struct{}

// newRequest builds the request of a task: its parameters merged with the
// connection's invocation parameters (the connection's win, as
// EventBridge merges them), then the connection's authorization.
func (inv *invoker) newRequest(ctx context.Context, p *params, c *connection) (*http.Request, error) {
	extra := c.invocation()
	body, contentType, err := requestBody(p, extra.BodyParameters)
	if err != nil {
		return nil, err
	}
	u := *p.endpoint
	query := u.Query()
	for k, vs := range p.query {
		query[k] = append(query[k], vs...)
	}
	for _, param := range extra.QueryStringParameters {
		query.Set(param.Key, param.Value)
	}
	u.RawQuery = query.Encode()
	var reader io.Reader = http.NoBody
	if body != nil {
		reader = bytes.NewReader(body)
	}
	secrets := make([]string, 0, len(extra.HeaderParameters)+1)
	for _, param := range extra.HeaderParameters {
		secrets = append(secrets, param.Key)
	}
	if c != nil && c.AuthorizationType == authAPIKey {
		secrets = append(secrets, c.APIKeyName)
	}
	req, err := http.NewRequestWithContext(context.WithValue(ctx, secretHeadersKey{}, secrets), p.method, u.String(), reader)
	if err != nil {
		return nil, failuref("The HTTP request cannot be made: %v", err)
	}
	inv.setHeaders(req, p, extra.HeaderParameters, contentType)
	return req, inv.authorize(ctx, req, c)
}

// requestBody encodes RequestBody, with the connection's body parameters
// set in it: as JSON, or form-urlencoded under URL_ENCODED. A string is
// sent as it is.
func requestBody(p *params, extra []parameter) ([]byte, string, error) {
	v, has := p.body, p.hasBody
	if len(extra) > 0 {
		obj, isObject := v.(*jsonvalue.Object)
		switch {
		case !has:
			obj = jsonvalue.NewObject(len(extra))
		case !isObject:
			return nil, "", failuref("The field 'RequestBody' must be an object to take the connection's body parameters, not %s", jsonvalue.TypeName(v))
		default:
			obj = obj.Clone()
		}
		for _, param := range extra {
			obj.Set(param.Key, param.Value)
		}
		v, has = obj, true
	}
	if !has {
		return nil, "", nil
	}
	if s, isString := v.(string); isString {
		if p.urlEncoded {
			return []byte(s), contentTypeForm, nil
		}
		return []byte(s), contentTypeJSON, nil
	}
	if !p.urlEncoded {
		return jsonvalue.Marshal(v), contentTypeJSON, nil
	}
	obj, isObject := v.(*jsonvalue.Object)
	if !isObject {
		return nil, "", failuref("The field 'RequestBody' must be an object to be URL_ENCODED, not %s", jsonvalue.TypeName(v))
	}
	return []byte(encodeForm(obj, p.arrayFormat)), contentTypeForm, nil
}

func (inv *invoker) setHeaders(req *http.Request, p *params, extra []parameter, contentType string) {
	for _, h := range p.headers {
		req.Header.Set(h.name, h.value)
	}
	for _, param := range extra {
		req.Header.Set(param.Key, param.Value)
	}
	if contentType != "" && (p.urlEncoded || req.Header.Get("Content-Type") == "") {
		req.Header.Set("Content-Type", contentType)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgentPrefix+inv.region)
	}
	req.Header.Set("Range", rangeHeader)
}

// authorize adds the connection's authorization.
func (inv *invoker) authorize(ctx context.Context, req *http.Request, c *connection) error {
	if c == nil {
		return nil
	}
	switch c.AuthorizationType {
	case authAPIKey:
		req.Header.Set(c.APIKeyName, c.APIKeyValue)
	case authBasic:
		req.SetBasicAuth(c.Username, c.Password)
	case authOAuth:
		token, err := c.token.get(ctx, func(ctx context.Context) (string, time.Duration, error) {
			return fetchToken(ctx, inv.client, inv.guard, c)
		})
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return nil
}

// checkRedirect follows up to 10 redirects to where the task may call
// (the guard checks each one's URL, and the address it dials), dropping
// the connection's secret headers when one leaves the original host (Go
// drops Authorization itself).
func (inv *invoker) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return http.ErrUseLastResponse
	}
	if err := inv.guard.CheckURL(req.URL); err != nil {
		return err
	}
	if req.URL.Host == via[0].URL.Host {
		return nil
	}
	secrets, _ := req.Context().Value(secretHeadersKey{}).([]string)
	for _, name := range secrets {
		req.Header.Del(name)
	}
	return nil
}
