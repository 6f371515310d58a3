package jsonvalue

import (
	"errors"
	"io"
)

// DefaultMaxDepth is the deepest nesting of arrays and objects Parse accepts.
const DefaultMaxDepth = 1000

// Parse parses one JSON text. Invalid UTF-8, trailing data and nesting
// deeper than DefaultMaxDepth are errors (a *SyntaxError). A member name
// given twice keeps its first position and its last value.
func Parse(data []byte) (any, error) { return ParseWith(data, Options{}) }

// ParseString is Parse for a string.
func ParseString(s string) (any, error) { return Parse([]byte(s)) }

// ParseDepth is Parse with a nesting limit.
func ParseDepth(data []byte, maxDepth int) (any, error) {
	return ParseWith(data, Options{MaxDepth: maxDepth})
}

// Options tune ParseWith.
type Options struct {
	// MaxDepth is the nesting limit; 0 means DefaultMaxDepth.
	MaxDepth int
	// OnDuplicate, when set, is told of each member name given again in
	// an object, with the object (which keeps one member of that name).
	OnDuplicate func(o *Object, name string)
}

// ParseWith is Parse with options.
func ParseWith(data []byte, opts Options) (any, error) {
	d := decoder{s: Scanner{data: data, maxDepth: opts.MaxDepth}, dup: opts.OnDuplicate}
	if d.s.maxDepth == 0 {
		d.s.maxDepth = DefaultMaxDepth
	}
	if err := d.s.next(); err != nil {
		return nil, err
	}
	v, err := d.value(d.s.tok)
	if err != nil {
		return nil, err
	}
	if err := d.s.next(); !errors.Is(err, io.EOF) {
		return nil, err
	}
	return v, nil
}

// Valid reports whether data is one well-formed JSON text.
func Valid(data []byte) bool {
	s := NewScanner(data)
	for {
		_, err := s.Next()
		if err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

// decoder builds values from a scanner's tokens.
type decoder struct {
	s   Scanner
	dup func(*Object, string)
}

func (d *decoder) value(t Token) (any, error) {
	switch t.Kind {
	case BeginObject:
		return d.object()
	case BeginArray:
		return d.array()
	case StringToken:
		return d.s.Text(t), nil
	case NumberToken:
		return Number(d.s.data[t.Start:t.End]), nil
	case TrueToken:
		return true, nil
	case FalseToken:
		return false, nil
	default: // NullToken
		return nil, nil
	}
}

func (d *decoder) object() (any, error) {
	o := &Object{}
	for {
		if err := d.s.next(); err != nil {
			return nil, err
		}
		if d.s.tok.Kind == EndObject {
			return o, nil
		}
		k := d.s.Text(d.s.tok)
		if err := d.s.next(); err != nil {
			return nil, err
		}
		v, err := d.value(d.s.tok)
		if err != nil {
			return nil, err
		}
		if d.dup != nil && o.Has(k) {
			d.dup(o, k)
		}
		o.Set(k, v)
	}
}

func (d *decoder) array() (any, error) {
	a := []any{}
	for {
		if err := d.s.next(); err != nil {
			return nil, err
		}
		if d.s.tok.Kind == EndArray {
			return a, nil
		}
		v, err := d.value(d.s.tok)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
}
