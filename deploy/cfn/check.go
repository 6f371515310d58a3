package cfn

import (
	"fmt"
	"strings"
)

// knownFunctions are the intrinsic functions the evaluator knows.
var knownFunctions = map[string]bool{
	"Ref": true, "Fn::GetAtt": true, "Fn::Sub": true, "Fn::Join": true, "Fn::If": true,
	"Fn::Equals": true, "Fn::Not": true, "Fn::And": true, "Fn::Or": true, "Fn::Select": true,
	"Fn::Split": true, "Fn::FindInMap": true, "Fn::Base64": true, "Fn::GetAZs": true,
	"Fn::ImportValue": true,
}

// check looks through the resources and outputs that are made for what
// would fail only once the resources before them were made: unknown
// intrinsic functions, and Ref, Fn::GetAtt and Fn::Sub naming nothing
// the template has. So a template with such a mistake is refused before
// anything is made.
func (s *Stack) check() error {
	for _, id := range s.t.ResourceIDs() {
		if !s.Included(id) {
			continue
		}
		if err := s.checkValue(s.t.Resources[id].Properties, "Properties", nil); err != nil {
			return &Error{Where: "resource " + id, Path: err.path, Msg: err.msg}
		}
	}
	for _, name := range sortedKeys(s.t.Outputs) {
		o := s.t.Outputs[name]
		if o.Condition != "" && !s.conditions[o.Condition] {
			continue
		}
		if err := s.checkValue(o.Value, "Value", nil); err != nil {
			return &Error{Where: "output " + name, Path: err.path, Msg: err.msg}
		}
	}
	return nil
}

// checkValue checks a value; vars are the names an enclosing Fn::Sub's
// map defines.
func (s *Stack) checkValue(v any, path string, vars map[string]bool) *pathError {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			for k, arg := range x {
				if k == "Ref" || strings.HasPrefix(k, "Fn::") {
					if !knownFunctions[k] {
						return &pathError{path: join(path, k), msg: fmt.Sprintf("unknown intrinsic function %s (the known ones: Ref, Fn::Base64, Fn::FindInMap, Fn::GetAtt, Fn::GetAZs, Fn::If, Fn::ImportValue, Fn::Join, Fn::Select, Fn::Split, Fn::Sub, and the conditions' Fn::And, Fn::Equals, Fn::Not, Fn::Or)", k)}
					}
					return s.checkFunction(k, arg, join(path, k))
				}
			}
		}
		for _, k := range sortedKeys(x) {
			if err := s.checkValue(x[k], join(path, k), vars); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := s.checkValue(e, fmt.Sprintf("%s[%d]", path, i), vars); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Stack) checkFunction(fn string, arg any, path string) *pathError {
	switch fn {
	case "Ref":
		if name, ok := arg.(string); ok {
			return s.checkName(name, path)
		}
		return nil
	case "Fn::GetAtt":
		id, attr := "", ""
		switch a := arg.(type) {
		case string:
			id, attr, _ = strings.Cut(a, ".")
		case []any:
			if len(a) > 0 {
				id, _ = a[0].(string)
			}
			if len(a) > 1 {
				attr, _ = a[1].(string)
			}
		}
		if id != "" {
			if _, ok := s.t.Resources[id]; !ok {
				return &pathError{path: path, msg: fmt.Sprintf("Fn::GetAtt to unknown resource %q", id)}
			}
			if attr != "" {
				if err := s.checkAttribute(id, attr, path); err != nil {
					return err
				}
			}
		}
		if a, ok := arg.([]any); ok && len(a) > 1 {
			return s.checkValue(a[1], path+"[1]", nil)
		}
		return nil
	case "Fn::Sub":
		tmpl, vars := "", map[string]bool{}
		switch a := arg.(type) {
		case string:
			tmpl = a
		case []any:
			if len(a) == 2 {
				tmpl, _ = a[0].(string)
				if m, ok := a[1].(map[string]any); ok {
					for k, v := range m {
						vars[k] = true
						if err := s.checkValue(v, path+"[1]."+k, nil); err != nil {
							return err
						}
					}
				}
			}
		}
		rest := tmpl
		for {
			i := strings.Index(rest, "${")
			if i < 0 {
				return nil
			}
			rest = rest[i+2:]
			end := strings.Index(rest, "}")
			if end < 0 {
				return nil // the evaluator words this one
			}
			name := strings.TrimSpace(rest[:end])
			rest = rest[end+1:]
			if strings.HasPrefix(name, "!") || vars[name] {
				continue
			}
			if id, attr, dot := strings.Cut(name, "."); dot && !strings.HasPrefix(name, "AWS::") {
				if _, ok := s.t.Resources[id]; !ok {
					return &pathError{path: path, msg: fmt.Sprintf("Fn::GetAtt to unknown resource %q", id)}
				}
				if err := s.checkAttribute(id, attr, path); err != nil {
					return err
				}
				continue
			}
			if err := s.checkName(name, path); err != nil {
				return err
			}
		}
	}
	return s.checkValue(arg, path, nil)
}

// checkName checks what a Ref names: a parameter, a pseudo parameter or
// a resource (in the evaluator's words when it is none).
func (s *Stack) checkName(name, path string) *pathError {
	if _, ok := s.t.Parameters[name]; ok {
		return nil
	}
	if _, ok := s.t.Resources[name]; ok {
		return nil
	}
	if _, ok := s.pseudo[name]; ok || name == "AWS::NoValue" || name == "AWS::NotificationARNs" {
		return nil
	}
	if strings.HasPrefix(name, "AWS::") {
		return &pathError{path: path, msg: fmt.Sprintf("unknown pseudo parameter %s", name)}
	}
	return &pathError{path: path, msg: fmt.Sprintf("Ref to unknown parameter or resource %q", name)}
}
