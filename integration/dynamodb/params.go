package dynamodb

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// invalid is the task failure of a Parameters member that cannot be sent.
func invalid(field, format string, args ...any) *stepwisetype.Failure {
	return stepwisetype.Failuref(stepwisetype.ErrorTaskFailed, "The field '%s' "+format, append([]any{field}, args...)...)
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
}

func newParams(v any) (*params, error) {
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, stepwisetype.Failuref(stepwisetype.ErrorTaskFailed, "The Parameters must be an object, not %s", jsonvalue.TypeName(v))
	}
	return &params{obj: obj, read: map[string]bool{}}, nil
}

// done returns the first error met, or the failure for a member that was
// never read.
func (p *params) done() error {
	if p.err != nil {
		return p.err
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

// require records the failure for a missing member.
func (p *params) require(name string) {
	if _, ok := p.get(name); !ok {
		p.fail(invalid(p.path(name), "is required but was missing"))
	}
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

func (p *params) requiredString(name string) *string {
	p.require(name)
	return p.string(name)
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
