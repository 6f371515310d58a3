// Package apishape checks a mocked result of an AWS service integration
// against the output shape of the API operation it stands for, as the
// TestState API does with the fieldValidationMode of a mock.
//
// The shapes come from botocore's service models (Apache-2.0, Amazon.com,
// Inc.), reduced by gen.go to what validation needs and embedded one file
// per service; a service's file is decoded the first time it is used.
//
// The package is pure: no I/O beyond the embedded files, no logging.
package apishape

//go:generate sh -c "go run gen.go -botocore \"$(python3 -c 'import botocore,os;print(os.path.dirname(botocore.__file__))')/data\""

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"stepwise/jsonvalue"
)

//go:embed shapes/*.json.gz
var files embed.FS

// Mode is how strictly a result is checked.
type Mode int

const (
	// Strict checks that every required field is present and that every
	// present field conforms to the shape.
	Strict Mode = iota
	// Present checks only the fields that are present.
	Present
)

// Error is a result that does not conform to its shape. Message is the
// whole text of the ValidationException TestState returns.
type Error struct {
	Message string
}

func (e *Error) Error() string { return e.Message }

// Messages, one constructor each. The "must be", "is not an expected
// value", "is smaller than the minimum length", "is less than the minimum
// value" and "exceeds the maximum value" wordings are AWS's (recorded);
// the others follow them.
func errField(field, why string) *Error {
	return &Error{Message: fmt.Sprintf("Mock result schema validation error: Field '%s' %s", field, why)}
}

func errRequired(field string) *Error {
	return &Error{Message: fmt.Sprintf("Mock result schema validation error: Required field '%s' is missing", field)}
}

// ErrNotObject is the error for a result that is not a JSON object where
// the operation returns a structure.
var ErrNotObject = &Error{Message: "Mocked result must be a JSON object."}

type shape struct {
	T        string            `json:"t"`
	Members  map[string]string `json:"m"`
	List     string            `json:"l"`
	Value    string            `json:"v"`
	Required []string          `json:"r"`
	Enum     []string          `json:"e"`
	Min      *float64          `json:"min"`
	Max      *float64          `json:"max"`

	// byKey maps a normalized member name (see normKey) to the member.
	byKey map[string]string
}

type model struct {
	Ops    map[string]string `json:"ops"`
	Shapes map[string]*shape `json:"shapes"`

	opsByKey map[string]string // lower-case operation name → output shape
}

var models sync.Map // service name → *model, or error

func load(service string) (*model, error) {
	if v, ok := models.Load(service); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*model), nil
	}
	m, err := decode(service)
	if err != nil {
		models.Store(service, err)
		return nil, err
	}
	v, _ := models.LoadOrStore(service, m)
	return v.(*model), nil
}

func decode(service string) (*model, error) {
	raw, err := files.ReadFile("shapes/" + service + ".json.gz")
	if err != nil {
		return nil, err
	}
	z, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(z)
	if err != nil {
		return nil, err
	}
	m := &model{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("apishape: %s: %w", service, err)
	}
	m.opsByKey = make(map[string]string, len(m.Ops))
	for name, out := range m.Ops {
		m.opsByKey[strings.ToLower(name)] = out
	}
	for _, s := range m.Shapes {
		if s.T != "structure" {
			continue
		}
		s.byKey = make(map[string]string, len(s.Members))
		for name, ref := range s.Members {
			s.byKey[normKey(name)] = ref
		}
	}
	return m, nil
}

// Services lists the services whose shapes are embedded (botocore names),
// sorted.
func Services() []string { return slices.Clone(services()) }

var services = sync.OnceValue(func() []string {
	entries, _ := files.ReadDir("shapes")
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".json.gz"))
	}
	return out
})

// Operation is the output shape of one API operation.
type Operation struct {
	m      *model
	output string
}

// Lookup finds an operation of a service: service is botocore's name
// ("lambda", "stepfunctions", "bedrock-runtime"), operation is matched
// without regard to case ("putItem" finds PutItem). ok is false when the
// service or operation is unknown or the operation has no output.
func Lookup(service, operation string) (*Operation, bool) {
	m, err := load(service)
	if err != nil {
		return nil, false
	}
	out, ok := m.opsByKey[strings.ToLower(operation)]
	if !ok {
		return nil, false
	}
	return &Operation{m: m, output: out}, true
}

// Validate checks a mocked result (a jsonvalue value) against the
// operation's output shape. Fields the shape does not know are accepted,
// as are JSON nulls; the top-level members named in anyJSON may hold any
// value (an optimised integration's decoded payload, such as the Payload
// of lambda:invoke). It returns nil or an *Error.
func (op *Operation) Validate(v any, mode Mode, anyJSON ...string) error {
	s := op.m.Shapes[op.output]
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return ErrNotObject
	}
	c := &checker{m: op.m, mode: mode}
	skip := make(map[string]bool, len(anyJSON))
	for _, k := range anyJSON {
		skip[normKey(k)] = true
	}
	return c.structure(s, obj, skip)
}

type checker struct {
	m    *model
	mode Mode
}

func (c *checker) structure(s *shape, obj *jsonvalue.Object, skip map[string]bool) error {
	if c.mode == Strict {
		for _, req := range s.Required {
			if !hasKey(obj, req) {
				return errRequired(sfnCased(req))
			}
		}
	}
	for key, fv := range obj.All() {
		nk := normKey(key)
		ref, ok := s.byKey[nk]
		if !ok || skip[nk] {
			continue
		}
		if err := c.value(c.m.Shapes[ref], key, fv); err != nil {
			return err
		}
	}
	return nil
}

// value checks v, the value of the field named field, against s.
func (c *checker) value(s *shape, field string, v any) error {
	if s == nil || v == nil {
		return nil
	}
	switch s.T {
	case "document":
		return nil
	case "structure":
		obj, ok := v.(*jsonvalue.Object)
		if !ok {
			return errField(field, "must be an object")
		}
		return c.structure(s, obj, nil)
	case "list":
		arr, ok := v.([]any)
		if !ok {
			return errField(field, "must be an array")
		}
		if err := checkLength(s, field, len(arr)); err != nil {
			return err
		}
		for _, e := range arr {
			if err := c.value(c.m.Shapes[s.List], field, e); err != nil {
				return err
			}
		}
		return nil
	case "map":
		obj, ok := v.(*jsonvalue.Object)
		if !ok {
			return errField(field, "must be an object")
		}
		for _, e := range obj.All() {
			if err := c.value(c.m.Shapes[s.Value], field, e); err != nil {
				return err
			}
		}
		return nil
	case "string":
		str, ok := v.(string)
		if !ok {
			return errField(field, "must be a string")
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			return errField(field, "is not an expected value")
		}
		return checkLength(s, field, utf8.RuneCountInString(str))
	case "blob":
		str, ok := v.(string)
		if !ok {
			return errField(field, "must be a string")
		}
		return checkLength(s, field, len(str))
	case "timestamp":
		switch v.(type) {
		case string, jsonvalue.Number:
			return nil
		}
		return errField(field, "must be a string")
	case "integer", "long":
		n, ok := v.(jsonvalue.Number)
		if !ok || !n.IsInteger() {
			return errField(field, "must be a number")
		}
		return checkRange(s, field, n.Float64())
	case "float", "double":
		n, ok := v.(jsonvalue.Number)
		if !ok {
			return errField(field, "must be a number")
		}
		return checkRange(s, field, n.Float64())
	case "boolean":
		if _, ok := v.(bool); !ok {
			return errField(field, "must be a boolean")
		}
	}
	return nil
}

func checkLength(s *shape, field string, n int) error {
	switch {
	case s.Min != nil && float64(n) < *s.Min:
		return errField(field, "is smaller than the minimum length")
	case s.Max != nil && float64(n) > *s.Max:
		return errField(field, "exceeds the maximum length")
	}
	return nil
}

func checkRange(s *shape, field string, f float64) error {
	switch {
	case s.Min != nil && f < *s.Min:
		return errField(field, "is less than the minimum value")
	case s.Max != nil && f > *s.Max:
		return errField(field, "exceeds the maximum value")
	}
	return nil
}

func hasKey(obj *jsonvalue.Object, member string) bool {
	want := normKey(member)
	for _, k := range obj.Keys() {
		if normKey(k) == want {
			return true
		}
	}
	return false
}

// normKey folds a member name the way Step Functions' names and the API
// model's names agree: Step Functions writes members in PascalCase
// ("executionArn" is "ExecutionArn", "SSEKMSKeyId" may be "SsekmsKeyId"),
// so names are compared without case or underscores.
func normKey(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}

// sfnCased is a member name as Step Functions writes it: PascalCase, with
// underscores dropped and the letter after each capitalized.
func sfnCased(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up {
			b.WriteString(strings.ToUpper(string(r)))
			up = false
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
