package bus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// InputTransformer is a target's InputTransformer: values picked out of
// the event by JSON path, put into a template at their <name>.
type InputTransformer struct {
	InputPathsMap map[string]string `json:"InputPathsMap,omitempty"`
	InputTemplate string            `json:"InputTemplate"`
}

// check refuses a transformer EventBridge refuses.
func (t *InputTransformer) check() error {
	if t.InputTemplate == "" {
		return fmt.Errorf("InputTransformer needs an InputTemplate")
	}
	if len(t.InputPathsMap) > 100 {
		return fmt.Errorf("InputTransformer's InputPathsMap has %d entries, at most 100", len(t.InputPathsMap))
	}
	for k, p := range t.InputPathsMap {
		if strings.HasPrefix(k, "aws.events.") {
			return fmt.Errorf("InputTransformer's InputPathsMap key %q: names starting aws.events. are reserved", k)
		}
		if _, err := parsePath(p); err != nil {
			return fmt.Errorf("InputTransformer's InputPathsMap %q: %w", k, err)
		}
	}
	return nil
}

// step is one step of a JSON path: a member's name or an index.
type step struct {
	name  string
	index int // -1: name
}

// parsePath reads the JSON paths targets use: $, $.a.b, $.a[0], $['a'].
func parsePath(p string) ([]step, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("JSON path %q does not start with $", p)
	}
	var steps []step
	s := p[1:]
	for s != "" {
		switch {
		case s[0] == '.':
			end := strings.IndexAny(s[1:], ".[")
			if end < 0 {
				end = len(s) - 1
			}
			name := s[1 : 1+end]
			if name == "" {
				return nil, fmt.Errorf("JSON path %q has an empty name", p)
			}
			steps = append(steps, step{name: name, index: -1})
			s = s[1+end:]
		case strings.HasPrefix(s, "['"):
			end := strings.Index(s, "']")
			if end < 0 {
				return nil, fmt.Errorf("JSON path %q: unclosed ['", p)
			}
			steps = append(steps, step{name: s[2:end], index: -1})
			s = s[end+2:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, fmt.Errorf("JSON path %q: unclosed [", p)
			}
			i, err := strconv.Atoi(s[1:end])
			if err != nil || i < 0 {
				return nil, fmt.Errorf("JSON path %q: %q is not an index", p, s[1:end])
			}
			steps = append(steps, step{index: i})
			s = s[end+1:]
		default:
			return nil, fmt.Errorf("JSON path %q is not valid at %q", p, s)
		}
	}
	return steps, nil
}

// selectPath is the value at path p of v, or false.
func selectPath(v any, p string) (any, bool) {
	steps, err := parsePath(p)
	if err != nil {
		return nil, false
	}
	for _, st := range steps {
		if st.index >= 0 {
			list, ok := v.([]any)
			if !ok || st.index >= len(list) {
				return nil, false
			}
			v = list[st.index]
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[st.name]; !ok {
			return nil, false
		}
	}
	return v, true
}

// apply makes the target's input of an event: the template with each
// <name> replaced by its value. A string inside the template's quotes
// goes in as its text; elsewhere a value goes in as JSON. The
// predefined <aws.events.rule-arn>, <aws.events.rule-name>,
// <aws.events.event.ingestion-time>, <aws.events.event> and
// <aws.events.event.json> are the rule's and the event's.
func (t *InputTransformer) apply(event any, raw []byte, ruleArn, ruleName, ingestion string) []byte {
	values := map[string]any{}
	for k, p := range t.InputPathsMap {
		if v, ok := selectPath(event, p); ok {
			values[k] = v
		} else {
			values[k] = nil
		}
	}
	values["aws.events.rule-arn"] = ruleArn
	values["aws.events.rule-name"] = ruleName
	values["aws.events.event.ingestion-time"] = ingestion
	values["aws.events.event"] = json.RawMessage(raw)
	values["aws.events.event.json"] = json.RawMessage(raw)
	var out bytes.Buffer
	s := t.InputTemplate
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && inString && i+1 < len(s) {
			out.WriteByte(c)
			out.WriteByte(s[i+1])
			i++
			continue
		}
		if c == '"' {
			inString = !inString
		}
		if c == '<' {
			if end := strings.IndexByte(s[i:], '>'); end > 0 {
				name := s[i+1 : i+end]
				if v, ok := values[name]; ok {
					out.Write(render(v, inString))
					i += end
					continue
				}
			}
		}
		out.WriteByte(c)
	}
	return out.Bytes()
}

// render is a value as it goes into a template.
func render(v any, inString bool) []byte {
	if inString {
		if s, ok := v.(string); ok {
			b, _ := json.Marshal(s)
			return b[1 : len(b)-1]
		}
		if v == nil {
			return nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}
