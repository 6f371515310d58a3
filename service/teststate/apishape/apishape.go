// Package apishape checks a mocked result of an AWS service integration
// against the output shape of the API operation it stands for, as the
// TestState API does with the fieldValidationMode of a mock.
//
// The shapes are the embedded API models of package awsmodel, the same
// the aws-sdk integration calls with: whole models for the services it
// calls, the output shapes only for the others TestState checks.
//
// The package is pure: no I/O beyond the embedded models, no logging.
package apishape

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

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

// Services lists the services whose shapes are embedded (botocore names),
// sorted.
func Services() []string { return awsmodel.Services() }

// Operation is the output shape of one API operation.
type Operation struct {
	output *awsmodel.Shape
}

// Lookup finds an operation of a service: service is botocore's name
// ("lambda", "stepfunctions", "bedrock-runtime"), operation is matched
// without regard to case ("putItem" finds PutItem). ok is false when the
// service or operation is unknown or the operation has no output.
func Lookup(service, operation string) (*Operation, bool) {
	m, err := awsmodel.Embedded(service)
	if err != nil {
		return nil, false
	}
	want := strings.ToLower(operation)
	for name, op := range m.Operations {
		if op.Output != nil && strings.ToLower(name) == want {
			return &Operation{output: op.Output.Shape}, true
		}
	}
	return nil, false
}

// Shape is the operation's output shape, a shape of the embedded model.
func (op *Operation) Shape() *awsmodel.Shape { return op.output }

// Validate checks a mocked result (a jsonvalue value) against the
// operation's output shape. Fields the shape does not know are accepted,
// as are JSON nulls; the top-level members named in anyJSON may hold any
// value (an optimised integration's decoded payload, such as the Payload
// of lambda:invoke). It returns nil or an *Error.
func (op *Operation) Validate(v any, mode Mode, anyJSON ...string) error {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return ErrNotObject
	}
	c := &checker{mode: mode}
	skip := make(map[string]bool, len(anyJSON))
	for _, k := range anyJSON {
		skip[normKey(k)] = true
	}
	return c.structure(op.output, obj, skip)
}

type checker struct {
	mode Mode
}

func (c *checker) structure(s *awsmodel.Shape, obj *jsonvalue.Object, skip map[string]bool) error {
	if c.mode == Strict {
		for _, req := range s.Required {
			if !hasKey(obj, req) {
				return errRequired(sfnCased(req))
			}
		}
	}
	for key, fv := range obj.All() {
		nk := normKey(key)
		member, ok := memberByKey(s, nk)
		if !ok || skip[nk] {
			continue
		}
		if err := c.value(member.Shape, key, fv); err != nil {
			return err
		}
	}
	return nil
}

// value checks v, the value of the field named field, against s.
func (c *checker) value(s *awsmodel.Shape, field string, v any) error {
	if s == nil || v == nil || s.Document {
		return nil
	}
	switch s.Type {
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
			if err := c.value(s.Member.Shape, field, e); err != nil {
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
			if err := c.value(s.Value.Shape, field, e); err != nil {
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

func checkLength(s *awsmodel.Shape, field string, n int) error {
	switch {
	case s.Min != nil && float64(n) < *s.Min:
		return errField(field, "is smaller than the minimum length")
	case s.Max != nil && float64(n) > *s.Max:
		return errField(field, "exceeds the maximum length")
	}
	return nil
}

func checkRange(s *awsmodel.Shape, field string, f float64) error {
	switch {
	case s.Min != nil && f < *s.Min:
		return errField(field, "is less than the minimum value")
	case s.Max != nil && f > *s.Max:
		return errField(field, "exceeds the maximum value")
	}
	return nil
}

// memberByKey finds the member of a structure whose normalized name (see
// normKey) is key.
func memberByKey(s *awsmodel.Shape, key string) (awsmodel.Member, bool) {
	for _, m := range s.Members {
		if normKey(m.Name) == key {
			return m, true
		}
	}
	return awsmodel.Member{}, false
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
