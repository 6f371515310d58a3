package dynamodb

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stepwise/failure"
	"stepwise/jsonvalue"
)

// invalid is the task failure of a Parameters member that cannot be sent.
func invalid(field, format string, args ...any) *failure.Failure {
	return failure.Newf(failure.TaskFailed, "The field '%s' "+format, append([]any{field}, args...)...)
}

// params reads the members of a task's Parameters into an SDK request. It
// keeps the first error, so a request is built in one expression and
// checked once with done, and it remembers the members read, so that done
// reports a member the operation does not take instead of dropping it.
type params struct {
	obj    *jsonvalue.Object
	prefix string // of a nested object's members in errors: "Expected.attr."
	read   map[string]bool
	err    error
	// violations are what DynamoDB itself refuses (a required member
	// missing, a table name it cannot take): AWS sends the request and
	// fails the task with the service's ValidationException.
	violations []string
}

func newParams(v any) (*params, error) {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, failure.Newf(failure.TaskFailed, "The Parameters must be an object, not %s", jsonvalue.TypeName(v))
	}
	return &params{obj: obj, read: map[string]bool{}}, nil
}

// done returns the first error met, or the failure for a member that was
// never read.
func (p *params) done() error {
	if p.err != nil {
		return p.err
	}
	if len(p.violations) > 0 {
		return validationFailure(p.violations)
	}
	for name := range p.obj.All() {
		if !p.read[name] {
			return invalid(p.path(name), "is not supported by Step Functions")
		}
	}
	return nil
}

// path names a member in errors.
func (p *params) path(name string) string { return p.prefix + name }

// get returns a member; a null member is absent.
func (p *params) get(name string) (any, bool) {
	p.read[name] = true
	v, ok := p.obj.Get(name)
	return v, ok && v != nil
}

// fail keeps the first error.
func (p *params) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// require records the failure for a missing member: at the top level,
// DynamoDB's own refusal of a null member.
func (p *params) require(name string) {
	if _, ok := p.get(name); ok {
		return
	}
	if p.prefix == "" {
		p.violations = append(p.violations, fmt.Sprintf("Value null at '%s' failed to satisfy constraint: Member must not be null", lowerFirst(name)))
		return
	}
	p.fail(invalid(p.path(name), "is required but was missing"))
}

// tableName reads TableName, which DynamoDB takes as a name or an ARN.
func (p *params) tableName() *string {
	p.require("TableName")
	name := p.string("TableName")
	if name != nil && !strings.HasPrefix(*name, "arn:") && !tableNameRE.MatchString(*name) {
		p.violations = append(p.violations, fmt.Sprintf("Value '%s' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+", *name))
	}
	return name
}

var tableNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

// validationFailure is DynamoDB's ValidationException, named and worded
// as AWS's optimized integration reports it (an unmodeled code: the base
// exception).
func validationFailure(violations []string) *failure.Failure {
	n := fmt.Sprintf("%d validation error", len(violations))
	if len(violations) > 1 {
		n += "s"
	}
	return failure.Newf("DynamoDB.AmazonDynamoDBException",
		"%s detected: %s (Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ValidationException; Request ID: %s; Proxy: null)",
		n, strings.Join(violations, "; "), requestID())
}

// requestID makes a DynamoDB-style request id (52 characters, A-Z0-9).
func requestID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 52)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func (p *params) string(name string) *string {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	s, err := asString(v, p.path(name))
	if err != nil {
		p.fail(err)
		return nil
	}
	return &s
}

// text returns a string member or "", for the SDK's enum types.
func (p *params) text(name string) string {
	if s := p.string(name); s != nil {
		return *s
	}
	return ""
}

func (p *params) bool(name string) *bool {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	b, err := asBool(v, p.path(name))
	if err != nil {
		p.fail(err)
		return nil
	}
	return &b
}

func (p *params) strings(name string) []string {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	ss, err := decodeList(v, p.path(name), asString)
	p.fail(err)
	return ss
}

// names reads ExpressionAttributeNames: {"#n": "name"}.
func (p *params) names(name string) map[string]string {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	obj, isObject := v.(*jsonvalue.Object)
	if !isObject {
		p.fail(invalid(p.path(name), "must be an object of strings, not %s", jsonvalue.TypeName(v)))
		return nil
	}
	out := make(map[string]string, obj.Len())
	for k, e := range obj.All() {
		s, err := asString(e, p.path(name)+"."+k)
		if err != nil {
			p.fail(err)
			return nil
		}
		out[k] = s
	}
	return out
}

// item reads a map of AttributeValues (Item, Key,
// ExpressionAttributeValues).
func (p *params) item(name string) map[string]types.AttributeValue {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	item, err := decodeItem(v, p.path(name))
	if err != nil {
		p.fail(err)
		return nil
	}
	return item
}

func (p *params) requiredItem(name string) map[string]types.AttributeValue {
	p.require(name)
	return p.item(name)
}

// expected reads the legacy Expected conditions: {"attr": {"Value",
// "Exists", "ComparisonOperator", "AttributeValueList"}}.
func (p *params) expected(name string) map[string]types.ExpectedAttributeValue {
	return eachMember(p, name, func(e *params) types.ExpectedAttributeValue {
		return types.ExpectedAttributeValue{
			Value:              e.attributeValue("Value"),
			Exists:             e.bool("Exists"),
			ComparisonOperator: types.ComparisonOperator(e.text("ComparisonOperator")),
			AttributeValueList: e.attributeValues("AttributeValueList"),
		}
	})
}

// attributeUpdates reads the legacy AttributeUpdates: {"attr": {"Value",
// "Action"}}.
func (p *params) attributeUpdates(name string) map[string]types.AttributeValueUpdate {
	return eachMember(p, name, func(e *params) types.AttributeValueUpdate {
		return types.AttributeValueUpdate{
			Value:  e.attributeValue("Value"),
			Action: types.AttributeAction(e.text("Action")),
		}
	})
}

// eachMember reads an object whose members are objects, each read by
// decode with its own params.
func eachMember[T any](p *params, name string, decode func(*params) T) map[string]T {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	obj, isObject := v.(*jsonvalue.Object)
	if !isObject {
		p.fail(invalid(p.path(name), "must be an object, not %s", jsonvalue.TypeName(v)))
		return nil
	}
	out := make(map[string]T, obj.Len())
	for k, e := range obj.All() {
		path := p.path(name) + "." + k
		ep, err := newMemberParams(e, path)
		if err != nil {
			p.fail(err)
			return nil
		}
		out[k] = decode(ep)
		if err := ep.done(); err != nil {
			p.fail(err)
			return nil
		}
	}
	return out
}

// newMemberParams reads a nested object; its errors name the member by
// its path from the Parameters.
func newMemberParams(v any, path string) (*params, error) {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, invalid(path, "must be an object, not %s", jsonvalue.TypeName(v))
	}
	return &params{obj: obj, read: map[string]bool{}, prefix: path + "."}, nil
}

func (p *params) attributeValue(name string) types.AttributeValue {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	av, err := decodeAttributeValue(v, p.path(name))
	p.fail(err)
	return av
}

func (p *params) attributeValues(name string) []types.AttributeValue {
	v, ok := p.get(name)
	if !ok {
		return nil
	}
	avs, err := decodeList(v, p.path(name), decodeAttributeValue)
	p.fail(err)
	return avs
}
