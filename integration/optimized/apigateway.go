package optimized

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/sdkjob"
	"stepwise/internal/security/egress"
	"stepwise/jsonvalue"
)

// maxAPIResponse bounds the API Gateway response read.
const maxAPIResponse = 10 << 20

// newAPIGateway reads the allow list HTTP Tasks share: an endpoint is
// called as an HTTP Task's would be (package internal/security/egress).
func newAPIGateway(cfg *integration.Config) (integration.Integration, error) {
	allow, err := egress.ParseAllow(cfg.HTTPTaskAllow...)
	if err != nil {
		return nil, fmt.Errorf("http task allow list: %w", err)
	}
	guard := &egress.Guard{Allow: allow}
	client := &http.Client{Timeout: 5 * time.Minute, Transport: guard.Transport(),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return guard.CheckURL(req.URL)
		}}
	// The server's own API listener: no redirect leaves it.
	local := &http.Client{Timeout: 5 * time.Minute,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			return errors.New("a redirect of a local API is not followed")
		}}
	return &apiGateway{cfg: cfg, client: client, local: local, guard: guard}, nil
}

func init() {
	integration.Register(integration.Module{
		Resource: integration.ResourcePrefix + "apigateway:invoke",
		Patterns: []integration.Pattern{integration.WaitForTaskToken},
		New:      newAPIGateway,
	})
}

// apiGateway calls an API Gateway endpoint: https://{ApiEndpoint}/{Stage}/{Path}.
// An ApiEndpoint that names its scheme (http://host:port) or a port
// (localhost:8080) is called as it says, over plain HTTP without a
// scheme: a local stand-in of the API. The HTTP Tasks' rules apply: plain
// HTTP only to a host the allow list (serve --http-task-allow) names,
// and no address that is not public unless allowed; a refused endpoint
// fails the task with ApiGateway.RequestFailed saying so. An
// ApiEndpoint {apiId}.execute-api.{region}.amazonaws.com of an API
// deployed on this server is called on the server's own API listener
// (integration.Config.LocalAPIs), which no allow list needs to name.
type apiGateway struct {
	cfg    *integration.Config
	client *http.Client
	local  *http.Client
	guard  *egress.Guard
}

// executeAPIHost is an API's host on AWS: {apiId}.execute-api.{region}.amazonaws.com.
var executeAPIHost = regexp.MustCompile(`^([a-z0-9]+)\.execute-api\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// localAPI is the base URL of the local listener that serves the API
// the endpoint names, if it is one deployed here.
func (g *apiGateway) localAPI(endpoint string) (string, bool) {
	host := strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(endpoint), "https://"), "/")
	m := executeAPIHost.FindStringSubmatch(host)
	if m == nil {
		return "", false
	}
	return g.cfg.LocalAPIs.Find(m[1])
}

type apiParams struct {
	ApiEndpoint     string
	Method          string
	Stage           string
	Path            string
	Headers         map[string][]string
	QueryParameters map[string][]string
	RequestBody     any
	AuthType        string
	AllowNullValues bool
}

func (g *apiGateway) Call(ctx context.Context, r *integration.Request) (any, error) {
	var p apiParams
	body, hasBody := any(nil), false
	if o, ok := r.Parameters.(*jsonvalue.Object); ok {
		body, hasBody = o.Get("RequestBody")
		rest := jsonvalue.NewObject(0)
		for _, k := range o.Keys() {
			if k != "RequestBody" {
				v, _ := o.Get(k)
				rest.Set(k, v)
			}
		}
		if err := sdkjob.DecodeParams(rest, &p); err != nil {
			return nil, err
		}
	} else if err := sdkjob.DecodeParams(r.Parameters, &p); err != nil {
		return nil, err
	}
	if p.ApiEndpoint == "" {
		return nil, sdkjob.ParamsFailure("The field 'ApiEndpoint' is required but was missing")
	}
	switch p.Method {
	case "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS":
	case "":
		return nil, sdkjob.ParamsFailure("The field 'Method' is required but was missing")
	default:
		return nil, sdkjob.ParamsFailure("The value of the field 'Method' has an invalid value: %s", p.Method)
	}
	switch p.AuthType {
	case "", "NO_AUTH", "IAM_ROLE", "RESOURCE_POLICY":
	default:
		return nil, sdkjob.ParamsFailure("The value of the field 'AuthType' has an invalid value: %s", p.AuthType)
	}
	client := g.client
	target := p
	base, local := g.localAPI(p.ApiEndpoint)
	if local {
		client, target.ApiEndpoint = g.local, base
		if target.Stage == "$default" {
			target.Stage = ""
		}
	}
	u, err := apiURL(target)
	if err != nil {
		return nil, sdkjob.ParamsFailure("%v", err)
	}
	if parsed, _ := url.Parse(u); parsed != nil && !local {
		if err := g.guard.CheckURL(parsed); err != nil {
			return nil, refused(err)
		}
	}
	var payload []byte
	if hasBody && body != nil {
		if s, ok := body.(string); ok {
			payload = []byte(s)
		} else {
			payload = jsonvalue.Marshal(body)
		}
	}
	req, err := http.NewRequestWithContext(ctx, p.Method, u, bytes.NewReader(payload))
	if err != nil {
		return nil, sdkjob.ParamsFailure("%v", err)
	}
	for k, vs := range p.Headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if len(payload) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if !local && (p.AuthType == "IAM_ROLE" || p.AuthType == "RESOURCE_POLICY") {
		if err := g.sign(ctx, req, payload); err != nil {
			return nil, failure.New("ApiGateway.SigningFailed", err.Error())
		}
	}
	res, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var r *egress.RefusedError
		if errors.As(err, &r) {
			return nil, refused(r)
		}
		return nil, failure.New("ApiGateway.RequestFailed", err.Error())
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAPIResponse))
	if err != nil {
		return nil, failure.New("ApiGateway.RequestFailed", err.Error())
	}
	out := obj(
		"Headers", responseHeaders(res.Header),
		"ResponseBody", responseBody(res.Header.Get("Content-Type"), data),
		"StatusCode", jsonvalue.NumberFromInt(int64(res.StatusCode)),
		"StatusText", strings.TrimSpace(strings.TrimPrefix(res.Status, fmt.Sprint(res.StatusCode))),
	)
	if res.StatusCode >= 400 {
		return nil, failure.New(fmt.Sprintf("ApiGateway.%d", res.StatusCode), jsonvalue.String(out))
	}
	return out, nil
}

// refused fails a task whose endpoint the HTTP Tasks' rules refuse.
func refused(err error) error {
	return failure.New("ApiGateway.RequestFailed", "apigateway:invoke follows the rules of HTTP Tasks: "+err.Error())
}

// apiURL is where a call goes: https://{ApiEndpoint}/{Stage}/{Path}?query,
// or plain HTTP for an endpoint with a port or an http:// URL.
func apiURL(p apiParams) (string, error) {
	base := p.ApiEndpoint
	switch {
	case strings.HasPrefix(base, "http://"), strings.HasPrefix(base, "https://"):
	case strings.Contains(base, ":"):
		base = "http://" + base
	default:
		base = "https://" + base
	}
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("The value of the field 'ApiEndpoint' is not a host name: %s", p.ApiEndpoint)
	}
	for _, part := range []string{p.Stage, p.Path} {
		if part = strings.Trim(part, "/"); part != "" {
			u.Path += "/" + part
		}
	}
	q := url.Values{}
	for k, vs := range p.QueryParameters {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// sign signs a call with SigV4 for execute-api.
func (g *apiGateway) sign(ctx context.Context, req *http.Request, payload []byte) error {
	cfg, _, err := g.cfg.AWSConfig(ctx, "apigateway")
	if err != nil {
		return err
	}
	if cfg.Credentials == nil {
		return fmt.Errorf("unable to load credentials: none configured")
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(payload)
	return v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "execute-api", g.cfg.Region, time.Now().UTC())
}

// responseHeaders renders headers as lists of values, by name in order.
func responseHeaders(h http.Header) *jsonvalue.Object {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	o := jsonvalue.NewObject(len(names))
	for _, k := range names {
		vs := make([]any, len(h[k]))
		for i, v := range h[k] {
			vs[i] = v
		}
		o.Set(k, vs)
	}
	return o
}

// responseBody is a JSON response parsed, any other as text.
func responseBody(contentType string, data []byte) any {
	if strings.Contains(contentType, "json") {
		if v, err := jsonvalue.Parse(data); err == nil {
			return v
		}
	}
	return string(data)
}
