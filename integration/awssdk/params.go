package awssdk

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/google/uuid"

	"stepwise/failure"
	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

// The request values, checked against the model, that the serializers
// take: a structure is a *structValue, a list []any, a map mapValue, a
// string string, a number jsonvalue.Number, a boolean bool, a blob
// []byte, a timestamp time.Time and a document a document.
type (
	structValue struct {
		shape  *awsmodel.Shape
		fields []field // in the model's member order
	}
	field struct {
		awsmodel.Member
		value any
	}
	mapValue []mapEntry
	mapEntry struct {
		key   string
		value any
	}
	document struct{ v any }
)

// get returns the value of the member named name in the model.
func (s *structValue) get(name string) (any, bool) {
	for _, f := range s.fields {
		if f.Name == name {
			return f.value, true
		}
	}
	return nil, false
}

// maxProblems caps the problems one failure lists.
const maxProblems = 10

// converter turns Parameters into request values, collecting every
// problem.
type converter struct {
	problems []string
	// strict refuses other JSON values for string members, as the
	// optimized integrations do, instead of sending their text.
	strict bool
}

// convertParams checks the Parameters against an operation's input and
// returns its request value, or a task failure listing what is wrong. A
// null member is left out, and so is a missing required one: the service
// answers for it, as it does on AWS.
func convertParams(params any, input *awsmodel.Ref) (*structValue, error) {
	return converter{}.convert(params, input)
}

func (c converter) convert(params any, input *awsmodel.Ref) (*structValue, error) {
	if input == nil {
		input = &awsmodel.Ref{Shape: &awsmodel.Shape{Type: "structure"}}
	}
	if params == nil {
		params = jsonvalue.NewObject(0)
	}
	v := c.value(params, input.Shape, "", false)
	if len(c.problems) > 0 {
		if len(c.problems) > maxProblems {
			c.problems = append(c.problems[:maxProblems], "...")
		}
		return nil, failure.Newf(failure.TaskFailed,
			"The Parameters could not be used to start the Task: [%s]", strings.Join(c.problems, ", "))
	}
	return v.(*structValue), nil
}

func (c *converter) problem(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// mismatch records a value of the wrong type.
func (c *converter) mismatch(path, want string, v any) {
	c.problem("The value of the field '%s' must be %s, not %s", displayPath(path), want, jsonvalue.TypeName(v))
}

func displayPath(path string) string {
	if path == "" {
		return "Parameters"
	}
	return path
}

// value converts v to the request value of shape s; payload says it is
// the whole body of the request.
func (c *converter) value(v any, s *awsmodel.Shape, path string, payload bool) any {
	if s.Document {
		return document{v}
	}
	switch s.Type {
	case "structure":
		return c.structure(v, s, path)
	case "list":
		return c.list(v, s, path)
	case "map":
		return c.mapping(v, s, path)
	case "string":
		if str, ok := v.(string); ok {
			return str
		}
		if c.strict {
			c.mismatch(path, "a string", v)
			return nil
		}
		// AWS sends any other JSON value as its text.
		return jsonvalue.String(v)
	case "integer", "long":
		return c.integer(v, s, path)
	case "float", "double":
		if n, ok := v.(jsonvalue.Number); ok {
			return n
		}
		c.mismatch(path, "a number", v)
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
		c.mismatch(path, "a boolean", v)
	case "blob":
		return c.blob(v, path, payload)
	case "timestamp":
		return c.timestamp(v, path)
	default:
		c.problem("The field '%s' has the type %s, which Step Functions cannot send", displayPath(path), s.Type)
	}
	return nil
}

func (c *converter) structure(v any, s *awsmodel.Shape, path string) any {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		c.mismatch(path, "an object", v)
		return nil
	}
	given := make(map[string]any, obj.Len())
	for k, val := range obj.All() {
		if _, ok := s.Members.Find(k); !ok {
			c.problem("The field '%s' is not supported by Step Functions", join(path, k))
			continue
		}
		given[k] = val
	}
	out := &structValue{shape: s}
	for _, m := range s.Members {
		val, ok := given[awsmodel.Pascal(m.Name)]
		switch {
		case ok && val != nil:
			out.fields = append(out.fields, field{m, c.value(val, m.Shape, join(path, awsmodel.Pascal(m.Name)), s.Payload == m.Name)})
		case m.IdempotencyToken:
			// A random UUID, as the AWS SDKs fill an idempotency
			// token in.
			out.fields = append(out.fields, field{m, uuid.NewString()})
		}
	}
	return out
}

func (c *converter) list(v any, s *awsmodel.Shape, path string) any {
	arr, ok := v.([]any)
	if !ok {
		c.mismatch(path, "an array", v)
		return nil
	}
	out := make([]any, 0, len(arr))
	for i, e := range arr {
		if e == nil {
			continue
		}
		out = append(out, c.value(e, s.Member.Shape, fmt.Sprintf("%s[%d]", displayPath(path), i), false))
	}
	return out
}

func (c *converter) mapping(v any, s *awsmodel.Shape, path string) any {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		c.mismatch(path, "an object", v)
		return nil
	}
	out := make(mapValue, 0, obj.Len())
	for k, val := range obj.All() {
		if val == nil {
			continue
		}
		out = append(out, mapEntry{k, c.value(val, s.Value.Shape, join(path, k), false)})
	}
	return out
}

// intRange is the range of an integer shape.
var intRange = map[string][2]int64{
	"integer": {math.MinInt32, math.MaxInt32},
	"long":    {math.MinInt64, math.MaxInt64},
}

func (c *converter) integer(v any, s *awsmodel.Shape, path string) any {
	n, ok := v.(jsonvalue.Number)
	if !ok {
		c.mismatch(path, "an integer", v)
		return nil
	}
	i, ok := n.Int64()
	r := intRange[s.Type]
	if !ok || i < r[0] || i > r[1] {
		c.problem("The value of the field '%s' must be an integer between %d and %d, not %s", displayPath(path), r[0], r[1], n)
		return nil
	}
	return jsonvalue.NumberFromInt(i)
}

// blob converts binary data: a request body (S3 PutObject's Body, Lambda
// Invoke's Payload) is the JSON text of the value, as AWS sends it; any
// other blob is base64 text.
func (c *converter) blob(v any, path string, payload bool) any {
	if payload {
		return jsonvalue.Marshal(v)
	}
	s, ok := v.(string)
	if !ok {
		c.mismatch(path, "a base64-encoded string", v)
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		c.problem("The value of the field '%s' must be base64-encoded binary data", displayPath(path))
		return nil
	}
	return b
}

// timestamp converts an ISO 8601 date or a number of seconds since the
// epoch.
func (c *converter) timestamp(v any, path string) any {
	switch t := v.(type) {
	case string:
		if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return ts.UTC()
		}
	case jsonvalue.Number:
		if r := t.Rat(); r != nil {
			ns := new(big.Rat).Mul(r, big.NewRat(1e9, 1))
			q := new(big.Int).Quo(ns.Num(), ns.Denom())
			if q.IsInt64() {
				return time.Unix(0, q.Int64()).UTC()
			}
		}
	}
	c.mismatch(path, "an ISO 8601 timestamp", v)
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
