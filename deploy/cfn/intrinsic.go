package cfn

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// function evaluates one intrinsic function, its argument as written.
func (ev *evaluator) function(fn string, arg any, path string) (any, error) {
	switch fn {
	case "Ref":
		name, ok := arg.(string)
		if !ok {
			return nil, ev.fail(path, "Ref takes the name of a parameter or resource, got %s", kind(arg))
		}
		return ev.ref(name, path)
	case "Condition":
		name, ok := arg.(string)
		if !ok {
			return nil, ev.fail(path, "Condition takes a condition's name, got %s", kind(arg))
		}
		return ev.namedCondition(name, path)
	case "Fn::GetAtt":
		return ev.getAtt(arg, path)
	case "Fn::Sub":
		return ev.sub(arg, path)
	case "Fn::Join":
		l, err := ev.args(fn, arg, path, 2)
		if err != nil {
			return nil, err
		}
		sep, err := ev.text(l[0], path+"[0]")
		if err != nil {
			return nil, err
		}
		items, err := ev.list(l[1], path+"[1]")
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(items))
		for i, it := range items {
			if parts[i], err = ev.text(it, fmt.Sprintf("%s[1][%d]", path, i)); err != nil {
				return nil, err
			}
		}
		return strings.Join(parts, sep), nil
	case "Fn::If":
		l, err := ev.args(fn, arg, path, 3)
		if err != nil {
			return nil, err
		}
		name, ok := l[0].(string)
		if !ok {
			return nil, ev.fail(path+"[0]", "Fn::If's first item is a condition's name, got %s", kind(l[0]))
		}
		b, err := ev.namedCondition(name, path+"[0]")
		if err != nil {
			return nil, err
		}
		if b {
			return ev.eval(l[1], path+"[1]")
		}
		return ev.eval(l[2], path+"[2]")
	case "Fn::Equals":
		l, err := ev.args(fn, arg, path, 2)
		if err != nil {
			return nil, err
		}
		a, err := ev.eval(l[0], path+"[0]")
		if err != nil {
			return nil, err
		}
		b, err := ev.eval(l[1], path+"[1]")
		if err != nil {
			return nil, err
		}
		return equal(a, b), nil
	case "Fn::Not":
		l, err := ev.args(fn, arg, path, 1)
		if err != nil {
			return nil, err
		}
		b, err := ev.boolean(l[0], path+"[0]")
		return !b, err
	case "Fn::And", "Fn::Or":
		l, ok := arg.([]any)
		if !ok || len(l) < 2 || len(l) > 10 {
			return nil, ev.fail(path, "%s takes a list of 2 to 10 conditions, got %s", fn, describe(arg))
		}
		and := fn == "Fn::And"
		for i, c := range l {
			b, err := ev.boolean(c, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			if b != and {
				return b, nil
			}
		}
		return and, nil
	case "Fn::Select":
		l, err := ev.args(fn, arg, path, 2)
		if err != nil {
			return nil, err
		}
		is, err := ev.text(l[0], path+"[0]")
		if err != nil {
			return nil, err
		}
		items, err := ev.list(l[1], path+"[1]")
		if err != nil {
			return nil, err
		}
		i, err := strconv.Atoi(is)
		if err != nil || i < 0 || i >= len(items) {
			return nil, ev.fail(path, "Fn::Select index %q is not within the list of %d", is, len(items))
		}
		return items[i], nil
	case "Fn::Split":
		l, err := ev.args(fn, arg, path, 2)
		if err != nil {
			return nil, err
		}
		sep, err := ev.text(l[0], path+"[0]")
		if err != nil {
			return nil, err
		}
		if sep == "" {
			return nil, ev.fail(path+"[0]", "Fn::Split's delimiter must not be empty")
		}
		str, err := ev.text(l[1], path+"[1]")
		if err != nil {
			return nil, err
		}
		var out []any
		for _, p := range strings.Split(str, sep) {
			out = append(out, p)
		}
		return out, nil
	case "Fn::FindInMap":
		l, err := ev.args(fn, arg, path, 3)
		if err != nil {
			return nil, err
		}
		var keys [3]string
		for i := range keys {
			if keys[i], err = ev.text(l[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		top, ok := ev.s.t.Mappings[keys[0]].(map[string]any)
		if !ok {
			return nil, ev.fail(path, "no mapping %q in Mappings", keys[0])
		}
		second, ok := top[keys[1]].(map[string]any)
		if !ok {
			return nil, ev.fail(path, "mapping %q has no key %q", keys[0], keys[1])
		}
		v, ok := second[keys[2]]
		if !ok {
			return nil, ev.fail(path, "mapping %q, key %q has no key %q", keys[0], keys[1], keys[2])
		}
		return v, nil
	case "Fn::Base64":
		str, err := ev.text(arg, path)
		if err != nil {
			return nil, err
		}
		return base64.StdEncoding.EncodeToString([]byte(str)), nil
	case "Fn::GetAZs":
		region, err := ev.text(arg, path)
		if err != nil {
			return nil, err
		}
		if region == "" {
			region = ev.s.pseudo["AWS::Region"]
		}
		return []any{region + "a", region + "b", region + "c"}, nil
	case "Fn::ImportValue":
		name, err := ev.text(arg, path)
		if err != nil {
			return nil, err
		}
		imp, ok := ev.refs.(Importer)
		if !ok {
			return nil, ev.fail(path, "Fn::ImportValue %q: no stack exports are known here", name)
		}
		v, err := imp.ImportValue(name)
		if err != nil {
			return nil, ev.fail(path, "Fn::ImportValue %q: %v", name, err)
		}
		return v, nil
	}
	return nil, ev.fail(path, "unknown intrinsic function %s (known: Ref, Fn::GetAtt, Fn::Sub, Fn::Join, Fn::If, Fn::Equals, Fn::Not, Fn::And, Fn::Or, Fn::Select, Fn::Split, Fn::FindInMap, Fn::Base64, Fn::GetAZs, Fn::ImportValue, Condition)", fn)
}

func (ev *evaluator) boolean(v any, path string) (bool, error) {
	r, err := ev.eval(v, path)
	if err != nil {
		return false, err
	}
	b, ok := r.(bool)
	if !ok {
		return false, ev.fail(path, "must be a condition (true or false), got %s", kind(r))
	}
	return b, nil
}

func (ev *evaluator) namedCondition(name, path string) (bool, error) {
	if _, ok := ev.s.t.Conditions[name]; !ok {
		return false, ev.fail(path, "unknown condition %q", name)
	}
	b, err := ev.s.condition(name, ev.visiting)
	if err != nil {
		return false, err
	}
	return b, nil
}

// equal compares two evaluated values as CloudFormation does: scalars by
// their text.
func equal(a, b any) bool {
	sa, okA := scalarText(a)
	sb, okB := scalarText(b)
	if okA && okB {
		return sa == sb
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

func (ev *evaluator) ref(name, path string) (any, error) {
	if name == "AWS::NoValue" {
		return noValue, nil
	}
	if name == "AWS::NotificationARNs" {
		return []any{}, nil
	}
	if v, ok := ev.s.pseudo[name]; ok {
		return v, nil
	}
	if strings.HasPrefix(name, "AWS::") {
		return nil, ev.fail(path, "unknown pseudo parameter %s", name)
	}
	if v, ok := ev.s.params[name]; ok {
		return v, nil
	}
	if _, ok := ev.s.t.Resources[name]; ok {
		if ev.refs == nil {
			if ev.inCondition {
				return nil, ev.fail(path, "Ref to resource %s, which a condition cannot refer to", name)
			}
			return nil, ev.fail(path, "Ref to resource %s, but no Resolver knows the resources", name)
		}
		if !ev.s.Included(name) {
			return nil, ev.fail(path, "Ref to resource %s, which its Condition leaves out", name)
		}
		v, err := ev.refs.Ref(name)
		if err != nil {
			return nil, ev.fail(path, "Ref to resource %s: %v", name, err)
		}
		return v, nil
	}
	return nil, ev.fail(path, "Ref to unknown parameter or resource %q", name)
}

func (ev *evaluator) getAtt(arg any, path string) (any, error) {
	if s, ok := arg.(string); ok { // "Resource.Attribute", as in the short form
		id, attr, found := strings.Cut(s, ".")
		if !found || id == "" || attr == "" {
			return nil, ev.fail(path, "Fn::GetAtt %q must be LogicalId.Attribute", s)
		}
		return ev.attribute(id, attr, path)
	}
	l, err := ev.args("Fn::GetAtt", arg, path, 2)
	if err != nil {
		return nil, err
	}
	id, ok := l[0].(string)
	if !ok {
		return nil, ev.fail(path+"[0]", "Fn::GetAtt's first item is a resource's logical id, got %s", kind(l[0]))
	}
	attr, err := ev.text(l[1], path+"[1]")
	if err != nil {
		return nil, err
	}
	return ev.attribute(id, attr, path)
}

func (ev *evaluator) attribute(id, attr, path string) (any, error) {
	if _, ok := ev.s.t.Resources[id]; !ok {
		return nil, ev.fail(path, "Fn::GetAtt to unknown resource %q", id)
	}
	if ev.refs == nil {
		if ev.inCondition {
			return nil, ev.fail(path, "Fn::GetAtt to resource %s, which a condition cannot refer to", id)
		}
		return nil, ev.fail(path, "Fn::GetAtt to resource %s, but no Resolver knows the resources", id)
	}
	if !ev.s.Included(id) {
		return nil, ev.fail(path, "Fn::GetAtt to resource %s, which its Condition leaves out", id)
	}
	v, err := ev.refs.GetAtt(id, attr)
	if err != nil {
		return nil, ev.fail(path, "Fn::GetAtt %s.%s: %v", id, attr, err)
	}
	return v, nil
}

// sub evaluates Fn::Sub: "text ${Name} ${Res.Attr} ${!Literal}" or
// [text, {Name: value}].
func (ev *evaluator) sub(arg any, path string) (any, error) {
	var tmpl string
	vars := map[string]string{}
	switch x := arg.(type) {
	case string:
		tmpl = x
	case []any:
		if len(x) != 2 {
			return nil, ev.fail(path, "Fn::Sub takes a string or a list of 2 items (a string and a map of variables), got %s", describe(arg))
		}
		s, ok := x[0].(string)
		if !ok {
			return nil, ev.fail(path+"[0]", "Fn::Sub's first item must be a string, got %s", kind(x[0]))
		}
		tmpl = s
		m, ok := x[1].(map[string]any)
		if !ok {
			return nil, ev.fail(path+"[1]", "Fn::Sub's second item must be a map of variables, got %s", kind(x[1]))
		}
		for _, k := range sortedKeys(m) {
			v, err := ev.text(m[k], path+"[1]."+k)
			if err != nil {
				return nil, err
			}
			vars[k] = v
		}
	default:
		return nil, ev.fail(path, "Fn::Sub takes a string or a list of 2 items, got %s", kind(arg))
	}
	return substitute(tmpl, func(name string) (string, error) {
		if v, ok := vars[name]; ok {
			return v, nil
		}
		var r any
		var err error
		if id, attr, dot := strings.Cut(name, "."); dot && !strings.HasPrefix(name, "AWS::") {
			r, err = ev.attribute(id, attr, path)
		} else {
			r, err = ev.ref(name, path)
		}
		if err != nil {
			return "", err
		}
		if s, ok := scalarText(r); ok {
			return s, nil
		}
		if l, ok := r.([]any); ok { // a list parameter is its items joined by commas
			parts := make([]string, len(l))
			for i, e := range l {
				parts[i], _ = scalarText(e)
			}
			return strings.Join(parts, ","), nil
		}
		return "", ev.fail(path, "Fn::Sub variable ${%s} is %s, not a string", name, kind(r))
	}, func(msg string) error { return ev.fail(path, "%s", msg) })
}

// substitute replaces each ${Name} of tmpl by lookup(Name); ${!Text} is
// the literal ${Text}.
func substitute(tmpl string, lookup func(string) (string, error), bad func(string) error) (string, error) {
	var b strings.Builder
	rest := tmpl
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		rest = rest[i+2:]
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return "", bad(fmt.Sprintf("Fn::Sub: unclosed ${ in %q", tmpl))
		}
		name := rest[:end]
		rest = rest[end+1:]
		if strings.HasPrefix(name, "!") {
			b.WriteString("${" + name[1:] + "}")
			continue
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return "", bad(fmt.Sprintf("Fn::Sub: empty ${} in %q", tmpl))
		}
		v, err := lookup(name)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
	}
}
