package awssdk

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"stepwise/integration/awssdk/awsmodel"
)

// marshalQuery builds a call of the "query" protocol (SNS, older SQS) or
// its EC2 variant: a form POST of Action, Version and the input
// flattened into dotted names (Attributes.entry.1.key, Tags.member.1.Key;
// EC2: Filter.1.Name).
func marshalQuery(m *awsmodel.Model, op *awsmodel.Operation, in *structValue, ec2 bool) *request {
	q := url.Values{}
	q.Set("Action", op.Name)
	q.Set("Version", m.Metadata.APIVersion)
	qs := queryWriter{values: q, ec2: ec2}
	qs.structure("", in)
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	return &request{method: http.MethodPost, path: "/", header: h, body: []byte(q.Encode())}
}

type queryWriter struct {
	values url.Values
	ec2    bool
}

func (w queryWriter) value(prefix string, v any, ref *awsmodel.Ref) {
	switch t := v.(type) {
	case *structValue:
		w.structure(prefix, t)
	case []any:
		w.list(prefix, t, ref)
	case mapValue:
		w.mapping(prefix, t, ref)
	default:
		w.values.Set(prefix, scalarText(v, timestampFormat(ref, ref.Shape, ""), "iso8601"))
	}
}

func (w queryWriter) structure(prefix string, sv *structValue) {
	for _, f := range sv.fields {
		w.value(dotted(prefix, w.name(f.Member)), f.value, f.Ref)
	}
}

// name is a member's name in the query.
func (w queryWriter) name(m awsmodel.Member) string {
	if !w.ec2 {
		return m.WireName()
	}
	if m.QueryName != "" {
		return m.QueryName
	}
	return awsmodel.Pascal(m.WireName())
}

func (w queryWriter) list(prefix string, items []any, ref *awsmodel.Ref) {
	member := ref.Shape.Member
	if len(items) == 0 {
		if !w.ec2 {
			w.values.Set(prefix, "")
		}
		return
	}
	listPrefix := prefix
	switch {
	case w.ec2:
	case flattened(ref):
		if member.LocationName != "" {
			i := strings.LastIndexByte(prefix, '.')
			listPrefix = prefix[:i+1] + member.LocationName
		}
	default:
		listPrefix = prefix + "." + cmpName(member.LocationName, "member")
	}
	for i, e := range items {
		w.value(listPrefix+"."+strconv.Itoa(i+1), e, member)
	}
}

func (w queryWriter) mapping(prefix string, entries mapValue, ref *awsmodel.Ref) {
	s := ref.Shape
	if !flattened(ref) {
		prefix += ".entry"
	}
	for i, e := range entries {
		p := fmt.Sprintf("%s.%d.", prefix, i+1)
		w.values.Set(p+cmpName(s.Key.LocationName, "key"), e.key)
		w.value(p+cmpName(s.Value.LocationName, "value"), e.value, s.Value)
	}
}

func dotted(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// unmarshalQuery reads a query protocol response: the output members
// inside <OperationResponse><OperationResult> (EC2: <OperationResponse>).
func unmarshalQuery(out *awsmodel.Ref, body []byte, ec2 bool) (any, error) {
	var fs outFields
	if len(body) == 0 {
		return fs.object(""), nil
	}
	root, err := parseXML(body)
	if err != nil {
		return nil, err
	}
	n := root
	if !ec2 && out.ResultWrapper != "" {
		if n = root.child(out.ResultWrapper); n == nil {
			return fs.object(""), nil
		}
	}
	structFromXML(&fs, n, out.Shape)
	return fs.object(""), nil
}
