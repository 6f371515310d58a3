package cfn

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Dependencies lists the resources a resource waits for: its DependsOn and
// the resources its properties refer to by Ref, Fn::GetAtt or Fn::Sub
// (in either branch of an Fn::If), sorted.
func (s *Stack) Dependencies(id string) ([]string, error) {
	r := s.t.Resources[id]
	set := map[string]bool{}
	for _, d := range r.DependsOn {
		if _, ok := s.t.Resources[d]; !ok {
			return nil, &Error{Where: "resource " + id, Path: "DependsOn", Msg: fmt.Sprintf("DependsOn unknown resource %q", d)}
		}
		set[d] = true
	}
	collectRefs(r.Properties, func(name string) {
		if _, ok := s.t.Resources[name]; ok {
			set[name] = true
		}
	})
	return sortedKeys(set), nil
}

// collectRefs calls found with every name a value refers to.
func collectRefs(v any, found func(string)) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 1 {
			if name, ok := x["Ref"].(string); ok {
				found(name)
				return
			}
			if arg, ok := x["Fn::GetAtt"]; ok {
				switch a := arg.(type) {
				case []any:
					if len(a) > 0 {
						if id, ok := a[0].(string); ok {
							found(id)
						}
					}
				case string:
					id, _, _ := strings.Cut(a, ".")
					found(id)
				}
				collectRefs(arg, found)
				return
			}
			if arg, ok := x["Fn::Sub"]; ok {
				tmpl, vars := "", map[string]any{}
				switch a := arg.(type) {
				case string:
					tmpl = a
				case []any:
					if len(a) == 2 {
						tmpl, _ = a[0].(string)
						vars, _ = a[1].(map[string]any)
						collectRefs(a[1], found)
					}
				}
				_, _ = substitute(tmpl, func(name string) (string, error) {
					if _, local := vars[name]; !local {
						id, _, _ := strings.Cut(name, ".")
						found(id)
					}
					return "", nil
				}, func(string) error { return nil })
				return
			}
		}
		for _, e := range x {
			collectRefs(e, found)
		}
	case []any:
		for _, e := range x {
			collectRefs(e, found)
		}
	}
}

// order puts the included resources in an order where each comes after the
// resources it depends on (ties by logical id), or reports a cycle.
func (s *Stack) order() ([]string, error) {
	deps := map[string][]string{}
	var ids []string
	for _, id := range s.t.ResourceIDs() {
		d, err := s.Dependencies(id)
		if err != nil {
			return nil, err
		}
		if !s.Included(id) {
			continue
		}
		ids = append(ids, id)
		deps[id] = slices.DeleteFunc(d, func(x string) bool { return !s.Included(x) })
	}
	done := map[string]bool{}
	var order []string
	for len(order) < len(ids) {
		progressed := false
		for _, id := range ids {
			if done[id] {
				continue
			}
			ready := true
			for _, d := range deps[id] {
				if !done[d] {
					ready = false
					break
				}
			}
			if ready {
				done[id] = true
				order = append(order, id)
				progressed = true
			}
		}
		if !progressed {
			return nil, &Error{Where: "resources", Msg: fmt.Sprintf("Circular dependency between resources: [%s]", strings.Join(findCycle(ids, deps, done), ", "))}
		}
	}
	return order, nil
}

// findCycle returns the logical ids of one cycle among the resources not
// done, in the order they refer to each other.
func findCycle(ids []string, deps map[string][]string, done map[string]bool) []string {
	state := map[string]int{} // 1: on the path, 2: finished
	var path []string
	var cycle []string
	var visit func(string) bool
	visit = func(id string) bool {
		state[id] = 1
		path = append(path, id)
		for _, d := range deps[id] {
			if done[d] {
				continue
			}
			if state[d] == 1 {
				cycle = slices.Clone(path[slices.Index(path, d):])
				return true
			}
			if state[d] == 0 && visit(d) {
				return true
			}
		}
		path = path[:len(path)-1]
		state[id] = 2
		return false
	}
	for _, id := range ids {
		if !done[id] && state[id] == 0 && visit(id) {
			return cycle
		}
	}
	var rest []string // unreachable: every node left waits on another
	for _, id := range ids {
		if !done[id] {
			rest = append(rest, id)
		}
	}
	sort.Strings(rest)
	return rest
}
