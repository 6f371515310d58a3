// Package cfn reads a CloudFormation or SAM template (JSON or YAML, with
// CloudFormation's short-form tags) and resolves it: parameters, pseudo
// parameters, conditions, mappings and intrinsic functions evaluated, the
// resources put in dependency order. It knows nothing of the engine: what a
// resource's Ref and GetAtt give comes from a Resolver, the caller that
// creates the resources.
package cfn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// SAMTransform is the Transform that marks a template as SAM's.
const SAMTransform = "AWS::Serverless-2016-10-31"

// Template is a parsed template. Values below the sections are the
// template's own, intrinsic functions in their long form ({"Fn::GetAtt":
// ["A", "B"]}); numbers are json.Number.
type Template struct {
	FormatVersion string
	Description   string
	Transform     []string
	Parameters    map[string]Parameter
	Mappings      map[string]any
	Conditions    map[string]any
	Resources     map[string]Resource
	Outputs       map[string]Output
	// Globals is a SAM template's Globals section by its keys (Function,
	// StateMachine...); Parse has merged it into the resources already.
	Globals map[string]map[string]any
	// Warnings are what was read but is doubtful: a duplicate key.
	Warnings []string

	// raw is the document of a template with AWS::Include transforms,
	// which Include splices in; nil for one without.
	raw any
}

// Parameter is one of the template's Parameters.
type Parameter struct {
	Type          string // String, Number, CommaDelimitedList, List<Number>, an AWS-specific type (taken as String); AWS::SSM::Parameter::Value<...> (see ssmPrefix)
	Default       *string
	AllowedValues []string
	// AllowedPattern must match the whole value (a String's).
	AllowedPattern *Pattern
	// The bounds of a String's length, of a Number's value.
	MinLength, MaxLength *int
	MinValue, MaxValue   *float64
	Description          string
}

// Resource is one of the template's Resources.
type Resource struct {
	Type       string
	Properties map[string]any
	DependsOn  []string
	Condition  string
	// Metadata, DeletionPolicy and the like are kept as they are.
	Metadata            any
	DeletionPolicy      string
	UpdateReplacePolicy string // Delete (the default), Retain or Snapshot
	// IgnoreGlobals is SAM's attribute: "*", or a list of the Globals
	// properties the resource does not take.
	IgnoreGlobals any
	// Implicit is, for a resource SAM makes on its own (implicit.go),
	// the logical id of the template's resource it comes from.
	Implicit string
	// NamedOnly marks an implicit resource that stands for what its
	// resource's event is here (a wire on that resource's record): it is
	// named, for Ref, Fn::GetAtt and DependsOn, and never made.
	NamedOnly bool
}

// Output is one of the template's Outputs.
type Output struct {
	Value       any
	Description any
	Condition   string
	Export      any // the Export's Name, when there is one
}

// IsSAM says whether the template declares SAM's transform.
func (t *Template) IsSAM() bool {
	for _, tr := range t.Transform {
		if tr == SAMTransform {
			return true
		}
	}
	return false
}

// ResourceIDs returns the logical ids of the resources, sorted.
func (t *Template) ResourceIDs() []string { return sortedKeys(t.Resources) }

// Parse reads a template written in JSON or YAML.
func Parse(data []byte) (*Template, error) {
	var warnings []string
	doc, err := decodeTemplate(data, &warnings)
	if err != nil {
		return nil, err
	}
	var t *Template
	if hasInclude(doc) || topIncludes(doc) {
		// Read without its includes until Include has the folder to
		// read them from.
		raw := CopyValue(doc)
		if t, err = fromDocumentPartial(withoutIncludes(doc, true), true); err != nil {
			return nil, err
		}
		t.raw = raw
	} else if t, err = fromDocument(doc); err != nil {
		return nil, err
	}
	t.Warnings = warnings
	return t, nil
}

// Decode reads a JSON or YAML document (a state machine's definition
// file, say) into plain Go values: map[string]any, []any, string,
// json.Number, bool and nil.
func Decode(data []byte) (any, error) { return decode(data) }

// decode reads JSON (a document starting with "{") or YAML into plain Go
// values: map[string]any, []any, string, json.Number, bool and nil.
func decode(data []byte) (any, error) { return decodeTemplate(data, nil) }

// decodeTemplate is decode, but a duplicate YAML key, when warnings is
// not nil, is a warning there (the last one wins) where decode refuses
// it.
func decodeTemplate(data []byte, warnings *[]string) (any, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("template: not valid JSON: %w", err)
		}
		if dec.More() {
			return nil, fmt.Errorf("template: not valid JSON: data after the top-level object")
		}
		return v, nil
	}
	return decodeYAML(data, warnings)
}

func fromDocument(doc any) (*Template, error) { return fromDocumentPartial(doc, false) }

// fromDocumentPartial reads a document; partial: its includes are left
// out, so its Resources may be empty.
func fromDocumentPartial(doc any, partial bool) (*Template, error) {
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("template: the template must be an object (a mapping), got %s", kind(doc))
	}
	t := &Template{
		Parameters: map[string]Parameter{},
		Mappings:   map[string]any{},
		Conditions: map[string]any{},
		Resources:  map[string]Resource{},
		Outputs:    map[string]Output{},
	}
	for key, v := range top {
		var err error
		switch key {
		case "AWSTemplateFormatVersion":
			t.FormatVersion, err = plainString(v, key)
		case "Description":
			t.Description, err = plainString(v, key)
		case "Transform":
			t.Transform, err = stringList(v, key)
		case "Parameters":
			err = t.readParameters(v)
		case "Mappings":
			t.Mappings, err = object(v, key)
		case "Conditions":
			t.Conditions, err = object(v, key)
		case "Resources":
			err = t.readResources(v)
		case "Outputs":
			err = t.readOutputs(v)
		case "Globals":
			err = t.readGlobals(v)
		case "Metadata", "Rules", "Hooks":
			// Accepted, not evaluated: Rules check parameter values
			// before a change set (CDK's only check that its bootstrap
			// stack is recent), which means nothing locally.
		default:
			err = fmt.Errorf("template: unknown top-level section %q", key)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(t.Resources) == 0 && !partial {
		return nil, fmt.Errorf("template: the Resources section is missing or empty; a template needs at least one resource")
	}
	if t.Globals != nil && t.IsSAM() {
		if err := t.applyGlobals(); err != nil {
			return nil, err
		}
	}
	if t.IsSAM() {
		t.addImplicit()
	}
	return t, nil
}

func (t *Template) readParameters(v any) error {
	m, err := object(v, "Parameters")
	if err != nil {
		return err
	}
	for name, raw := range m {
		where := "Parameters." + name
		pm, err := object(raw, where)
		if err != nil {
			return err
		}
		p := Parameter{Type: "String"}
		for k, pv := range pm {
			switch k {
			case "Type":
				p.Type, err = plainString(pv, where+".Type")
			case "Default":
				var s string
				s, err = scalarString(pv, where+".Default")
				p.Default = &s
			case "AllowedValues":
				p.AllowedValues, err = stringList(pv, where+".AllowedValues")
			case "Description":
				p.Description, err = plainString(pv, where+".Description")
			case "AllowedPattern":
				var pat string
				if pat, err = plainString(pv, where+".AllowedPattern"); err == nil {
					if p.AllowedPattern, err = CompilePattern(pat); err != nil {
						err = fmt.Errorf("template: %s.AllowedPattern %q is not a regular expression: %w", where, pat, err)
					}
				}
			case "MinLength", "MaxLength":
				var n float64
				if n, err = number(pv, where+"."+k); err == nil {
					i := int(n)
					if k == "MinLength" {
						p.MinLength = &i
					} else {
						p.MaxLength = &i
					}
				}
			case "MinValue", "MaxValue":
				var n float64
				if n, err = number(pv, where+"."+k); err == nil {
					if k == "MinValue" {
						p.MinValue = &n
					} else {
						p.MaxValue = &n
					}
				}
			}
			if err != nil {
				return err
			}
		}
		t.Parameters[name] = p
	}
	return nil
}

func (t *Template) readResources(v any) error {
	m, err := object(v, "Resources")
	if err != nil {
		return err
	}
	for id, raw := range m {
		where := "Resources." + id
		if !alphanumeric(id) {
			return fmt.Errorf("template: Resource name %s is non alphanumeric", id)
		}
		rm, err := object(raw, where)
		if err != nil {
			return err
		}
		r := Resource{}
		for k, rv := range rm {
			switch k {
			case "Type":
				r.Type, err = plainString(rv, where+".Type")
			case "Properties":
				r.Properties, err = object(rv, where+".Properties")
			case "DependsOn":
				r.DependsOn, err = stringList(rv, where+".DependsOn")
			case "Condition":
				r.Condition, err = plainString(rv, where+".Condition")
			case "Metadata":
				r.Metadata = rv
			case "DeletionPolicy":
				r.DeletionPolicy, err = plainString(rv, where+".DeletionPolicy")
			case "IgnoreGlobals":
				r.IgnoreGlobals = rv
			case "UpdateReplacePolicy":
				r.UpdateReplacePolicy, err = plainString(rv, where+".UpdateReplacePolicy")
			}
			if err != nil {
				return err
			}
		}
		if r.Type == "" {
			return fmt.Errorf("template: resource %s has no Type", id)
		}
		t.Resources[id] = r
	}
	return nil
}

func (t *Template) readOutputs(v any) error {
	m, err := object(v, "Outputs")
	if err != nil {
		return err
	}
	for name, raw := range m {
		where := "Outputs." + name
		om, err := object(raw, where)
		if err != nil {
			return err
		}
		o := Output{Value: om["Value"], Description: om["Description"]}
		if _, ok := om["Value"]; !ok {
			return fmt.Errorf("template: output %s has no Value", name)
		}
		if c, ok := om["Condition"]; ok {
			if o.Condition, err = plainString(c, where+".Condition"); err != nil {
				return err
			}
		}
		if e, ok := om["Export"]; ok {
			em, err := object(e, where+".Export")
			if err != nil {
				return err
			}
			o.Export = em["Name"]
		}
		t.Outputs[name] = o
	}
	return nil
}

// alphanumeric says whether a logical id is made of A-Z, a-z and 0-9 only,
// as CloudFormation requires.
func alphanumeric(id string) bool {
	if id == "" {
		return false
	}
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

func object(v any, where string) (map[string]any, error) {
	if v == nil {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("template: %s must be an object, got %s", where, kind(v))
	}
	return m, nil
}

func plainString(v any, where string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("template: %s must be a string, got %s", where, kind(v))
	}
	return s, nil
}

// scalarString takes a string, number or boolean as its text.
func scalarString(v any, where string) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return fmt.Sprint(x), nil
	}
	return "", fmt.Errorf("template: %s must be a string or number, got %s", where, kind(v))
}

func number(v any, where string) (float64, error) {
	s, err := scalarString(v, where)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("template: %s must be a number, got %q", where, s)
	}
	return n, nil
}

// stringList takes a string or a list of strings (numbers taken as text).
func stringList(v any, where string) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("template: %s must be a string or a list of strings, got %s", where, kind(v))
	}
	out := make([]string, 0, len(l))
	for i, e := range l {
		s, err := scalarString(e, fmt.Sprintf("%s[%d]", where, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// kind names a value's JSON type, for messages.
func kind(v any) string { return TypeName(v) }

// TypeName names the JSON type of a template's value ("a string", "a
// list", "an object", ...), for messages.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64, int:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	if v == noValue {
		return "AWS::NoValue"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
