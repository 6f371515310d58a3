package jsonpath

import (
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"stepwise/jsonvalue"
)

// expr is a compiled filter condition.
type expr interface {
	// match reports whether item passes; root is the value "$" stands for.
	match(item, root any) bool
}

type orExpr []expr

func (e orExpr) match(item, root any) bool {
	for _, x := range e {
		if x.match(item, root) {
			return true
		}
	}
	return false
}

type andExpr []expr

func (e andExpr) match(item, root any) bool {
	for _, x := range e {
		if !x.match(item, root) {
			return false
		}
	}
	return true
}

type notExpr struct{ e expr }

func (e notExpr) match(item, root any) bool { return !e.e.match(item, root) }

// existExpr is [?(@.a)] (want true) or [?(!@.a)] (want false). A member
// that holds null exists.
type existExpr struct {
	path     *Path
	relative bool
	want     bool
}

func (e *existExpr) match(item, root any) bool {
	start := root
	if e.relative {
		start = item
	}
	if e.path.definite {
		_, failed := e.path.walk(start)
		return (failed < 0) == e.want
	}
	return (len(e.path.collect(start, 0, root, nil, nil)) > 0) == e.want
}

type cmpOp uint8

const (
	opEq cmpOp = iota
	opNe
	opStrictEq
	opStrictNe
	opLt
	opLe
	opGt
	opGe
	opRegex
	opIn
	opNin
	opContains
	opSize
	opEmpty
	opSubsetOf
	opAnyOf
	opNoneOf
)

// operand is one side of a comparison: a path, a literal or a pattern.
type operand struct {
	path     *Path
	relative bool // the path starts at "@" rather than "$"
	lit      any
	re       *regexp.Regexp
}

// value returns the operand's value; ok is false when a definite path
// selects nothing (Jayway's "undefined"). An indefinite path gives the array
// of its matches.
func (o *operand) value(item, root any) (v any, ok bool) {
	if o.path == nil {
		return o.lit, true
	}
	start := root
	if o.relative {
		start = item
	}
	if o.path.definite {
		v, failed := o.path.walk(start)
		return v, failed < 0
	}
	return o.path.collect(start, 0, root, nil, []any{}), true
}

type compareExpr struct {
	op          cmpOp
	left, right *operand
}

// match follows Jayway's evaluators. A comparison with an undefined side is
// false, so != is true; numbers and strings compare across types the way
// Jayway does (see equal and compare).
func (e *compareExpr) match(item, root any) bool {
	if e.op == opRegex {
		re, other := e.left.re, e.right
		if re == nil {
			re, other = e.right.re, e.left
		}
		v, _ := other.value(item, root)
		if arr, ok := v.([]any); ok {
			for _, x := range arr {
				if re.MatchString(regexInput(x)) {
					return true
				}
			}
			return false
		}
		return re.MatchString(regexInput(v))
	}
	l, lok := e.left.value(item, root)
	r, rok := e.right.value(item, root)
	defined := lok && rok
	switch e.op {
	case opEq:
		return defined && equal(l, r)
	case opNe:
		return !(defined && equal(l, r))
	case opStrictEq:
		return defined && kindOf(l) == kindOf(r) && equal(l, r)
	case opStrictNe:
		return !(defined && kindOf(l) == kindOf(r) && equal(l, r))
	case opLt, opLe, opGt, opGe:
		if !defined {
			return false
		}
		c, ok := compare(l, r)
		if !ok {
			return false
		}
		switch e.op {
		case opLt:
			return c < 0
		case opLe:
			return c <= 0
		case opGt:
			return c > 0
		}
		return c >= 0
	case opIn:
		return defined && in(l, r)
	case opNin:
		return !(defined && in(l, r))
	case opContains:
		if !defined {
			return false
		}
		switch t := l.(type) {
		case string:
			s, ok := r.(string)
			return ok && strings.Contains(t, s)
		case []any:
			for _, x := range t {
				if equal(r, x) {
					return true
				}
			}
		}
		return false
	case opSize:
		n, ok := r.(jsonvalue.Number)
		if !defined || !ok {
			return false
		}
		want, ok := n.Int64()
		if !ok {
			return false
		}
		got, ok := sizeOf(l)
		return ok && got == want
	case opEmpty:
		b, ok := r.(bool)
		if !defined || !ok {
			return false
		}
		got, ok := sizeOf(l)
		return ok && (got == 0) == b
	case opSubsetOf, opAnyOf, opNoneOf:
		la, lok := l.([]any)
		ra, rok := r.([]any)
		if !defined || !lok || !rok {
			return false
		}
		switch e.op {
		case opSubsetOf:
			for _, x := range la {
				if !in(x, ra) {
					return false
				}
			}
			return true
		case opAnyOf:
			for _, x := range la {
				if in(x, ra) {
					return true
				}
			}
			return false
		}
		for _, x := range la {
			if in(x, ra) {
				return false
			}
		}
		return true
	}
	return false
}

// equal is Jayway's ==. Arrays and objects compare by value; a number
// equals a string holding the same number; a string equals a number whose
// text is the same string.
func equal(a, b any) bool {
	switch x := a.(type) {
	case jsonvalue.Number:
		switch y := b.(type) {
		case jsonvalue.Number:
			return jsonvalue.CompareNumbers(x, y) == 0
		case string:
			r, ok := parseDecimal(y)
			return ok && x.Rat().Cmp(r) == 0
		}
	case string:
		switch y := b.(type) {
		case string:
			return x == y
		case jsonvalue.Number:
			return x == string(y)
		}
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case []any, *jsonvalue.Object:
		switch b.(type) {
		case []any, *jsonvalue.Object:
			return jsonvalue.Equal(a, b)
		}
	}
	return false
}

// compare orders two numbers or two strings. As in Jayway, a number and a
// string compare as text.
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case jsonvalue.Number:
		switch y := b.(type) {
		case jsonvalue.Number:
			return jsonvalue.CompareNumbers(x, y), true
		case string:
			return strings.Compare(string(x), y), true
		}
	case string:
		switch y := b.(type) {
		case string:
			return strings.Compare(x, y), true
		case jsonvalue.Number:
			return strings.Compare(x, string(y)), true
		}
	}
	return 0, false
}

// in reports whether list (an array) holds a value equal to v.
func in(v, list any) bool {
	arr, ok := list.([]any)
	if !ok {
		return false
	}
	for _, x := range arr {
		if equal(v, x) {
			return true
		}
	}
	return false
}

// kindOf groups values the way Jayway's === does: arrays and objects are
// both JSON nodes.
func kindOf(v any) int {
	switch v.(type) {
	case jsonvalue.Number:
		return 1
	case string:
		return 2
	case bool:
		return 3
	case nil:
		return 4
	}
	return 5
}

// sizeOf is the size Jayway's size and empty operators use: the length of
// a string in UTF-16 units, or the number of elements or members.
func sizeOf(v any) (int64, bool) {
	switch t := v.(type) {
	case string:
		n := 0
		for _, r := range t {
			n++
			if r > 0xFFFF {
				n++
			}
		}
		return int64(n), true
	case []any:
		return int64(len(t)), true
	case *jsonvalue.Object:
		return int64(t.Len()), true
	}
	return 0, false
}

// regexInput is the text =~ matches a value against: strings and numbers
// as they are, booleans as true/false, anything else as "".
func regexInput(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case jsonvalue.Number:
		return string(t)
	case bool:
		if t {
			return "true"
		}
		return "false"
	}
	return ""
}

// parseDecimal reads a string as Java's BigDecimal would: an optional sign,
// digits with an optional point, and an optional exponent.
func parseDecimal(s string) (*big.Rat, bool) {
	if s == "" || len(s) > 400 || !utf8.ValidString(s) {
		return nil, false
	}
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			digits = true
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
		default:
			return nil, false
		}
	}
	if !digits {
		return nil, false
	}
	return new(big.Rat).SetString(s)
}
