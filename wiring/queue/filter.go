package queue

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A filter is one of Lambda's event filtering patterns (FilterCriteria):
// an object whose keys are the event's fields, whose leaves are lists of
// matchers: values, or {"prefix"}, {"suffix"}, {"equals-ignore-case"},
// {"anything-but"}, {"numeric"}, {"exists"}.
type filter map[string]any

// parseFilters reads FilterCriteria.Filters' patterns (JSON text each),
// refusing operators it does not apply.
func parseFilters(patterns []string) ([]filter, error) {
	var out []filter
	for i, text := range patterns {
		var f filter
		if err := json.Unmarshal([]byte(text), &f); err != nil {
			return nil, fmt.Errorf("filter %d: a pattern is a JSON object: %w", i+1, err)
		}
		if err := checkPattern(f, ""); err != nil {
			return nil, fmt.Errorf("filter %d: %w", i+1, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func checkPattern(p map[string]any, at string) error {
	for k, v := range p {
		switch v := v.(type) {
		case map[string]any:
			if err := checkPattern(v, at+k+"."); err != nil {
				return err
			}
		case []any:
			for _, m := range v {
				if op, ok := m.(map[string]any); ok {
					for name := range op {
						switch name {
						case "prefix", "suffix", "equals-ignore-case", "anything-but", "numeric", "exists":
						default:
							return fmt.Errorf("%s%s: the operator %q is not applied here (prefix, suffix, equals-ignore-case, anything-but, numeric, exists are)", at, k, name)
						}
					}
				}
			}
		default:
			return fmt.Errorf("%s%s: a pattern's leaf is a list of values or matchers, not %v", at, k, v)
		}
	}
	return nil
}

// matchAny says whether event matches one of filters (no filters: all
// do).
func matchAny(filters []filter, event map[string]any) bool {
	if len(filters) == 0 {
		return true
	}
	for _, f := range filters {
		if matchObject(f, event) {
			return true
		}
	}
	return false
}

func matchObject(p map[string]any, event map[string]any) bool {
	for k, pv := range p {
		v, present := event[k]
		switch pv := pv.(type) {
		case map[string]any:
			sub, ok := v.(map[string]any)
			if !ok || !matchObject(pv, sub) {
				return false
			}
		case []any:
			if !matchLeaf(pv, v, present) {
				return false
			}
		}
	}
	return true
}

// matchLeaf: v (a value, or a list of values: any may match) matches
// one of the matchers.
func matchLeaf(matchers []any, v any, present bool) bool {
	values := []any{v}
	if list, ok := v.([]any); ok {
		values = list
	}
	for _, m := range matchers {
		if op, ok := m.(map[string]any); ok {
			if e, ok := op["exists"].(bool); ok {
				if e == (present && v != nil) {
					return true
				}
				continue
			}
		}
		if !present {
			continue
		}
		for _, val := range values {
			if matchOne(m, val) {
				return true
			}
		}
	}
	return false
}

func matchOne(m any, v any) bool {
	op, ok := m.(map[string]any)
	if !ok {
		return equalValue(m, v)
	}
	s, isStr := v.(string)
	for name, arg := range op {
		switch name {
		case "prefix":
			a, _ := arg.(string)
			return isStr && strings.HasPrefix(s, a)
		case "suffix":
			a, _ := arg.(string)
			return isStr && strings.HasSuffix(s, a)
		case "equals-ignore-case":
			a, _ := arg.(string)
			return isStr && strings.EqualFold(s, a)
		case "anything-but":
			switch a := arg.(type) {
			case []any:
				for _, x := range a {
					if equalValue(x, v) {
						return false
					}
				}
				return true
			case map[string]any:
				return !matchOne(a, v)
			default:
				return !equalValue(a, v)
			}
		case "numeric":
			return matchNumeric(arg, v)
		}
	}
	return false
}

func equalValue(a, b any) bool {
	if an, ok := a.(float64); ok {
		bn, ok := b.(float64)
		return ok && an == bn
	}
	return a == b
}

// matchNumeric: [">", 0, "<=", 5] and the like.
func matchNumeric(arg any, v any) bool {
	n, ok := v.(float64)
	ops, _ := arg.([]any)
	if !ok || len(ops) == 0 || len(ops)%2 != 0 {
		return false
	}
	for i := 0; i < len(ops); i += 2 {
		op, _ := ops[i].(string)
		x, ok := ops[i+1].(float64)
		if !ok {
			return false
		}
		var hold bool
		switch op {
		case "=":
			hold = n == x
		case "<":
			hold = n < x
		case "<=":
			hold = n <= x
		case ">":
			hold = n > x
		case ">=":
			hold = n >= x
		}
		if !hold {
			return false
		}
	}
	return true
}
