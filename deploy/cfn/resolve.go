package cfn

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Resolver gives what a resource created by the caller is: its Ref value
// (a name or ARN) and its attributes for Fn::GetAtt.
type Resolver interface {
	Ref(logicalID string) (string, error)
	GetAtt(logicalID, attribute string) (any, error)
}

// Importer is what a Resolver implements when it knows other stacks'
// exports, for Fn::ImportValue.
type Importer interface {
	ImportValue(name string) (string, error)
}

// The pseudo parameters' values when the caller gives none (params may
// set them: "AWS::Region" → "eu-west-1").
var pseudoDefaults = map[string]string{
	"AWS::Region":    "us-east-1",
	"AWS::AccountId": "123456789012",
	"AWS::StackName": "stepwise",
	"AWS::Partition": "aws",
	"AWS::URLSuffix": "amazonaws.com",
}

// Error is a template that cannot be resolved: where (a resource's,
// output's, condition's or parameter's name) and the path within it.
type Error struct {
	Where string // "resource MyFunction", "output Arn", "condition IsProd", "parameters"
	Path  string // "Properties.Environment.Variables.TABLE", empty when the whole
	Msg   string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "template: " + e.Where + ": " + e.Msg
	}
	return "template: " + e.Where + ", " + e.Path + ": " + e.Msg
}

// Stack is a template with its parameters and conditions settled and its
// resources ordered; its resources' properties and its outputs resolve one
// at a time, as the caller creates the resources they refer to.
type Stack struct {
	t          *Template
	params     map[string]any // string, or []any of strings for a list
	pseudo     map[string]string
	conditions map[string]bool
	// Order is the resources to create, each after those it refers to;
	// resources whose Condition is false are left out.
	Order []string
}

// Resolved is a whole template resolved.
type Resolved struct {
	Parameters map[string]any
	Conditions map[string]bool
	Order      []string
	Resources  map[string]ResolvedResource
	Outputs    map[string]ResolvedOutput
}

// ResolvedResource is a resource with its properties evaluated.
type ResolvedResource struct {
	Type       string
	Properties map[string]any
	DependsOn  []string // every resource it waits for: DependsOn and those it refers to
}

// ResolvedOutput is an output evaluated.
type ResolvedOutput struct {
	Value       any
	Description string
	Export      string
}

// Resolve resolves the whole template against a Resolver that already knows
// every resource.
func Resolve(t *Template, params map[string]string, refs Resolver) (*Resolved, error) {
	s, err := Prepare(t, params)
	if err != nil {
		return nil, err
	}
	out := &Resolved{
		Parameters: s.params,
		Conditions: s.conditions,
		Order:      s.Order,
		Resources:  map[string]ResolvedResource{},
	}
	for _, id := range s.Order {
		props, err := s.Properties(id, refs)
		if err != nil {
			return nil, err
		}
		deps, _ := s.Dependencies(id)
		out.Resources[id] = ResolvedResource{Type: t.Resources[id].Type, Properties: props, DependsOn: deps}
	}
	if out.Outputs, err = s.Outputs(refs); err != nil {
		return nil, err
	}
	return out, nil
}

// Prepare checks the parameters against the template, evaluates the
// conditions and orders the resources.
func Prepare(t *Template, params map[string]string) (*Stack, error) {
	s := &Stack{t: t, params: map[string]any{}, pseudo: map[string]string{}, conditions: map[string]bool{}}
	for k, v := range pseudoDefaults {
		s.pseudo[k] = v
	}
	var unknown []string
	for _, k := range sortedKeys(params) {
		if _, ok := pseudoDefaults[k]; ok {
			s.pseudo[k] = params[k]
		} else if _, ok := t.Parameters[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		return nil, &Error{Where: "parameters", Msg: fmt.Sprintf("Parameters: [%s] do not exist in the template", strings.Join(unknown, ", "))}
	}
	s.pseudo["AWS::StackId"] = fmt.Sprintf("arn:%s:cloudformation:%s:%s:stack/%s/00000000-0000-0000-0000-000000000000",
		s.pseudo["AWS::Partition"], s.pseudo["AWS::Region"], s.pseudo["AWS::AccountId"], s.pseudo["AWS::StackName"])
	var missing []string
	for _, name := range sortedKeys(t.Parameters) {
		p := t.Parameters[name]
		v, given := params[name]
		if !given {
			if p.Default == nil {
				missing = append(missing, name)
				continue
			}
			v = *p.Default
		}
		val, err := parameterValue(name, p, v)
		if err != nil {
			return nil, err
		}
		s.params[name] = val
	}
	if len(missing) > 0 {
		return nil, &Error{Where: "parameters", Msg: fmt.Sprintf("Parameters: [%s] must have values", strings.Join(missing, ", "))}
	}
	for _, name := range sortedKeys(t.Conditions) {
		if _, err := s.condition(name, nil); err != nil {
			return nil, err
		}
	}
	for _, id := range t.ResourceIDs() {
		if c := t.Resources[id].Condition; c != "" {
			if _, ok := t.Conditions[c]; !ok {
				return nil, &Error{Where: "resource " + id, Path: "Condition", Msg: fmt.Sprintf("unknown condition %q", c)}
			}
		}
	}
	order, err := s.order()
	if err != nil {
		return nil, err
	}
	s.Order = order
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// ssmPrefix starts the types of parameters whose value is the name of an
// SSM parameter (AWS::SSM::Parameter::Value<String>, CDK's
// BootstrapVersion). There is no SSM here: such a parameter's value is
// the text given, or its Default, as it is (the SSM parameter's name),
// and its constraints, which AWS applies to the SSM parameter's value,
// are not checked.
const ssmPrefix = "AWS::SSM::Parameter::Value<"

func parameterValue(name string, p Parameter, v string) (any, error) {
	where := "parameter " + name
	if inner, ok := strings.CutPrefix(p.Type, ssmPrefix); ok {
		if strings.HasPrefix(inner, "List<") || strings.HasPrefix(inner, "CommaDelimitedList") {
			return parameterValue(name, Parameter{Type: "CommaDelimitedList"}, v)
		}
		return v, nil
	}
	switch {
	case p.Type == "CommaDelimitedList" || strings.HasPrefix(p.Type, "List<"):
		items := strings.Split(v, ",")
		out := make([]any, len(items))
		for i, it := range items {
			it = strings.TrimSpace(it)
			if p.Type == "List<Number>" {
				if _, err := strconv.ParseFloat(it, 64); err != nil {
					return nil, &Error{Where: where, Msg: fmt.Sprintf("Parameter '%s' must be a number list: %q is not a number", name, it)}
				}
			}
			if len(p.AllowedValues) > 0 && !slices.Contains(p.AllowedValues, it) {
				return nil, &Error{Where: where, Msg: fmt.Sprintf("Parameter '%s' must be one of AllowedValues", name)}
			}
			out[i] = it
		}
		return out, nil
	case p.Type == "Number":
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, &Error{Where: where, Msg: fmt.Sprintf("Parameter '%s' must be a number", name)}
		}
		if p.MinValue != nil && n < *p.MinValue {
			return nil, &Error{Where: where, Msg: fmt.Sprintf("Parameter '%s' must be a number not less than %s", name, strconv.FormatFloat(*p.MinValue, 'f', -1, 64))}
		}
		if p.MaxValue != nil && n > *p.MaxValue {
			return nil, &Error{Where: where, Msg: fmt.Sprintf("Parameter '%s' must be a number not greater than %s", name, strconv.FormatFloat(*p.MaxValue, 'f', -1, 64))}
		}
	default:
		if p.AllowedPattern != nil && !p.AllowedPattern.MatchString(v) {
			pat := p.AllowedPattern.String()
			return nil, &Error{Where: where, Msg: fmt.Sprintf("Parameter '%s' must match pattern %s", name, pat)}
		}
		if n := utf8.RuneCountInString(v); p.MinLength != nil && n < *p.MinLength {
			return nil, &Error{Where: where, Msg: fmt.Sprintf("Parameter '%s' must contain at least %d characters", name, *p.MinLength)}
		}
		if n := utf8.RuneCountInString(v); p.MaxLength != nil && n > *p.MaxLength {
			return nil, &Error{Where: where, Msg: fmt.Sprintf("Parameter '%s' must contain at most %d characters", name, *p.MaxLength)}
		}
	}
	if len(p.AllowedValues) > 0 && !slices.Contains(p.AllowedValues, v) {
		return nil, &Error{Where: where, Msg: fmt.Sprintf("Parameter '%s' must be one of AllowedValues", name)}
	}
	return v, nil
}

// Parameters returns the parameters' values: a string, or a list ([]any
// of strings) for CommaDelimitedList and List<...> parameters.
func (s *Stack) Parameters() map[string]any { return s.params }

// Pseudo returns a pseudo parameter's value ("AWS::Region" → "us-east-1").
func (s *Stack) Pseudo(name string) string { return s.pseudo[name] }

// Template returns the template the stack resolves.
func (s *Stack) Template() *Template { return s.t }

// Condition says what one of the template's conditions evaluated to.
func (s *Stack) Condition(name string) bool { return s.conditions[name] }

// Included says whether a resource is created: its Condition, if any, is
// true.
func (s *Stack) Included(id string) bool {
	r, ok := s.t.Resources[id]
	return ok && (r.Condition == "" || s.conditions[r.Condition])
}

// condition evaluates a named condition once; visiting lists those being
// evaluated, for a condition that refers to itself.
func (s *Stack) condition(name string, visiting []string) (bool, error) {
	if b, ok := s.conditions[name]; ok {
		return b, nil
	}
	body, ok := s.t.Conditions[name]
	if !ok {
		return false, fmt.Errorf("unknown condition %q", name)
	}
	if slices.Contains(visiting, name) {
		return false, &Error{Where: "condition " + name, Msg: "circular condition: " + strings.Join(append(visiting, name), " → ")}
	}
	ev := &evaluator{s: s, where: "condition " + name, inCondition: true, visiting: append(visiting, name)}
	v, err := ev.eval(body, "")
	if err != nil {
		return false, ev.wrap(err, "")
	}
	b, ok := v.(bool)
	if !ok {
		return false, &Error{Where: "condition " + name, Msg: "a condition must evaluate to true or false (Fn::Equals, Fn::And, Fn::Or, Fn::Not, Condition), got " + kind(v)}
	}
	s.conditions[name] = b
	return b, nil
}

// Properties resolves one resource's properties; AWS::NoValue removes the
// property it stands for.
func (s *Stack) Properties(id string, refs Resolver) (map[string]any, error) {
	r, ok := s.t.Resources[id]
	if !ok {
		return nil, &Error{Where: "resource " + id, Msg: "no such resource in the template"}
	}
	ev := &evaluator{s: s, where: "resource " + id, refs: refs}
	v, err := ev.eval(r.Properties, "Properties")
	if err != nil {
		return nil, ev.wrap(err, "Properties")
	}
	if v == nil || v == noValue {
		return map[string]any{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Where: "resource " + id, Path: "Properties", Msg: "must be an object, got " + kind(v)}
	}
	return m, nil
}

// Outputs resolves the outputs whose Condition holds.
func (s *Stack) Outputs(refs Resolver) (map[string]ResolvedOutput, error) {
	out := map[string]ResolvedOutput{}
	for _, name := range sortedKeys(s.t.Outputs) {
		o := s.t.Outputs[name]
		where := "output " + name
		if o.Condition != "" {
			b, err := s.condition(o.Condition, nil)
			if err != nil {
				return nil, &Error{Where: where, Path: "Condition", Msg: err.Error()}
			}
			if !b {
				continue
			}
		}
		ev := &evaluator{s: s, where: where, refs: refs}
		var r ResolvedOutput
		var err error
		if r.Value, err = ev.eval(o.Value, "Value"); err != nil {
			return nil, ev.wrap(err, "Value")
		}
		if o.Description != nil {
			if r.Description, err = ev.text(o.Description, "Description"); err != nil {
				return nil, ev.wrap(err, "Description")
			}
		}
		if o.Export != nil {
			if r.Export, err = ev.text(o.Export, "Export.Name"); err != nil {
				return nil, ev.wrap(err, "Export.Name")
			}
		}
		out[name] = r
	}
	return out, nil
}

// noValue is what AWS::NoValue evaluates to: the property, list item or
// Fn::If branch holding it is dropped.
var noValue = &struct{ noValue bool }{true}

// evaluator evaluates one resource's, output's or condition's values.
type evaluator struct {
	s           *Stack
	where       string
	refs        Resolver
	inCondition bool     // Condition is a function here
	visiting    []string // conditions being evaluated, for cycles
}

// pathError is an evaluation error at a path, made an *Error by wrap.
type pathError struct {
	path string
	msg  string
}

func (e *pathError) Error() string { return e.path + ": " + e.msg }

func (ev *evaluator) fail(path, format string, args ...any) error {
	return &pathError{path: path, msg: fmt.Sprintf(format, args...)}
}

func (ev *evaluator) wrap(err error, path string) error {
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	var pe *pathError
	if errors.As(err, &pe) {
		return &Error{Where: ev.where, Path: pe.path, Msg: pe.msg}
	}
	return &Error{Where: ev.where, Path: path, Msg: err.Error()}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (ev *evaluator) eval(v any, path string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k, arg := range x {
				if k == "Ref" || strings.HasPrefix(k, "Fn::") || (k == "Condition" && ev.inCondition) {
					return ev.function(k, arg, join(path, k))
				}
			}
		}
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			e, err := ev.eval(x[k], join(path, k))
			if err != nil {
				return nil, err
			}
			if e != noValue {
				out[k] = e
			}
		}
		return out, nil
	case []any:
		out := make([]any, 0, len(x))
		for i, e := range x {
			r, err := ev.eval(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			if r != noValue {
				out = append(out, r)
			}
		}
		return out, nil
	}
	return v, nil
}

// text evaluates a value that must come out as a string (numbers and
// booleans are taken as their text).
func (ev *evaluator) text(v any, path string) (string, error) {
	r, err := ev.eval(v, path)
	if err != nil {
		return "", err
	}
	switch x := r.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", ev.fail(path, "must be a string, got %s", kind(r))
}

// list evaluates a value that must come out as a list.
func (ev *evaluator) list(v any, path string) ([]any, error) {
	r, err := ev.eval(v, path)
	if err != nil {
		return nil, err
	}
	l, ok := r.([]any)
	if !ok {
		return nil, ev.fail(path, "must be a list, got %s", kind(r))
	}
	return l, nil
}

// args checks a function's argument is a list of n items (n < 0: any
// number).
func (ev *evaluator) args(fn string, arg any, path string, n int) ([]any, error) {
	l, ok := arg.([]any)
	if !ok || (n >= 0 && len(l) != n) {
		return nil, ev.fail(path, "%s takes a list of %d items, got %s", fn, n, describe(arg))
	}
	return l, nil
}

func describe(v any) string {
	if l, ok := v.([]any); ok {
		return fmt.Sprintf("a list of %d", len(l))
	}
	return kind(v)
}
