package http

import (
	"net/url"
	"slices"
	"strings"

	"stepwise/failure"
	"stepwise/jsonvalue"
)

// The request body encodings and array formats of Transform.
const (
	encodingNone       = "NONE"
	encodingURLEncoded = "URL_ENCODED"

	arrayIndices  = "INDICES"
	arrayRepeat   = "REPEAT"
	arrayCommas   = "COMMAS"
	arrayBrackets = "BRACKETS"
)

var (
	methods      = []string{"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}
	arrayFormats = []string{arrayIndices, arrayRepeat, arrayCommas, arrayBrackets}
	paramFields  = []string{"ApiEndpoint", "Method", "Authentication", "Headers", "QueryParameters", "RequestBody", "Transform"}
)

// forbiddenHeaders are the headers an HTTP Task may not set, lower case;
// headers starting with x-forwarded-, x-amz- or x-amzn- are refused too.
var forbiddenHeaders = []string{
	"a-im", "accept-charset", "accept-datetime", "accept-encoding", "cache-control", "connection",
	"content-encoding", "content-md5", "date", "expect", "forwarded", "from", "host", "http2-settings",
	"if-match", "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "max-forwards",
	"origin", "pragma", "proxy-authorization", "referer", "server", "te", "trailer", "transfer-encoding",
	"upgrade", "via", "warning",
}

// header is one header of the task, in the order written.
type header struct{ name, value string }

// params are an HTTP Task's Parameters, checked.
type params struct {
	endpoint      *url.URL
	method        string
	connectionArn string
	headers       []header
	query         url.Values
	body          any // nil with hasBody false: no RequestBody
	hasBody       bool
	urlEncoded    bool
	arrayFormat   string
}

// parseParams checks the Parameters and converts them; a bad one fails
// the task with States.TaskFailed and says which field is wrong.
func parseParams(v any) (*params, error) {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, failuref("The Parameters of an HTTP Task must be an object, not %s", jsonvalue.TypeName(v))
	}
	for name := range obj.All() {
		if !slices.Contains(paramFields, name) {
			return nil, failuref("The field '%s' is not supported by Step Functions", name)
		}
	}
	p := &params{query: url.Values{}, arrayFormat: arrayIndices}
	for _, step := range []func(*jsonvalue.Object) error{
		p.parseEndpoint, p.parseMethod, p.parseAuthentication, p.parseHeaders, p.parseQuery, p.parseTransform,
	} {
		if err := step(obj); err != nil {
			return nil, err
		}
	}
	p.body, p.hasBody = obj.Get("RequestBody")
	return p, nil
}

func (p *params) parseEndpoint(obj *jsonvalue.Object) error {
	s, err := requiredString(obj, "ApiEndpoint")
	if err != nil {
		return err
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return failuref("The field 'ApiEndpoint' must be an https:// or http:// URL: '%s'", s)
	}
	p.endpoint = u
	return nil
}

func (p *params) parseMethod(obj *jsonvalue.Object) error {
	s, err := requiredString(obj, "Method")
	if err != nil {
		return err
	}
	if !slices.Contains(methods, s) {
		return failuref("The field 'Method' must be one of %s, not '%s'", strings.Join(methods, ", "), s)
	}
	p.method = s
	return nil
}

// parseAuthentication reads {"ConnectionArn": ...}. AWS requires it; a
// local engine runs without it, with no authorization.
func (p *params) parseAuthentication(obj *jsonvalue.Object) error {
	v, ok := obj.Get("Authentication")
	if !ok {
		return nil
	}
	auth, isObject := v.(*jsonvalue.Object)
	if !isObject {
		return failuref("The field 'Authentication' must be an object, not %s", jsonvalue.TypeName(v))
	}
	for name := range auth.All() {
		if name != "ConnectionArn" {
			return failuref("The field 'Authentication.%s' is not supported by Step Functions", name)
		}
	}
	arn, err := requiredString(auth, "ConnectionArn")
	if err != nil {
		return failuref("The field 'Authentication.ConnectionArn' must be a connection ARN string")
	}
	p.connectionArn = arn
	return nil
}

func (p *params) parseHeaders(obj *jsonvalue.Object) error {
	v, ok := obj.Get("Headers")
	if !ok {
		return nil
	}
	h, isObject := v.(*jsonvalue.Object)
	if !isObject {
		return failuref("The field 'Headers' must be an object, not %s", jsonvalue.TypeName(v))
	}
	for name, value := range h.All() {
		if err := checkHeaderName(name); err != nil {
			return err
		}
		s, ok := scalarText(value)
		if !ok {
			return failuref("The header 'Headers.%s' must be a string, not %s", name, jsonvalue.TypeName(value))
		}
		if !validHeaderValue(s) {
			return failuref("The header 'Headers.%s' has a line break or NUL in its value", name)
		}
		p.headers = append(p.headers, header{name, s})
	}
	return nil
}

func checkHeaderName(name string) error {
	lower := strings.ToLower(name)
	if slices.Contains(forbiddenHeaders, lower) || strings.HasPrefix(lower, "x-forwarded-") ||
		strings.HasPrefix(lower, "x-amz-") || strings.HasPrefix(lower, "x-amzn-") {
		return failuref("The header '%s' cannot be set in an HTTP Task", name)
	}
	if !validHeaderName(name) {
		return failuref("The header name '%s' is not a valid HTTP header name", name)
	}
	return nil
}

// validHeaderName reports whether name is an HTTP token.
func validHeaderName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	})
}

// validHeaderValue reports whether a header value can be sent.
func validHeaderValue(value string) bool {
	return !strings.ContainsAny(value, "\r\n\x00")
}

// parseQuery reads QueryParameters: each value a string (or number or
// boolean) or an array of them, which repeats the key.
func (p *params) parseQuery(obj *jsonvalue.Object) error {
	v, ok := obj.Get("QueryParameters")
	if !ok {
		return nil
	}
	q, isObject := v.(*jsonvalue.Object)
	if !isObject {
		return failuref("The field 'QueryParameters' must be an object, not %s", jsonvalue.TypeName(v))
	}
	for name, value := range q.All() {
		items, isArray := value.([]any)
		if !isArray {
			items = []any{value}
		}
		for _, item := range items {
			s, ok := scalarText(item)
			if !ok {
				return failuref("The query parameter 'QueryParameters.%s' must be a string or an array of strings, not %s", name, jsonvalue.TypeName(item))
			}
			p.query.Add(name, s)
		}
	}
	return nil
}

// parseTransform reads {"RequestBodyEncoding": "NONE" | "URL_ENCODED",
// "RequestEncodingOptions": {"ArrayFormat": ...}}.
func (p *params) parseTransform(obj *jsonvalue.Object) error {
	v, ok := obj.Get("Transform")
	if !ok {
		return nil
	}
	t, isObject := v.(*jsonvalue.Object)
	if !isObject {
		return failuref("The field 'Transform' must be an object, not %s", jsonvalue.TypeName(v))
	}
	for name := range t.All() {
		if name != "RequestBodyEncoding" && name != "RequestEncodingOptions" {
			return failuref("The field 'Transform.%s' is not supported by Step Functions", name)
		}
	}
	if enc, ok := t.Get("RequestBodyEncoding"); ok {
		switch enc {
		case encodingNone:
		case encodingURLEncoded:
			p.urlEncoded = true
		default:
			return failuref("The field 'Transform.RequestBodyEncoding' must be %s or %s, not %s", encodingNone, encodingURLEncoded, jsonvalue.String(enc))
		}
	}
	opts, ok := t.Get("RequestEncodingOptions")
	if !ok {
		return nil
	}
	o, isObject := opts.(*jsonvalue.Object)
	if !isObject {
		return failuref("The field 'Transform.RequestEncodingOptions' must be an object, not %s", jsonvalue.TypeName(opts))
	}
	for name, format := range o.All() {
		s, isString := format.(string)
		switch {
		case name != "ArrayFormat":
			return failuref("The field 'Transform.RequestEncodingOptions.%s' is not supported by Step Functions", name)
		case !isString || !slices.Contains(arrayFormats, s):
			return failuref("The field 'Transform.RequestEncodingOptions.ArrayFormat' must be one of %s, not %s", strings.Join(arrayFormats, ", "), jsonvalue.String(format))
		}
		p.arrayFormat = s
	}
	return nil
}

// requiredString returns a member that must be a string.
func requiredString(obj *jsonvalue.Object, name string) (string, error) {
	v, ok := obj.Get(name)
	if !ok {
		return "", failuref("The field '%s' is required but was missing", name)
	}
	s, isString := v.(string)
	if !isString {
		return "", failuref("The field '%s' must be a string, not %s", name, jsonvalue.TypeName(v))
	}
	return s, nil
}

// scalarText is the text of a string, number or boolean as a header,
// query or form value.
func scalarText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case jsonvalue.Number:
		return string(v), true
	case bool:
		if v {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

func failuref(format string, args ...any) error {
	return failure.Newf(failure.TaskFailed, format, args...)
}
