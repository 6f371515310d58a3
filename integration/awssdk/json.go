package awssdk

import (
	"cmp"
	"encoding/base64"
	"net/http"
	"time"

	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

// marshalJSONRPC builds a call of the "json" protocol: POST / with the
// operation in X-Amz-Target and the input as a JSON document.
func marshalJSONRPC(m *awsmodel.Model, op *awsmodel.Operation, in *structValue) *request {
	h := http.Header{}
	h.Set("Content-Type", "application/x-amz-json-"+cmp.Or(m.Metadata.JSONVersion, "1.0"))
	h.Set("X-Amz-Target", m.Metadata.TargetPrefix+"."+op.Name)
	if m.Metadata.AWSQueryCompatible != nil {
		h.Set("X-Amzn-Query-Mode", "true")
	}
	return &request{method: http.MethodPost, path: "/", header: h, body: jsonvalue.Marshal(toJSON(in, nil, in.shape))}
}

// unmarshalJSONRPC reads a "json" protocol response.
func unmarshalJSONRPC(s *awsmodel.Shape, body []byte) (any, error) {
	v, err := parseJSONBody(body)
	if err != nil {
		return nil, err
	}
	var fs outFields
	structFromJSON(&fs, v, s)
	return fs.object(""), nil
}

// parseJSONBody parses a JSON response body; an empty one is {}.
func parseJSONBody(body []byte) (any, error) {
	if len(body) == 0 {
		return jsonvalue.NewObject(0), nil
	}
	return jsonvalue.Parse(body)
}

// toJSON is a request value as JSON: members by their wire names (only
// those sent in the body), blobs in base64, timestamps in seconds since
// the epoch unless the model says otherwise.
func toJSON(v any, ref *awsmodel.Ref, s *awsmodel.Shape) any {
	switch t := v.(type) {
	case *structValue:
		o := jsonvalue.NewObject(len(t.fields))
		for _, f := range t.fields {
			if f.Location == "" {
				o.Set(f.WireName(), toJSON(f.value, f.Ref, f.Shape))
			}
		}
		return o
	case []any:
		a := make([]any, len(t))
		for i, e := range t {
			a[i] = toJSON(e, s.Member, s.Member.Shape)
		}
		return a
	case mapValue:
		o := jsonvalue.NewObject(len(t))
		for _, e := range t {
			o.Set(e.key, toJSON(e.value, s.Value, s.Value.Shape))
		}
		return o
	case []byte:
		return base64Std(t)
	case time.Time:
		format := timestampFormat(ref, s, "unixTimestamp")
		if format == "unixTimestamp" {
			return jsonvalue.Number(epochSeconds(t))
		}
		return formatTime(t, format)
	case document:
		return t.v
	}
	return v
}

// fromJSON is a response value as the task's result: structure members
// in PascalCase, map keys as they are, timestamps in ISO 8601, blobs in
// base64. Members the model does not know are dropped, as the AWS SDKs
// drop them.
func fromJSON(v any, s *awsmodel.Shape) any {
	if v == nil || s.Document {
		return v
	}
	switch s.Type {
	case "structure":
		var fs outFields
		structFromJSON(&fs, v, s)
		return fs.object("")
	case "list":
		arr, _ := v.([]any)
		out := make([]any, 0, len(arr))
		for _, e := range arr {
			out = append(out, fromJSON(e, s.Member.Shape))
		}
		return out
	case "map":
		obj, _ := v.(*jsonvalue.Object)
		out := jsonvalue.NewObject(obj.Len())
		for k, e := range obj.All() {
			out.Set(k, fromJSON(e, s.Value.Shape))
		}
		return out
	case "timestamp":
		var t time.Time
		ok := false
		switch ts := v.(type) {
		case jsonvalue.Number:
			t, ok = parseTime(string(ts))
		case string:
			t, ok = parseTime(ts)
		}
		if !ok {
			return v
		}
		return renderTime(t)
	}
	return v
}

// structFromJSON adds the body members of a JSON object to fs.
func structFromJSON(fs *outFields, v any, s *awsmodel.Shape) {
	obj, _ := v.(*jsonvalue.Object)
	for _, m := range s.Members {
		if m.Location != "" {
			continue
		}
		if val, ok := obj.Get(m.WireName()); ok && val != nil {
			fs.add(m.Name, fromJSON(val, m.Shape))
		}
	}
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
