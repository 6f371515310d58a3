package api

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"stepwise/wiring"
)

// incoming is a request to a route.
type incoming struct {
	r     *http.Request
	body  []byte
	found *found
	id    string
	at    time.Time
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// requestTime is API Gateway's form of a request's time.
func requestTime(t time.Time) string { return t.UTC().Format("02/Jan/2006:15:04:05 -0700") }

func (in *incoming) sourceIP() string {
	host, _, err := net.SplitHostPort(in.r.RemoteAddr)
	if err != nil {
		return in.r.RemoteAddr
	}
	return host
}

// bodyField is the event's body and isBase64Encoded: text as it is, other
// bytes in base64; nil for none.
func (in *incoming) bodyField() (any, bool) {
	if len(in.body) == 0 {
		return nil, false
	}
	if utf8.Valid(in.body) {
		return string(in.body), false
	}
	return base64.StdEncoding.EncodeToString(in.body), true
}

func (in *incoming) stage() string {
	if s := in.found.entry.route.Stage; s != "" {
		return s
	}
	return Default
}

func orNil[M ~map[string]V, V any](m M) any {
	if len(m) == 0 {
		return nil
	}
	return m
}

// eventV1 is the Lambda proxy integration's event of payload format 1.0
// (a REST API's).
func (in *incoming) eventV1(env *wiring.Env) map[string]any {
	route := &in.found.entry.route
	headers, multiHeaders := map[string]string{}, map[string][]string{}
	for name, vs := range in.r.Header {
		headers[name] = vs[len(vs)-1]
		multiHeaders[name] = vs
	}
	if in.r.Host != "" {
		headers["Host"] = in.r.Host
		multiHeaders["Host"] = []string{in.r.Host}
	}
	query, multiQuery := map[string]string{}, map[string][]string{}
	for name, vs := range in.r.URL.Query() {
		query[name] = vs[len(vs)-1]
		multiQuery[name] = vs
	}
	body, b64 := in.bodyField()
	resource := route.Path
	fullPath := in.r.URL.Path
	if !in.found.staged && route.Stage != "" && route.Stage != Default {
		fullPath = "/" + route.Stage + in.found.path
	}
	return map[string]any{
		"resource":                        resource,
		"path":                            in.found.path,
		"httpMethod":                      in.r.Method,
		"headers":                         orNil(headers),
		"multiValueHeaders":               orNil(multiHeaders),
		"queryStringParameters":           orNil(query),
		"multiValueQueryStringParameters": orNil(multiQuery),
		"pathParameters":                  orNil(in.found.params),
		"stageVariables":                  nil,
		"requestContext": map[string]any{
			"accountId":         env.Account,
			"apiId":             route.APIID,
			"domainName":        in.r.Host,
			"domainPrefix":      domainPrefix(in.r.Host),
			"extendedRequestId": in.id,
			"httpMethod":        in.r.Method,
			"identity": map[string]any{
				"accessKey": nil, "accountId": nil, "caller": nil, "cognitoAuthenticationProvider": nil,
				"cognitoAuthenticationType": nil, "cognitoIdentityId": nil, "cognitoIdentityPoolId": nil,
				"principalOrgId": nil, "sourceIp": in.sourceIP(), "user": nil, "userAgent": in.r.UserAgent(), "userArn": nil,
			},
			"path":             fullPath,
			"protocol":         in.r.Proto,
			"requestId":        in.id,
			"requestTime":      requestTime(in.at),
			"requestTimeEpoch": in.at.UnixMilli(),
			"resourceId":       resourceID(route),
			"resourcePath":     resource,
			"stage":            in.stage(),
		},
		"body":            body,
		"isBase64Encoded": b64,
	}
}

func domainPrefix(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if i := strings.IndexByte(host, '.'); i > 0 {
		return host[:i]
	}
	return host
}

// resourceID is a made-up id of a route's resource, the same each time.
func resourceID(r *Route) string {
	var h uint32 = 2166136261
	for _, c := range []byte(r.API + r.Path) {
		h = (h ^ uint32(c)) * 16777619
	}
	return strconv.FormatUint(uint64(h), 36)
}

// eventV2 is the Lambda proxy integration's event of payload format 2.0
// (an HTTP API's).
func (in *incoming) eventV2(env *wiring.Env) map[string]any {
	route := &in.found.entry.route
	headers := map[string]string{}
	var cookies []string
	for name, vs := range in.r.Header {
		if strings.EqualFold(name, "Cookie") {
			for _, v := range vs {
				for _, c := range strings.Split(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[strings.ToLower(name)] = strings.Join(vs, ",")
	}
	if in.r.Host != "" {
		headers["host"] = in.r.Host
	}
	query := map[string]string{}
	for name, vs := range in.r.URL.Query() {
		query[name] = strings.Join(vs, ",")
	}
	ev := map[string]any{
		"version":        "2.0",
		"routeKey":       route.Key(),
		"rawPath":        in.r.URL.Path,
		"rawQueryString": in.r.URL.RawQuery,
		"headers":        headers,
		"requestContext": map[string]any{
			"accountId":    env.Account,
			"apiId":        route.APIID,
			"domainName":   in.r.Host,
			"domainPrefix": domainPrefix(in.r.Host),
			"http": map[string]any{
				"method":    in.r.Method,
				"path":      in.r.URL.Path,
				"protocol":  in.r.Proto,
				"sourceIp":  in.sourceIP(),
				"userAgent": in.r.UserAgent(),
			},
			"requestId": in.id,
			"routeKey":  route.Key(),
			"stage":     in.stage(),
			"time":      requestTime(in.at),
			"timeEpoch": in.at.UnixMilli(),
		},
		"isBase64Encoded": false,
	}
	if len(cookies) > 0 {
		ev["cookies"] = cookies
	}
	if len(query) > 0 {
		ev["queryStringParameters"] = query
	}
	if len(in.found.params) > 0 {
		ev["pathParameters"] = in.found.params
	}
	if body, b64 := in.bodyField(); body != nil {
		ev["body"], ev["isBase64Encoded"] = body, b64
	}
	return ev
}

// response is an answer to write.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) write(w http.ResponseWriter) {
	for name, vs := range r.header {
		for _, v := range vs {
			w.Header().Add(name, v)
		}
	}
	w.WriteHeader(r.status)
	w.Write(r.body)
}

// proxyResult is a Lambda proxy integration's answer.
type proxyResult struct {
	StatusCode        *int             `json:"statusCode"`
	Headers           map[string]any   `json:"headers"`
	MultiValueHeaders map[string][]any `json:"multiValueHeaders"`
	Body              *string          `json:"body"`
	IsBase64Encoded   bool             `json:"isBase64Encoded"`
	Cookies           []string         `json:"cookies"`
}

// MalformedError is a function's answer API Gateway cannot map.
type MalformedError struct{ Why string }

func (e *MalformedError) Error() string { return "malformed Lambda proxy response: " + e.Why }

func (p *proxyResult) response() (*response, error) {
	out := &response{status: http.StatusOK, header: http.Header{}}
	if p.StatusCode != nil {
		if *p.StatusCode < 100 || *p.StatusCode > 599 {
			return nil, &MalformedError{fmt.Sprintf("statusCode %d", *p.StatusCode)}
		}
		out.status = *p.StatusCode
	}
	for name, vs := range p.MultiValueHeaders {
		for _, v := range vs {
			out.header.Add(name, scalar(v))
		}
	}
	for name, v := range p.Headers {
		out.header.Set(name, scalar(v))
	}
	for _, c := range p.Cookies {
		out.header.Add("Set-Cookie", c)
	}
	if p.Body != nil {
		out.body = []byte(*p.Body)
		if p.IsBase64Encoded {
			b, err := base64.StdEncoding.DecodeString(*p.Body)
			if err != nil {
				return nil, &MalformedError{"isBase64Encoded, and the body is not base64: " + err.Error()}
			}
			out.body = b
		}
	}
	if out.header.Get("Content-Type") == "" {
		out.header.Set("Content-Type", "application/json")
	}
	return out, nil
}

func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

var v1Keys = map[string]bool{"statusCode": true, "headers": true, "multiValueHeaders": true, "body": true, "isBase64Encoded": true}

// responseV1 maps a REST API's Lambda proxy answer: an object of
// statusCode, headers, multiValueHeaders, body, isBase64Encoded, and no
// other keys.
func responseV1(result []byte) (*response, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(result, &keys); err != nil || keys == nil {
		return nil, &MalformedError{"not a JSON object of statusCode, headers, body: " + truncate(result)}
	}
	var extra []string
	for k := range keys {
		if !v1Keys[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, &MalformedError{"keys " + strings.Join(extra, ", ") + " are not of a proxy response (statusCode, headers, multiValueHeaders, body, isBase64Encoded)"}
	}
	var p proxyResult
	if err := json.Unmarshal(result, &p); err != nil {
		return nil, &MalformedError{err.Error()}
	}
	if p.StatusCode == nil {
		return nil, &MalformedError{"no statusCode"}
	}
	return p.response()
}

// responseV2 maps an HTTP API's Lambda proxy answer (payload format
// 2.0): an object with a statusCode is a response; any other JSON is the
// body of a 200 response.
func responseV2(result []byte) (*response, error) {
	var keys map[string]json.RawMessage
	if json.Unmarshal(result, &keys) == nil && keys != nil {
		if _, ok := keys["statusCode"]; ok {
			var p proxyResult
			if err := json.Unmarshal(result, &p); err != nil {
				return nil, &MalformedError{err.Error()}
			}
			return p.response()
		}
	}
	if !json.Valid(result) {
		return nil, &MalformedError{"not JSON: " + truncate(result)}
	}
	return &response{status: http.StatusOK, header: http.Header{"Content-Type": {"application/json"}}, body: result}, nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// templateRequest is what a mapping template reads of the request.
func (in *incoming) templateRequest(env *wiring.Env) *request {
	route := &in.found.entry.route
	query := map[string]string{}
	for name, vs := range in.r.URL.Query() {
		query[name] = vs[len(vs)-1]
	}
	return &request{
		body: in.body, params: in.found.params, query: query, header: in.r.Header.Get,
		context: map[string]string{
			"requestId": in.id, "extendedRequestId": in.id, "stage": in.stage(), "httpMethod": in.r.Method,
			"resourcePath": route.Path, "path": in.r.URL.Path, "apiId": route.APIID, "accountId": env.Account,
			"requestTimeEpoch": strconv.FormatInt(in.at.UnixMilli(), 10),
		},
	}
}

// parameters are an HTTP API's Step Functions integration's request
// parameters, their values read from the request: $request.body,
// $request.body.name, $request.header.name, $request.querystring.name,
// $request.path.name, $context.requestId; any other value as it is.
func (in *incoming) parameters(params map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for name, v := range params {
		s, err := in.parameter(v)
		if err != nil {
			return nil, fmt.Errorf("request parameter %s: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
}

func (in *incoming) parameter(v string) (string, error) {
	switch {
	case v == "$request.body":
		if len(in.body) == 0 {
			return "{}", nil
		}
		return string(in.body), nil
	case strings.HasPrefix(v, "$request.body."):
		req := &request{body: in.body}
		doc, err := req.json()
		if err != nil {
			return "", err
		}
		got, ok := jsonPath(doc, "$."+strings.TrimPrefix(v, "$request.body."))
		if !ok {
			return "", nil
		}
		if s, ok := got.(string); ok {
			return s, nil
		}
		b, err := json.Marshal(got)
		return string(b), err
	case strings.HasPrefix(v, "$request.header."):
		return in.r.Header.Get(strings.TrimPrefix(v, "$request.header.")), nil
	case strings.HasPrefix(v, "$request.querystring."):
		return in.r.URL.Query().Get(strings.TrimPrefix(v, "$request.querystring.")), nil
	case strings.HasPrefix(v, "$request.path."):
		return in.found.params[strings.TrimPrefix(v, "$request.path.")], nil
	case v == "$context.requestId":
		return in.id, nil
	case strings.HasPrefix(v, "$"):
		return "", errors.New(v + ": not served here ($request.body, $request.body.NAME, $request.header.NAME, $request.querystring.NAME, $request.path.NAME, $context.requestId)")
	}
	return v, nil
}
