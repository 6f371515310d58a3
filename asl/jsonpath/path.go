package jsonpath

import (
	"errors"
	"strings"
)

// ErrNotFound is returned when a definite path selects nothing.
var ErrNotFound = errors.New("no results for path")

// Path is a compiled ASL path. (Placeholder implementation: root only.)
type Path struct {
	text     string
	root     Root
	variable string
}

// Compile parses a path.
func Compile(expr string) (*Path, error) {
	p := &Path{text: expr}
	switch {
	case expr == "$" || strings.HasPrefix(expr, "$.") || strings.HasPrefix(expr, "$["):
		p.root = RootInput
	case strings.HasPrefix(expr, "$$"):
		p.root = RootContext
	case strings.HasPrefix(expr, "$"):
		p.root = RootVariable
		p.variable = strings.TrimPrefix(expr, "$")
	default:
		return nil, errors.New("path must start with '$'")
	}
	return p, nil
}

func (p *Path) String() string     { return p.text }
func (p *Path) Normalized() string { return p.text }
func (p *Path) Root() Root         { return p.root }
func (p *Path) Variable() string   { return p.variable }
func (p *Path) IsDefinite() bool   { return true }
func (p *Path) IsReference() bool  { return true }

// Eval evaluates the path in env.
func (p *Path) Eval(env *Env) (any, error) {
	if p.text == "$" {
		return env.Input, nil
	}
	return nil, ErrNotFound
}

// Set places v at the path inside root and returns the new root.
func (p *Path) Set(root, v any) (any, error) {
	if p.text == "$" {
		return v, nil
	}
	return nil, errors.New("not implemented")
}
