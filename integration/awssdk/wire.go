package awssdk

import (
	"cmp"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

// request is an API call as the protocol puts it on the wire, before it
// is addressed and signed.
type request struct {
	method string
	// path is the escaped path, query the query string.
	path  string
	query url.Values
	// hostPrefix goes before AWS's own host name ("data.").
	hostPrefix string
	header     http.Header
	body       []byte
}

// response is a service's answer.
type response struct {
	status int
	header http.Header
	body   []byte
	// stream is the body of a successful answer sent for its payload
	// (OpenPayload), left unread; body is then empty.
	stream io.ReadCloser
}

// marshal builds the request of an operation for the model's protocol.
func marshal(m *awsmodel.Model, op *awsmodel.Operation, in *structValue) (*request, error) {
	var (
		r   *request
		err error
	)
	switch p := m.Protocol(); p {
	case "json":
		r = marshalJSONRPC(m, op, in)
	case "query", "ec2":
		r = marshalQuery(m, op, in, p == "ec2")
	case "rest-json", "rest-xml":
		r, err = marshalREST(m, op, in, p == "rest-xml")
	default:
		return nil, fmt.Errorf("the protocol %q is not supported", p)
	}
	if err != nil {
		return nil, err
	}
	if err := addHostPrefix(r, op, in); err != nil {
		return nil, err
	}
	addChecksum(r, op, in)
	return r, nil
}

// unmarshal turns a successful response into the task's result.
func unmarshal(m *awsmodel.Model, op *awsmodel.Operation, resp *response) (any, error) {
	out := &awsmodel.Ref{Shape: &awsmodel.Shape{Type: "structure"}}
	if op.Output != nil {
		out = op.Output
	}
	switch p := m.Protocol(); p {
	case "json":
		return unmarshalJSONRPC(out.Shape, resp.body)
	case "query", "ec2":
		return unmarshalQuery(out, resp.body, p == "ec2")
	case "rest-json", "rest-xml":
		return unmarshalREST(out.Shape, resp, p == "rest-xml")
	default:
		return nil, fmt.Errorf("the protocol %q is not supported", p)
	}
}

// addHostPrefix fills in the operation's host prefix ("{AccountId}.").
func addHostPrefix(r *request, op *awsmodel.Operation, in *structValue) error {
	if op.Endpoint == nil || op.Endpoint.HostPrefix == "" {
		return nil
	}
	prefix := op.Endpoint.HostPrefix
	for _, f := range in.fields {
		if f.HostLabel {
			prefix = strings.ReplaceAll(prefix, "{"+f.Name+"}", scalarText(f.value, "", ""))
		}
	}
	if strings.Contains(prefix, "{") {
		return fmt.Errorf("the host prefix %q needs a member the Parameters do not give", op.Endpoint.HostPrefix)
	}
	r.hostPrefix = prefix
	return nil
}

// timestampFormat is the format of a timestamp: the member's, the
// shape's, or the location's default.
func timestampFormat(ref *awsmodel.Ref, s *awsmodel.Shape, def string) string {
	if ref != nil && ref.TimestampFormat != "" {
		return ref.TimestampFormat
	}
	return cmp.Or(s.TimestampFormat, def)
}

// formatTime writes a request timestamp.
func formatTime(t time.Time, format string) string {
	switch format {
	case "unixTimestamp":
		return epochSeconds(t)
	case "rfc822":
		return t.UTC().Format(http.TimeFormat)
	default:
		if t.Nanosecond() == 0 {
			return t.UTC().Format("2006-01-02T15:04:05Z")
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
}

// epochSeconds is t in seconds since the epoch, milliseconds as a
// fraction.
func epochSeconds(t time.Time) string {
	return big.NewRat(t.UnixMilli(), 1000).FloatString(3)
}

// parseTime reads a response timestamp in any of the formats services
// use: ISO 8601, RFC 822 (HTTP dates) or seconds since the epoch.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", http.TimeFormat, time.RFC1123, time.RFC1123Z} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	if r, ok := new(big.Rat).SetString(s); ok {
		ns := new(big.Rat).Mul(r, big.NewRat(1e9, 1))
		q := new(big.Int).Quo(ns.Num(), ns.Denom())
		if q.IsInt64() {
			return time.Unix(0, q.Int64()), true
		}
	}
	return time.Time{}, false
}

// renderTime is a timestamp as AWS's SDK integrations render it: ISO
// 8601 in UTC the way Java's Instant prints it (2024-04-10T18:55:26Z,
// 2024-04-10T18:55:26.120Z: the fraction in groups of three digits).
func renderTime(t time.Time) string {
	t = t.UTC()
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return t.Format("2006-01-02T15:04:05Z")
	case ns%1e6 == 0:
		return t.Format("2006-01-02T15:04:05.000Z")
	case ns%1e3 == 0:
		return t.Format("2006-01-02T15:04:05.000000Z")
	default:
		return t.Format("2006-01-02T15:04:05.000000000Z")
	}
}

// scalarText writes a scalar request value as text (query strings,
// headers, URI labels, XML).
func scalarText(v any, tsFormat, def string) string {
	switch t := v.(type) {
	case string:
		return t
	case jsonvalue.Number:
		return string(t)
	case bool:
		return strconv.FormatBool(t)
	case []byte:
		return base64Std(t)
	case time.Time:
		return formatTime(t, cmp.Or(tsFormat, def))
	case document:
		return jsonvalue.String(t.v)
	}
	return ""
}

// scalarValue reads a scalar response value from text.
func scalarValue(text string, s *awsmodel.Shape) (any, bool) {
	switch s.Type {
	case "integer", "long", "float", "double":
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return nil, false
		}
		return jsonvalue.Number(text), true
	case "boolean":
		b, err := strconv.ParseBool(text)
		return b, err == nil
	case "timestamp":
		t, ok := parseTime(text)
		if !ok {
			return nil, false
		}
		return renderTime(t), true
	}
	return text, true
}

// outFields collects the members of a result structure.
type outFields []outField

type outField struct {
	name  string
	value any
}

func (fs *outFields) add(name string, v any) {
	*fs = append(*fs, outField{awsmodel.Pascal(name), v})
}

// object is the result structure: members in alphabetical order, as AWS
// lists them, with the payload member last.
func (fs outFields) object(payload string) *jsonvalue.Object {
	payload = awsmodel.Pascal(payload)
	slices.SortStableFunc(fs, func(a, b outField) int {
		if (a.name == payload) != (b.name == payload) {
			if a.name == payload {
				return 1
			}
			return -1
		}
		return strings.Compare(a.name, b.name)
	})
	o := jsonvalue.NewObject(len(fs))
	for _, f := range fs {
		o.Set(f.name, f.value)
	}
	return o
}
