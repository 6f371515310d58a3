package cfn

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"stepwise/internal/boundedfile"
)

// IncludeTransform is the transform that splices a file into the
// template.
const IncludeTransform = "AWS::Include"

// MaxIncludeFile bounds a file an AWS::Include reads.
const MaxIncludeFile = 1 << 20

// maxIncludeDepth bounds includes of includes.
const maxIncludeDepth = 8

// HasIncludes says whether the template has AWS::Include transforms
// that Include has not spliced in yet.
func (t *Template) HasIncludes() bool { return t.raw != nil }

// Include splices in the files of the template's AWS::Include
// transforms (the top-level Transform's, and Fn::Transform's where it
// sits), read from dir (a Location relative to the template) or as
// absolute paths, and returns the template that makes. A template
// without includes is returned as it is.
//
// Where a Fn::Transform is an object's only key, the file's value takes
// the object's place; beside other keys, the file's object is merged in
// (a key both have is an error). The top-level Transform's files are
// merged into the template's sections the same way.
func (t *Template) Include(ctx context.Context, dir string) (*Template, error) {
	if t.raw == nil {
		return t, nil
	}
	in := &includer{ctx: ctx}
	doc, err := in.expand(CopyValue(t.raw), dir, "", 0)
	if err != nil {
		return nil, err
	}
	out, err := fromDocument(doc)
	if err != nil {
		return nil, err
	}
	out.Warnings = append(slices.Clone(t.Warnings), in.warnings...)
	return out, nil
}

type includer struct {
	ctx      context.Context
	warnings []string
}

// hasInclude says whether v has a Fn::Transform anywhere, or top is a
// template whose Transform names AWS::Include.
func hasInclude(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["Fn::Transform"]; ok {
			return true
		}
		for _, e := range x {
			if hasInclude(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasInclude(e) {
				return true
			}
		}
	}
	return false
}

// topIncludes says whether a document's Transform has an object (an
// AWS::Include) in it.
func topIncludes(doc any) bool {
	top, _ := doc.(map[string]any)
	switch tr := top["Transform"].(type) {
	case map[string]any:
		return true
	case []any:
		for _, e := range tr {
			if _, ok := e.(map[string]any); ok {
				return true
			}
		}
	}
	return false
}

// withoutIncludes is the document with its includes taken out, for a
// look at the template before its folder is known: the top-level
// Transform keeps its names, a Fn::Transform alone in an object leaves
// null, beside other keys nothing.
func withoutIncludes(v any, top bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch {
			case k == "Fn::Transform":
			case top && k == "Transform":
				if names := transformNames(e); len(names) > 0 {
					out[k] = names
				}
			default:
				out[k] = withoutIncludes(e, false)
			}
		}
		if _, ok := x["Fn::Transform"]; ok && len(x) == 1 {
			return nil
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutIncludes(e, false)
		}
		return out
	}
	return v
}

// transformNames are the names (strings) of a top-level Transform.
func transformNames(v any) []any {
	var names []any
	switch tr := v.(type) {
	case string:
		names = append(names, tr)
	case []any:
		for _, e := range tr {
			if _, ok := e.(map[string]any); !ok {
				names = append(names, e)
			}
		}
	}
	return names
}

// expand splices in the includes below v; path is where v is, for
// messages.
func (in *includer) expand(v any, dir, path string, depth int) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		if depth == 0 && path == "" {
			if tr, ok := x["Transform"]; ok {
				var objs []any
				switch t := tr.(type) {
				case map[string]any:
					objs = []any{t}
				case []any:
					for _, e := range t {
						if _, ok := e.(map[string]any); ok {
							objs = append(objs, e)
						}
					}
				}
				if len(objs) > 0 {
					if names := transformNames(tr); len(names) > 0 {
						x["Transform"] = names
					} else {
						delete(x, "Transform")
					}
					for _, o := range objs {
						inc, err := in.file(o, dir, "Transform", depth)
						if err != nil {
							return nil, err
						}
						m, ok := inc.(map[string]any)
						if !ok {
							return nil, fmt.Errorf("template: Transform: the included file must hold sections (an object), got %s", kind(inc))
						}
						for sec, body := range m {
							if err := mergeKey(x, sec, body, "Transform"); err != nil {
								return nil, err
							}
						}
					}
				}
			}
		}
		for _, k := range sortedKeys(x) {
			if k == "Fn::Transform" {
				continue
			}
			e, err := in.expand(x[k], dir, join(path, k), depth)
			if err != nil {
				return nil, err
			}
			x[k] = e
		}
		arg, ok := x["Fn::Transform"]
		if !ok {
			return x, nil
		}
		where := join(path, "Fn::Transform")
		inc, err := in.file(arg, dir, where, depth)
		if err != nil {
			return nil, err
		}
		delete(x, "Fn::Transform")
		if len(x) == 0 {
			return inc, nil
		}
		m, ok := inc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("template: %s: the included file must hold an object to go beside %s, got %s", where, strings.Join(sortedKeys(x), ", "), kind(inc))
		}
		for k, e := range m {
			if err := mergeKey(x, k, e, where); err != nil {
				return nil, err
			}
		}
		return x, nil
	case []any:
		for i, e := range x {
			v, err := in.expand(e, dir, fmt.Sprintf("%s[%d]", path, i), depth)
			if err != nil {
				return nil, err
			}
			x[i] = v
		}
	}
	return v, nil
}

// mergeKey puts an included key into m: an object into the object m has
// there (a key in both is an error), anything else where m has nothing.
func mergeKey(m map[string]any, k string, v any, where string) error {
	old, exists := m[k]
	if !exists {
		m[k] = v
		return nil
	}
	om, ok1 := old.(map[string]any)
	vm, ok2 := v.(map[string]any)
	if !ok1 || !ok2 {
		return fmt.Errorf("template: %s: the included %s is in the template already", where, k)
	}
	for sub, e := range vm {
		if _, dup := om[sub]; dup {
			return fmt.Errorf("template: %s: the included %s.%s is in the template already", where, k, sub)
		}
		om[sub] = e
	}
	return nil
}

// file reads the file of an AWS::Include ({Name, Parameters: {Location}})
// and expands the includes in it, relative to its folder.
func (in *includer) file(arg any, dir, where string, depth int) (any, error) {
	m, ok := arg.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("template: %s must be an object {Name, Parameters}, got %s", where, kind(arg))
	}
	if name, _ := m["Name"].(string); name != IncludeTransform {
		return nil, fmt.Errorf("template: %s: transform %q is not run here; the one that is: %s", where, name, IncludeTransform)
	}
	params, _ := m["Parameters"].(map[string]any)
	loc, ok := params["Location"].(string)
	if !ok || loc == "" {
		return nil, fmt.Errorf("template: %s: AWS::Include needs Parameters.Location, the file to include", where)
	}
	if strings.Contains(loc, "://") {
		return nil, fmt.Errorf("template: %s: AWS::Include of %s: only a local file is read here (a path relative to the template)", where, loc)
	}
	if depth >= maxIncludeDepth {
		return nil, fmt.Errorf("template: %s: includes nested more than %d deep", where, maxIncludeDepth)
	}
	if dir == "" && !filepath.IsAbs(loc) {
		return nil, fmt.Errorf("template: %s: AWS::Include of %s: the template's folder is not known", where, loc)
	}
	full := loc
	if !filepath.IsAbs(loc) {
		full = filepath.Join(dir, loc)
	}
	data, err := boundedfile.Read(in.ctx, full, MaxIncludeFile)
	if err != nil {
		return nil, fmt.Errorf("template: %s: AWS::Include: %w", where, err)
	}
	var warnings []string
	v, err := decodeTemplate(data, &warnings)
	if err != nil {
		return nil, fmt.Errorf("template: %s: AWS::Include of %s: %w", where, loc, err)
	}
	for _, w := range warnings {
		in.warnings = append(in.warnings, loc+": "+w)
	}
	return in.expand(v, filepath.Dir(full), "", depth+1)
}
