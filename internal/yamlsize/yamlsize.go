// Package yamlsize measures what a YAML document becomes once its aliases
// are expanded, without expanding them: a few hundred bytes of anchors
// and aliases within aliases can stand for billions of values.
package yamlsize

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Limits bound a document's expansion: its values (every mapping,
// sequence and scalar, keys included) and the bytes of its scalars.
type Limits struct {
	Values int64
	Bytes  int64
}

// Default are the limits of the YAML a user gives (templates,
// definitions, test files): a million values, 64 MiB of text.
var Default = Limits{Values: 1_000_000, Bytes: 64 << 20}

// TooLargeError is the error of a document that expands past its limits.
type TooLargeError struct {
	Line   int    // of the node whose expansion went past the limit
	What   string // "values" or "bytes"
	Limit  int64
	Values int64 // values and bytes counted when the limit was passed
	Bytes  int64
}

func (e *TooLargeError) Error() string {
	if e.What == "bytes" {
		return fmt.Sprintf("line %d: the document expands to more than %d bytes of text (aliases within aliases?)", e.Line, e.Limit)
	}
	return fmt.Sprintf("line %d: the document expands to more than %d values (aliases within aliases?)", e.Line, e.Limit)
}

// maxDepth bounds the walk's nesting; deeper documents are for the
// converters to refuse.
const maxDepth = 10_000

type size struct{ values, bytes int64 }

type checker struct {
	limits Limits
	memo   map[*yaml.Node]size
}

// Check returns a *TooLargeError if the document rooted at n expands to
// more values or bytes than limits allow. Each node is measured once, an
// alias by the size of what it names, so Check takes time in proportion
// to the document as written.
func Check(n *yaml.Node, limits Limits) error {
	c := &checker{limits: limits, memo: map[*yaml.Node]size{}}
	_, err := c.size(n, 0)
	return err
}

func (c *checker) size(n *yaml.Node, depth int) (size, error) {
	if s, ok := c.memo[n]; ok {
		return s, nil
	}
	if depth > maxDepth {
		return size{}, fmt.Errorf("line %d: nested more than %d levels deep", n.Line, maxDepth)
	}
	s := size{values: 1, bytes: int64(len(n.Value))}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return size{}, fmt.Errorf("line %d: an alias naming nothing", n.Line)
		}
		inner, err := c.size(n.Alias, depth+1)
		if err != nil {
			return size{}, err
		}
		s = inner
	}
	for _, child := range n.Content {
		cs, err := c.size(child, depth+1)
		if err != nil {
			return size{}, err
		}
		// Both stay below their limits, so the sums cannot overflow.
		s.values += cs.values
		s.bytes += cs.bytes
		if err := c.within(n, s); err != nil {
			return size{}, err
		}
	}
	if err := c.within(n, s); err != nil {
		return size{}, err
	}
	c.memo[n] = s
	return s, nil
}

func (c *checker) within(n *yaml.Node, s size) error {
	switch {
	case s.values > c.limits.Values:
		return &TooLargeError{Line: n.Line, What: "values", Limit: c.limits.Values, Values: s.values, Bytes: s.bytes}
	case s.bytes > c.limits.Bytes:
		return &TooLargeError{Line: n.Line, What: "bytes", Limit: c.limits.Bytes, Values: s.values, Bytes: s.bytes}
	}
	return nil
}
