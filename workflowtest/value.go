package workflowtest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"stepwise/internal/boundedfile"
	"stepwise/internal/yamlsize"
	"stepwise/jsonvalue"
)

// MaxFileSize bounds the files a test reads (test files, mocks, mock
// configurations, input files, recordings): only regular files are read,
// at most this much.
const MaxFileSize = 32 << 20

// MaxDefinitionSize bounds a definition file, as AWS bounds a definition.
const MaxDefinitionSize = 1 << 20

// readFile reads a file a test names: a regular file of at most limit
// bytes. The files are regular and bounded, so their reads end; they are
// not stopped halfway.
func readFile(path string, limit int64) ([]byte, error) {
	return boundedfile.Read(context.Background(), path, limit)
}

// isYAML reports whether a file's name says it holds YAML.
func isYAML(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// readValue reads a JSON file, or a YAML file by its extension, as a JSON
// value.
func readValue(path string) (any, error) {
	data, err := readFile(path, MaxFileSize)
	if err != nil {
		return nil, err
	}
	return parseValue(path, data)
}

// parseValue parses data as YAML when path names a YAML file, as JSON
// otherwise.
func parseValue(path string, data []byte) (any, error) {
	if isYAML(path) {
		return ParseYAML(data)
	}
	return jsonvalue.Parse(data)
}

// ParseYAML reads one YAML document as a JSON value: mappings become
// objects in the order written, numbers keep their literal form when it is
// a JSON number, anchors, aliases and merge keys (<<) are resolved, and
// timestamps stay the strings written. A value JSON cannot hold (.inf,
// .nan, a non-scalar key) is an error naming its line, and so is a
// document whose aliases expand past yamlsize.Default (a million values,
// 64 MiB of text).
func ParseYAML(data []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		return nil, fmt.Errorf("line %d: more than one YAML document", next.Line)
	}
	if err := yamlsize.Check(&doc, yamlsize.Default); err != nil {
		return nil, err
	}
	return yamlValue(&doc, 0)
}

func yamlValue(n *yaml.Node, depth int) (any, error) {
	if depth > 1000 {
		return nil, fmt.Errorf("line %d: nested too deeply", n.Line)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlValue(n.Content[0], depth+1)
	case yaml.AliasNode:
		return yamlValue(n.Alias, depth+1)
	case yaml.SequenceNode:
		arr := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		return arr, nil
	case yaml.MappingNode:
		return yamlMapping(n, depth)
	case yaml.ScalarNode:
		return yamlScalar(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func yamlMapping(n *yaml.Node, depth int) (any, error) {
	obj := jsonvalue.NewObject(len(n.Content) / 2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a mapping key must be a scalar", k.Line)
		}
		if obj.Has(k.Value) {
			return nil, fmt.Errorf("line %d: key %q given twice", k.Line, k.Value)
		}
		val, err := yamlValue(v, depth+1)
		if err != nil {
			return nil, err
		}
		obj.Set(k.Value, val)
	}
	// Merged mappings fill in the keys not given; the first merged wins.
	for _, m := range merges {
		srcs := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			srcs = m.Content
		}
		for _, src := range srcs {
			v, err := yamlValue(src, depth+1)
			if err != nil {
				return nil, err
			}
			mo, ok := v.(*jsonvalue.Object)
			if !ok {
				return nil, fmt.Errorf("line %d: << must merge a mapping", src.Line)
			}
			for k, mv := range mo.All() {
				if !obj.Has(k) {
					obj.Set(k, mv)
				}
			}
		}
	}
	return obj, nil
}

func yamlScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, err
		}
		return b, nil
	case "!!int", "!!float":
		if v, err := jsonvalue.ParseString(n.Value); err == nil {
			if num, ok := v.(jsonvalue.Number); ok {
				return num, nil
			}
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %s is not a JSON number", n.Line, n.Value)
		}
		if n.ShortTag() == "!!int" {
			var i int64
			if err := n.Decode(&i); err == nil {
				return jsonvalue.NumberFromInt(i), nil
			}
		}
		return jsonvalue.NumberFromFloat(f), nil
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML tag %s", n.Line, n.Tag)
}
