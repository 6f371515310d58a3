package bus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"
)

// Event patterns
//
// A pattern is a JSON object whose members are either objects (the
// event's member of that name is matched in turn) or arrays of what the
// member may be: a string, number, boolean or null matched exactly, or a
// filter {"prefix"}, {"suffix"}, {"equals-ignore-case"}, {"wildcard"},
// {"anything-but"}, {"numeric"}, {"exists"}, {"cidr"}. "$or" is an
// array of patterns of which one must match. Every member must match;
// within an array one value suffices; an event member that is an array
// matches when one of its elements does.

// MaxPatternSize is the longest event pattern a rule takes.
const MaxPatternSize = 4096

// PatternError is a pattern refused, in EventBridge's words
// (InvalidEventPatternException).
type PatternError struct{ Reason string }

func (e *PatternError) Error() string { return "Event pattern is not valid. Reason: " + e.Reason }

// Code is the AWS error code of a pattern refused.
func (e *PatternError) Code() string { return "InvalidEventPatternException" }

func bad(format string, args ...any) error {
	return &PatternError{Reason: fmt.Sprintf(format, args...)}
}

// Pattern is a parsed event pattern.
type Pattern struct{ root *node }

// node is a pattern object: its members and its $or alternatives.
type node struct {
	fields map[string]*field
	ors    [][]*node
}

// field is one member: a nested object, or the values it may have.
type field struct {
	sub      *node
	matchers []matcher
}

type matcher interface {
	// match says whether v (a string, json.Number, bool or nil) matches.
	match(v any) bool
}

// ParsePattern reads an event pattern, refusing one EventBridge refuses.
func ParsePattern(text string) (*Pattern, error) {
	if len(text) > MaxPatternSize {
		return nil, bad("the pattern is %d characters long, more than %d", len(text), MaxPatternSize)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, bad("Filter is not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, bad("Filter is not valid JSON: text after the object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, bad("Filter is not an object")
	}
	n, err := parseNode(obj, "")
	if err != nil {
		return nil, err
	}
	if len(n.fields) == 0 && len(n.ors) == 0 {
		return nil, bad("Empty objects are not allowed")
	}
	return &Pattern{root: n}, nil
}

func parseNode(obj map[string]any, at string) (*node, error) {
	n := &node{fields: map[string]*field{}}
	for _, key := range sortedKeys(obj) {
		val := obj[key]
		path := key
		if at != "" {
			path = at + "." + key
		}
		if key == "$or" {
			list, ok := val.([]any)
			if !ok {
				return nil, bad("\"$or\" must be an array of objects at %s", path)
			}
			if len(list) < 2 {
				return nil, bad("\"$or\" must have at least 2 alternatives at %s", path)
			}
			var alts []*node
			for _, a := range list {
				o, ok := a.(map[string]any)
				if !ok {
					return nil, bad("\"$or\" must be an array of objects at %s", path)
				}
				alt, err := parseNode(o, at)
				if err != nil {
					return nil, err
				}
				if len(alt.fields) == 0 && len(alt.ors) == 0 {
					return nil, bad("Empty objects are not allowed at %s", path)
				}
				alts = append(alts, alt)
			}
			n.ors = append(n.ors, alts)
			continue
		}
		switch v := val.(type) {
		case map[string]any:
			sub, err := parseNode(v, path)
			if err != nil {
				return nil, err
			}
			if len(sub.fields) == 0 && len(sub.ors) == 0 {
				return nil, bad("Empty objects are not allowed at %s", path)
			}
			n.fields[key] = &field{sub: sub}
		case []any:
			if len(v) == 0 {
				return nil, bad("Empty arrays are not allowed at %s", path)
			}
			f := &field{}
			for _, item := range v {
				m, err := parseMatcher(item, path)
				if err != nil {
					return nil, err
				}
				f.matchers = append(f.matchers, m)
			}
			n.fields[key] = f
		default:
			return nil, bad("%q must be an object or an array at %s", key, path)
		}
	}
	return n, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parseMatcher reads one value of a member's array.
func parseMatcher(item any, path string) (matcher, error) {
	switch v := item.(type) {
	case nil, string, bool:
		return exact{v}, nil
	case json.Number:
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) {
			return nil, bad("number %s is out of range at %s", v, path)
		}
		return exact{f}, nil
	case []any:
		return nil, bad("Match value must be String, number, true, false, or null at %s", path)
	}
	obj := item.(map[string]any)
	if len(obj) != 1 {
		return nil, bad("Only one key allowed in match expression at %s", path)
	}
	for op, arg := range obj {
		switch op {
		case "prefix", "suffix":
			return parseAffix(op, arg, path)
		case "equals-ignore-case":
			s, ok := arg.(string)
			if !ok {
				return nil, bad("equals-ignore-case match pattern must be a string at %s", path)
			}
			return ignoreCase{s}, nil
		case "wildcard":
			return parseWildcard(arg, path)
		case "anything-but":
			return parseAnythingBut(arg, path)
		case "numeric":
			return parseNumeric(arg, path)
		case "exists":
			b, ok := arg.(bool)
			if !ok {
				return nil, bad("exists match pattern must be either true or false at %s", path)
			}
			return exists{b}, nil
		case "cidr":
			s, ok := arg.(string)
			if !ok {
				return nil, bad("prefix/cidr match pattern must be a string at %s", path)
			}
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, bad("Nonstandard IP address: %s at %s", s, path)
			}
			return cidr{p.Masked()}, nil
		default:
			return nil, bad("Unrecognized match type %s at %s", op, path)
		}
	}
	panic("unreachable")
}

func parseAffix(op string, arg any, path string) (matcher, error) {
	switch a := arg.(type) {
	case string:
		return affix{suffix: op == "suffix", s: a}, nil
	case map[string]any:
		if len(a) == 1 {
			if s, ok := a["equals-ignore-case"].(string); ok {
				return affix{suffix: op == "suffix", s: strings.ToLower(s), fold: true}, nil
			}
		}
	}
	return nil, bad("%s match pattern must be a string or {\"equals-ignore-case\": string} at %s", op, path)
}

func parseWildcard(arg any, path string) (matcher, error) {
	s, ok := arg.(string)
	if !ok {
		return nil, bad("wildcard match pattern must be a string at %s", path)
	}
	if strings.Contains(s, "**") {
		return nil, bad("Consecutive wildcard characters at pos %d at %s", strings.Index(s, "**")+1, path)
	}
	// Split on unescaped '*', unescaping "\*" and "\\".
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			if i+1 < len(s) && (s[i+1] == '*' || s[i+1] == '\\') {
				cur.WriteByte(s[i+1])
				i++
				continue
			}
			return nil, bad("Invalid escape character at pos %d at %s", i, path)
		}
		if c == '*' {
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	parts = append(parts, cur.String())
	return wildcard{parts}, nil
}

func parseAnythingBut(arg any, path string) (matcher, error) {
	switch a := arg.(type) {
	case string, json.Number:
		m, err := parseMatcher(a, path)
		if err != nil {
			return nil, err
		}
		return anythingBut{[]matcher{m}}, nil
	case []any:
		if len(a) == 0 {
			return nil, bad("Empty arrays are not allowed at %s", path)
		}
		var ms []matcher
		for _, item := range a {
			switch item.(type) {
			case string, json.Number:
			default:
				return nil, bad("Inside anything but list, start|null|boolean is not supported at %s", path)
			}
			m, err := parseMatcher(item, path)
			if err != nil {
				return nil, err
			}
			ms = append(ms, m)
		}
		return anythingBut{ms}, nil
	case map[string]any:
		if len(a) != 1 {
			return nil, bad("Only one key allowed in match expression at %s", path)
		}
		for op, inner := range a {
			switch op {
			case "prefix", "suffix":
				s, ok := inner.(string)
				if !ok {
					return nil, bad("%s match pattern must be a string at %s", op, path)
				}
				return anythingBut{[]matcher{affix{suffix: op == "suffix", s: s}}}, nil
			case "equals-ignore-case":
				var ms []matcher
				switch x := inner.(type) {
				case string:
					ms = append(ms, ignoreCase{x})
				case []any:
					for _, e := range x {
						s, ok := e.(string)
						if !ok {
							return nil, bad("Inside anything-but/equals-ignore-case list, number|start|null|boolean is not supported at %s", path)
						}
						ms = append(ms, ignoreCase{s})
					}
				}
				if len(ms) == 0 {
					return nil, bad("anything-but/equals-ignore-case match pattern must be a string or a non-empty array of strings at %s", path)
				}
				return anythingBut{ms}, nil
			case "wildcard":
				w, err := parseWildcard(inner, path)
				if err != nil {
					return nil, err
				}
				return anythingBut{[]matcher{w}}, nil
			}
			return nil, bad("Unsupported anything-but pattern: %s at %s", op, path)
		}
	}
	return nil, bad("Value of anything-but must be an array or single string/number value at %s", path)
}

func parseNumeric(arg any, path string) (matcher, error) {
	list, ok := arg.([]any)
	if !ok || len(list) == 0 || len(list)%2 != 0 || len(list) > 4 {
		return nil, bad("Value of numeric must be an array of one or two comparisons at %s", path)
	}
	n := numeric{lo: math.Inf(-1), hi: math.Inf(1)}
	seenLo, seenHi := false, false
	for i := 0; i < len(list); i += 2 {
		op, ok := list[i].(string)
		if !ok {
			return nil, bad("Invalid member in numeric match: %v at %s", list[i], path)
		}
		num, ok := list[i+1].(json.Number)
		if !ok {
			return nil, bad("Value of %s must be numeric at %s", op, path)
		}
		f, err := num.Float64()
		if err != nil || math.IsInf(f, 0) || f < -5e9 || f > 5e9 {
			return nil, bad("Value of %s must be a number between -5.0E9 and 5.0E9 at %s", op, path)
		}
		switch op {
		case "=":
			if len(list) != 2 {
				return nil, bad("Invalid member in numeric match: = must be alone at %s", path)
			}
			n.lo, n.hi, n.loIn, n.hiIn = f, f, true, true
			seenLo, seenHi = true, true
		case ">", ">=":
			if seenLo {
				return nil, bad("Invalid member in numeric match: %s at %s", op, path)
			}
			n.lo, n.loIn, seenLo = f, op == ">=", true
		case "<", "<=":
			if seenHi {
				return nil, bad("Invalid member in numeric match: %s at %s", op, path)
			}
			n.hi, n.hiIn, seenHi = f, op == "<=", true
		default:
			return nil, bad("Unrecognized numeric range operator: %s at %s", op, path)
		}
	}
	if n.lo > n.hi || (n.lo == n.hi && !(n.loIn && n.hiIn)) {
		return nil, bad("Bottom must be less than top at %s", path)
	}
	return n, nil
}

// Matchers.

type exact struct{ v any } // nil, string, bool, float64

func (m exact) match(v any) bool {
	switch want := m.v.(type) {
	case float64:
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == want
	default:
		return v == m.v
	}
}

type affix struct {
	suffix, fold bool
	s            string
}

func (m affix) match(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	if m.fold {
		s = strings.ToLower(s)
	}
	if m.suffix {
		return strings.HasSuffix(s, m.s)
	}
	return strings.HasPrefix(s, m.s)
}

type ignoreCase struct{ s string }

func (m ignoreCase) match(v any) bool {
	s, ok := v.(string)
	return ok && strings.EqualFold(s, m.s)
}

type wildcard struct{ parts []string } // the text between the '*'s

func (m wildcard) match(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	p := m.parts
	if len(p) == 1 {
		return s == p[0]
	}
	if !strings.HasPrefix(s, p[0]) {
		return false
	}
	s = s[len(p[0]):]
	last := p[len(p)-1]
	for _, mid := range p[1 : len(p)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, last)
}

type anythingBut struct{ not []matcher }

func (m anythingBut) match(v any) bool {
	if v == nil {
		return false
	}
	for _, n := range m.not {
		if n.match(v) {
			return false
		}
	}
	return true
}

type numeric struct {
	lo, hi     float64
	loIn, hiIn bool
}

func (m numeric) match(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, err := n.Float64()
	if err != nil {
		return false
	}
	return (f > m.lo || (m.loIn && f == m.lo)) && (f < m.hi || (m.hiIn && f == m.hi))
}

type exists struct{ want bool } // matched in matchField

func (exists) match(any) bool { return false }

type cidr struct{ p netip.Prefix }

func (m cidr) match(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	a, err := netip.ParseAddr(s)
	return err == nil && m.p.Contains(a)
}

// Matching.

// Match says whether the event (JSON text) matches the pattern.
func (p *Pattern) Match(event []byte) bool {
	v, err := decodeJSON(event)
	if err != nil {
		return false
	}
	obj, _ := v.(map[string]any)
	return p.MatchValue(obj)
}

// MatchValue matches an event already decoded (json.Number numbers).
func (p *Pattern) MatchValue(event map[string]any) bool { return p.root.matchObj(event) }

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func (n *node) matchObj(obj map[string]any) bool {
	for key, f := range n.fields {
		v, present := obj[key]
		if !f.matchValue(v, present) {
			return false
		}
	}
	for _, alts := range n.ors {
		ok := false
		for _, a := range alts {
			if a.matchObj(obj) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func (f *field) matchValue(v any, present bool) bool {
	if f.sub != nil {
		switch x := v.(type) {
		case map[string]any:
			return f.sub.matchObj(x)
		case []any:
			for _, e := range x {
				if o, ok := e.(map[string]any); ok && f.sub.matchObj(o) {
					return true
				}
			}
			return f.sub.matchObj(nil)
		default:
			return f.sub.matchObj(nil)
		}
	}
	for _, m := range f.matchers {
		if e, ok := m.(exists); ok {
			isLeaf := present
			if _, obj := v.(map[string]any); obj {
				isLeaf = false
			}
			if e.want == isLeaf {
				return true
			}
			continue
		}
		if !present {
			continue
		}
		if list, ok := v.([]any); ok {
			for _, item := range list {
				if m.match(item) {
					return true
				}
			}
			continue
		}
		if m.match(v) {
			return true
		}
	}
	return false
}
