package cfn

import (
	"fmt"
	"strings"
)

// globalsSections are the Globals section's keys SAM accepts, each the
// AWS::Serverless:: type its properties go to.
var globalsSections = []string{"Api", "CapacityProvider", "Function", "HttpApi", "LayerVersion", "SimpleTable", "StateMachine"}

// readGlobals checks a SAM template's Globals section: an object of
// sections, each an object of properties.
func (t *Template) readGlobals(v any) error {
	m, err := object(v, "Globals")
	if err != nil {
		return err
	}
	t.Globals = map[string]map[string]any{}
	for _, section := range sortedKeys(m) {
		known := false
		for _, s := range globalsSections {
			known = known || s == section
		}
		if !known {
			return fmt.Errorf("template: 'Globals' section is invalid. '%s' is not supported. Must be one of the following values - [%s]",
				section, strings.Join(globalsSections, ", "))
		}
		props, ok := m[section].(map[string]any)
		if !ok {
			return fmt.Errorf("template: 'Globals' section is invalid. Value of %s must be a dictionary", section)
		}
		t.Globals[section] = props
	}
	return nil
}

// applyGlobals merges a SAM template's Globals into the properties of
// its AWS::Serverless:: resources, by SAM's rules: a resource's own
// value wins over a global one; two objects are merged key by key by
// these same rules; two lists are joined, the global items first; values
// of different kinds, and intrinsic functions (taken as the single value
// they resolve to), keep the resource's.
func (t *Template) applyGlobals() {
	for _, id := range t.ResourceIDs() {
		r := t.Resources[id]
		section, ok := strings.CutPrefix(r.Type, "AWS::Serverless::")
		if !ok || t.Globals[section] == nil {
			continue
		}
		props := r.Properties
		if props == nil {
			props = map[string]any{}
		}
		r.Properties = mergeGlobal(t.Globals[section], props).(map[string]any)
		t.Resources[id] = r
	}
}

func mergeGlobal(global, local any) any {
	gm, gIsMap := global.(map[string]any)
	lm, lIsMap := local.(map[string]any)
	if gIsMap && isIntrinsic(gm) {
		gIsMap = false
	}
	if lIsMap && isIntrinsic(lm) {
		lIsMap = false
	}
	switch {
	case gIsMap && lIsMap:
		out := make(map[string]any, len(gm)+len(lm))
		for k, v := range gm {
			out[k] = copyValue(v)
		}
		for k, v := range lm {
			if g, ok := gm[k]; ok {
				out[k] = mergeGlobal(g, v)
			} else {
				out[k] = v
			}
		}
		return out
	}
	gl, gIsList := global.([]any)
	ll, lIsList := local.([]any)
	if gIsList && lIsList {
		out := make([]any, 0, len(gl)+len(ll))
		for _, v := range gl {
			out = append(out, copyValue(v))
		}
		return append(out, ll...)
	}
	return local
}

// isIntrinsic says whether an object is an intrinsic function: its one
// key is Ref or Fn::something.
func isIntrinsic(m map[string]any) bool {
	if len(m) != 1 {
		return false
	}
	for k := range m {
		return k == "Ref" || strings.HasPrefix(k, "Fn::")
	}
	return false
}

// copyValue is a deep copy, so that resources given one global value do
// not share it.
func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}
