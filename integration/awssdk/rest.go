package awssdk

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"stepwise/failure"
	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

// marshalREST builds a call of the rest-json or rest-xml protocol: the
// method and URI of the operation with its labels filled in, members in
// the query string and headers, and the payload member or the remaining
// members as the body.
func marshalREST(m *awsmodel.Model, op *awsmodel.Operation, in *structValue, isXML bool) (*request, error) {
	uri, static, _ := strings.Cut(op.HTTP.RequestURI, "?")
	q, _ := url.ParseQuery(static)
	r := &request{method: op.HTTP.Method, query: q, header: http.Header{}}
	path, err := expandURI(uri, in)
	if err != nil {
		return nil, err
	}
	r.path = path
	for _, f := range in.fields {
		switch f.Location {
		case "querystring":
			addQueryMember(r.query, f)
		case "header":
			r.header.Set(f.WireName(), headerText(f))
		case "headers":
			for _, e := range f.value.(mapValue) {
				r.header.Set(f.WireName()+e.key, scalarText(e.value, "", ""))
			}
		}
	}
	if isXML {
		restXMLBody(r, m, op, in)
	} else {
		restJSONBody(r, in)
	}
	return r, nil
}

// expandURI fills in the URI labels: {Name} escaped as a path segment,
// {Name+} keeping its slashes. A label the Parameters do not give fails
// the task, as the AWS SDKs refuse to send the request.
func expandURI(uri string, in *structValue) (string, error) {
	var b strings.Builder
	for {
		open := strings.IndexByte(uri, '{')
		if open < 0 {
			b.WriteString(uri)
			return b.String(), nil
		}
		end := strings.IndexByte(uri[open:], '}')
		if end < 0 {
			return "", fmt.Errorf("bad request URI %q", uri)
		}
		b.WriteString(uri[:open])
		label := uri[open+1 : open+end]
		name, greedy := strings.CutSuffix(label, "+")
		value, err := labelValue(name, in)
		if err != nil {
			return "", err
		}
		b.WriteString(escapePath(value, greedy))
		uri = uri[open+end+1:]
	}
}

// labelValue is the text of the member bound to a URI label.
func labelValue(label string, in *structValue) (string, error) {
	for _, f := range in.fields {
		if f.Location == "uri" && f.WireName() == label {
			if s := scalarText(f.value, timestampFormat(f.Ref, f.Shape, ""), "iso8601"); s != "" {
				return s, nil
			}
			return "", failure.Newf(failure.TaskFailed,
				"The Parameters could not be used to start the Task: [The field '%s' must not be empty]", awsmodel.Pascal(f.Name))
		}
	}
	for _, m := range in.shape.Members {
		if m.Location == "uri" && m.WireName() == label {
			label = awsmodel.Pascal(m.Name)
		}
	}
	return "", failure.Newf(failure.TaskFailed,
		"The Parameters could not be used to start the Task: [The field '%s' is required but was missing]", label)
}

// escapePath escapes a URI label per RFC 3986, keeping "/" in greedy
// labels.
func escapePath(s string, greedy bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) || (greedy && c == '/') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// addQueryMember adds a query string member: a scalar, a list (repeated)
// or a map (one parameter per key).
func addQueryMember(q url.Values, f field) {
	format := timestampFormat(f.Ref, f.Shape, "iso8601")
	switch t := f.value.(type) {
	case []any:
		for _, e := range t {
			q.Add(f.WireName(), scalarText(e, format, ""))
		}
	case mapValue:
		for _, e := range t {
			if list, ok := e.value.([]any); ok {
				for _, item := range list {
					q.Add(e.key, scalarText(item, "", ""))
				}
				continue
			}
			q.Set(e.key, scalarText(e.value, "", ""))
		}
	default:
		q.Set(f.WireName(), scalarText(f.value, format, ""))
	}
}

// headerText is a header member's value: timestamps as HTTP dates, JSON
// values in base64, lists comma-separated.
func headerText(f field) string {
	if f.JSONValue {
		if d, ok := f.value.(string); ok {
			return base64.StdEncoding.EncodeToString([]byte(d))
		}
	}
	format := timestampFormat(f.Ref, f.Shape, "rfc822")
	if list, ok := f.value.([]any); ok {
		parts := make([]string, len(list))
		for i, e := range list {
			parts[i] = scalarText(e, format, "")
		}
		return strings.Join(parts, ",")
	}
	return scalarText(f.value, format, "")
}

// bodyFields are the members sent in the body: those without a location.
func bodyFields(in *structValue) []field {
	var out []field
	for _, f := range in.fields {
		if f.Location == "" {
			out = append(out, f)
		}
	}
	return out
}

// hasBodyMembers reports whether a shape has members that go in the body.
func hasBodyMembers(s *awsmodel.Shape) bool {
	for _, m := range s.Members {
		if m.Location == "" {
			return true
		}
	}
	return false
}

// rawPayload sets a blob or string payload as the body.
func rawPayload(r *request, v any) {
	switch t := v.(type) {
	case []byte:
		r.body = t
	case string:
		r.body = []byte(t)
	}
}

func restJSONBody(r *request, in *structValue) {
	if p := in.shape.Payload; p != "" {
		v, ok := in.get(p)
		if !ok {
			return
		}
		if sv, isStruct := v.(*structValue); isStruct {
			r.body = jsonvalue.Marshal(toJSON(sv, nil, sv.shape))
			r.header.Set("Content-Type", "application/json")
			return
		}
		if d, isDoc := v.(document); isDoc {
			r.body = jsonvalue.Marshal(d.v)
			r.header.Set("Content-Type", "application/json")
			return
		}
		rawPayload(r, v)
		return
	}
	if len(bodyFields(in)) > 0 || hasBodyMembers(in.shape) {
		r.body = jsonvalue.Marshal(toJSON(in, nil, in.shape))
		r.header.Set("Content-Type", "application/json")
	}
}

func restXMLBody(r *request, m *awsmodel.Model, op *awsmodel.Operation, in *structValue) {
	var w xmlWriter
	if p := in.shape.Payload; p != "" {
		v, ok := in.get(p)
		if !ok {
			return
		}
		mem, _ := in.shape.Members.Named(p)
		sv, isStruct := v.(*structValue)
		if !isStruct {
			rawPayload(r, v)
			return
		}
		ns := mem.XMLNamespace
		if ns == nil {
			ns = sv.shape.XMLNamespace
		}
		w.element(cmpName(mem.LocationName, p), sv, mem.Ref, sv.shape, ns)
	} else {
		if len(bodyFields(in)) == 0 {
			return
		}
		ns := op.Input.XMLNamespace
		if ns == nil && m.Metadata.XMLNamespace != "" {
			ns = &awsmodel.XMLNamespace{URI: m.Metadata.XMLNamespace}
		}
		w.element(cmpName(op.Input.LocationName, op.Input.ShapeName), in, op.Input, in.shape, ns)
	}
	r.body = w.b.Bytes()
	r.header.Set("Content-Type", "application/xml")
}

// unmarshalREST reads a rest-json or rest-xml response: the status code,
// header members, and the payload member or the body's members.
func unmarshalREST(s *awsmodel.Shape, resp *response, isXML bool) (any, error) {
	var fs outFields
	for _, m := range s.Members {
		switch m.Location {
		case "statusCode":
			fs.add(m.Name, jsonvalue.NumberFromInt(int64(resp.status)))
		case "header":
			if v, ok := headerValue(resp.header, m); ok {
				fs.add(m.Name, v)
			}
		case "headers":
			fs.add(m.Name, prefixedHeaders(resp.header, m.WireName()))
		}
	}
	if err := restBody(&fs, s, resp.body, isXML); err != nil {
		return nil, err
	}
	return fs.object(s.Payload), nil
}

// restBody adds the members the body carries.
func restBody(fs *outFields, s *awsmodel.Shape, body []byte, isXML bool) error {
	if p := s.Payload; p != "" {
		mem, _ := s.Members.Named(p)
		if mem.Shape.Type != "structure" && !mem.Shape.Document {
			// A blob or string payload is the body as text (S3 GetObject's
			// Body, Lambda Invoke's Payload).
			fs.add(p, string(body))
			return nil
		}
		if len(body) == 0 {
			return nil
		}
		v, err := payloadValue(mem, body, isXML)
		if err != nil {
			return err
		}
		fs.add(p, v)
		return nil
	}
	if len(body) == 0 || !hasBodyMembers(s) {
		return nil
	}
	if isXML {
		root, err := parseXML(body)
		if err != nil {
			return err
		}
		structFromXML(fs, root, s)
		return nil
	}
	v, err := parseJSONBody(body)
	if err != nil {
		return err
	}
	structFromJSON(fs, v, s)
	return nil
}

// payloadValue decodes a structure or document payload.
func payloadValue(mem awsmodel.Member, body []byte, isXML bool) (any, error) {
	if isXML {
		root, err := parseXML(body)
		if err != nil {
			return nil, err
		}
		return fromXML(root, mem.Shape), nil
	}
	v, err := jsonvalue.Parse(body)
	if err != nil {
		return nil, err
	}
	return fromJSON(v, mem.Shape), nil
}

// headerValue reads a header member.
func headerValue(h http.Header, m awsmodel.Member) (any, bool) {
	vals := h.Values(m.WireName())
	if len(vals) == 0 {
		return nil, false
	}
	text := strings.Join(vals, ",")
	switch {
	case m.JSONValue:
		raw, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, false
		}
		v, err := jsonvalue.Parse(raw)
		return v, err == nil
	case m.Shape.Type == "list":
		parts := strings.Split(text, ",")
		out := make([]any, 0, len(parts))
		for _, p := range parts {
			if v, ok := scalarValue(strings.TrimSpace(p), m.Shape.Member.Shape); ok {
				out = append(out, v)
			}
		}
		return out, true
	}
	return scalarValue(text, m.Shape)
}

// prefixedHeaders is a "headers" member: every header with the prefix,
// keyed by the rest of its name in lower case (S3's x-amz-meta-*). It is
// an empty object when there is none, as AWS returns it.
func prefixedHeaders(h http.Header, prefix string) *jsonvalue.Object {
	out := jsonvalue.NewObject(0)
	prefix = strings.ToLower(prefix)
	names := slices.Sorted(maps.Keys(h))
	for _, name := range names {
		lower := strings.ToLower(name)
		if rest, ok := strings.CutPrefix(lower, prefix); ok && rest != "" && len(h[name]) > 0 {
			out.Set(rest, h[name][0])
		}
	}
	return out
}
