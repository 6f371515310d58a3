package cfn

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"stepwise/internal/yamlsize"
)

// shortForms maps CloudFormation's short-form YAML tags to the long form's
// key.
var shortForms = map[string]string{
	"!Ref":         "Ref",
	"!Condition":   "Condition",
	"!GetAtt":      "Fn::GetAtt",
	"!Sub":         "Fn::Sub",
	"!Join":        "Fn::Join",
	"!If":          "Fn::If",
	"!Equals":      "Fn::Equals",
	"!Not":         "Fn::Not",
	"!And":         "Fn::And",
	"!Or":          "Fn::Or",
	"!Select":      "Fn::Select",
	"!Split":       "Fn::Split",
	"!FindInMap":   "Fn::FindInMap",
	"!Base64":      "Fn::Base64",
	"!GetAZs":      "Fn::GetAZs",
	"!ImportValue": "Fn::ImportValue",
	"!Cidr":        "Fn::Cidr",
	"!Transform":   "Fn::Transform",
}

// decodeYAML reads YAML; warnings, when not nil, takes a duplicate
// key's warning (the last one wins), else a duplicate key is an error.
func decodeYAML(data []byte, warnings *[]string) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("template: not valid YAML: %w", err)
	}
	if doc.Kind == 0 {
		return nil, fmt.Errorf("template: the template is empty")
	}
	// Aliases expanding aliases must not build an exponentially large
	// value (nor one whose JSON is).
	if err := yamlsize.Check(&doc, yamlsize.Default); err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	return (&converter{warnings: warnings}).fromNode(&doc, 0)
}

// converter turns YAML nodes into plain values.
type converter struct {
	warnings *[]string // nil: a duplicate key is an error
}

// maxDepth bounds nesting (and alias expansion) so a hostile template
// cannot exhaust the stack.
const maxDepth = 200

func (c *converter) fromNode(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("template: line %d: nested more than %d levels deep", n.Line, maxDepth)
	}
	if long, ok := shortForms[n.Tag]; ok {
		v, err := c.untagged(n, depth)
		if err != nil {
			return nil, err
		}
		if long == "Fn::GetAtt" {
			if s, ok := v.(string); ok {
				id, attr, found := strings.Cut(s, ".")
				if !found || id == "" || attr == "" {
					return nil, fmt.Errorf("template: line %d: !GetAtt %q must be LogicalId.Attribute", n.Line, s)
				}
				v = []any{id, attr}
			}
		}
		return map[string]any{long: v}, nil
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return nil, fmt.Errorf("template: line %d: unknown tag %s (the short forms are !Ref, !GetAtt, !Sub, !Join, !If, !Equals, !Not, !And, !Or, !Select, !Split, !FindInMap, !Base64, !GetAZs, !ImportValue, !Condition, !Cidr)", n.Line, n.Tag)
	}
	return c.untagged(n, depth)
}

// untagged converts a node as if it had no short-form tag.
func (c *converter) untagged(n *yaml.Node, depth int) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.fromNode(n.Content[0], depth+1)
	case yaml.AliasNode:
		return c.fromNode(n.Alias, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, child := range n.Content {
			v, err := c.fromNode(child, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("template: line %d: a key must be a plain string", k.Line)
			}
			if k.Tag == "!!merge" {
				return nil, fmt.Errorf("template: line %d: merge keys (<<) are not supported in templates", k.Line)
			}
			if _, dup := out[k.Value]; dup {
				if c.warnings == nil {
					return nil, fmt.Errorf("template: line %d: duplicate key %q", k.Line, k.Value)
				}
				// As CloudFormation and SAM read it: the last one wins.
				*c.warnings = append(*c.warnings, fmt.Sprintf("template: line %d: duplicate key %q: this one is taken, the one before is ignored", k.Line, k.Value))
			}
			v, err := c.fromNode(val, depth+1)
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, fmt.Errorf("template: line %d: unexpected YAML node", n.Line)
}

func scalar(n *yaml.Node) (any, error) {
	if _, short := shortForms[n.Tag]; short {
		return n.Value, nil // a short form's argument is text: !Ref Name
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("template: line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int", "!!float":
		if json.Valid([]byte(n.Value)) {
			return json.Number(n.Value), nil
		}
		// YAML spellings JSON has not (0x1F, .5, +1, .inf): their value.
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("template: line %d: %w", n.Line, err)
		}
		if f != f || f > 1e308 || f < -1e308 {
			return n.Value, nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	}
	return n.Value, nil
}
