package jsonpath

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNesting bounds how deeply filters, parentheses and JSON literals may
// nest inside one path, so that hostile input cannot exhaust the stack.
const maxNesting = 64

// SyntaxError describes a path that does not compile.
type SyntaxError struct {
	Path   string // the text as written
	Offset int    // byte offset of the error in Path
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid path %q: %s (at offset %d)", e.Path, e.Msg, e.Offset)
}

// Compile parses a path. Surrounding whitespace is ignored, as Jayway does;
// String still returns the text as written.
func Compile(expr string) (*Path, error) {
	ps := &parser{src: expr, end: len(expr)}
	for ps.pos < ps.end && isSpace(expr[ps.pos]) {
		ps.pos++
	}
	for ps.end > ps.pos && isSpace(expr[ps.end-1]) {
		ps.end--
	}
	if ps.pos >= ps.end {
		return nil, ps.errorf(ps.pos, "empty path")
	}
	if expr[ps.pos] != '$' {
		return nil, ps.errorf(ps.pos, "a path must start with '$'")
	}
	p := &Path{text: expr}
	ps.pos++
	if ps.pos < ps.end {
		if expr[ps.pos] == '$' {
			p.root = RootContext
			ps.pos++
		} else if r, _ := utf8.DecodeRuneInString(expr[ps.pos:ps.end]); isIdentStart(r) {
			start := ps.pos
			for ps.pos < ps.end {
				r, size := utf8.DecodeRuneInString(expr[ps.pos:ps.end])
				if !isIdentPart(r) {
					break
				}
				ps.pos += size
			}
			p.root = RootVariable
			p.variable = expr[start:ps.pos]
		}
	}
	segs, err := ps.segments(false)
	if err != nil {
		return nil, err
	}
	p.segs = segs
	p.finish()
	return p, nil
}

// MustCompile is Compile for paths known to be valid; it panics on error.
func MustCompile(expr string) *Path {
	p, err := Compile(expr)
	if err != nil {
		panic(err)
	}
	return p
}

type parser struct {
	src   string
	pos   int
	end   int // len(src) less trailing whitespace
	depth int
}

func (ps *parser) errorf(offset int, format string, args ...any) error {
	return &SyntaxError{Path: ps.src, Offset: offset, Msg: fmt.Sprintf(format, args...)}
}

func (ps *parser) more() bool { return ps.pos < ps.end }

func (ps *parser) peek(off int) byte {
	if ps.pos+off < ps.end {
		return ps.src[ps.pos+off]
	}
	return 0
}

func (ps *parser) skipSpace() {
	for ps.pos < ps.end && isSpace(ps.src[ps.pos]) {
		ps.pos++
	}
}

func (ps *parser) has(s string) bool { return strings.HasPrefix(ps.src[ps.pos:ps.end], s) }

func (ps *parser) expect(c byte, what string) error {
	ps.skipSpace()
	if !ps.more() {
		return ps.errorf(ps.pos, "missing %s", what)
	}
	if ps.src[ps.pos] != c {
		return ps.errorf(ps.pos, "expected %s, found %q", what, ps.src[ps.pos])
	}
	ps.pos++
	return nil
}

func (ps *parser) nest() error {
	ps.depth++
	if ps.depth > maxNesting {
		return ps.errorf(ps.pos, "expression nested too deeply")
	}
	return nil
}

// segments reads the segments after a root. At the top level every
// character must belong to the path; inside a filter the path ends at the
// first character that cannot continue it.
func (ps *parser) segments(inFilter bool) ([]segment, error) {
	var segs []segment
	for ps.more() {
		start := ps.pos
		var seg segment
		var err error
		switch ps.src[ps.pos] {
		case '.':
			descend := ps.peek(1) == '.'
			if descend {
				ps.pos += 2
			} else {
				ps.pos++
			}
			if !ps.more() || (inFilter && isFilterStop(ps.src[ps.pos])) {
				if descend {
					return nil, ps.errorf(start, "a path must not end with '..'")
				}
				return nil, ps.errorf(start, "a path must not end with '.'")
			}
			switch ps.src[ps.pos] {
			case '.':
				return nil, ps.errorf(ps.pos, "unexpected '.'")
			case '[':
				seg, err = ps.bracket()
			case '*':
				ps.pos++
				seg = segment{kind: segWildcard}
			default:
				seg, err = ps.dotName(inFilter)
			}
			seg.descend = descend
			if err == nil && descend && seg.kind == segFunc {
				err = ps.errorf(start, "a function cannot follow '..'")
			}
		case '[':
			seg, err = ps.bracket()
		default:
			if inFilter {
				return segs, nil
			}
			return nil, ps.errorf(ps.pos, "unexpected %q, expected '.' or '['", ps.src[ps.pos])
		}
		if err != nil {
			return nil, err
		}
		if len(segs) > 0 && segs[len(segs)-1].kind == segFunc {
			return nil, ps.errorf(start, "a function must end the path")
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// dotName reads the name after a '.'. Like Jayway, a dot name runs up to
// the next '.', '[' or '(' and may hold any other character except a space
// (inside a filter it also ends at whitespace, ')' and operators).
func (ps *parser) dotName(inFilter bool) (segment, error) {
	start := ps.pos
	for ps.more() {
		c := ps.src[ps.pos]
		if c == '.' || c == '[' || c == '(' {
			break
		}
		if inFilter && isFilterStop(c) {
			break
		}
		if c == ' ' {
			return segment{}, ps.errorf(ps.pos, "use bracket notation ['my name'] for a name that contains spaces")
		}
		ps.pos++
	}
	name := ps.src[start:ps.pos]
	if name == "" {
		return segment{}, ps.errorf(start, "expected a name after '.'")
	}
	if ps.more() && ps.src[ps.pos] == '(' {
		if ps.peek(1) != ')' {
			return segment{}, ps.errorf(ps.pos, "function arguments are not supported")
		}
		if name != "length" && name != "size" {
			return segment{}, ps.errorf(start, "unknown function %q (only length() and size() are supported)", name)
		}
		ps.pos += 2
		return segment{kind: segFunc, name: name}, nil
	}
	return segment{kind: segName, name: name, quote: '\''}, nil
}

// bracket reads a bracketed segment: names, indexes, a slice, '*' or a
// filter.
func (ps *parser) bracket() (segment, error) {
	open := ps.pos
	ps.pos++ // [
	ps.skipSpace()
	if !ps.more() {
		return segment{}, ps.errorf(open, "missing ']'")
	}
	switch c := ps.src[ps.pos]; {
	case c == '\'' || c == '"':
		return ps.names(open)
	case c == '*':
		ps.pos++
		if err := ps.expect(']', "']' after '*'"); err != nil {
			return segment{}, err
		}
		return segment{kind: segWildcard}, nil
	case c == '?':
		ps.pos++
		if err := ps.expect('(', "'(' after '?'"); err != nil {
			return segment{}, err
		}
		e, err := ps.orExpr()
		if err != nil {
			return segment{}, err
		}
		if err := ps.expect(')', "')' to close the filter"); err != nil {
			return segment{}, err
		}
		if err := ps.expect(']', "']' to close the filter"); err != nil {
			return segment{}, err
		}
		return segment{kind: segFilter, filter: e}, nil
	case c == '-' || c == ':' || isDigit(c):
		return ps.numbers(open)
	default:
		return segment{}, ps.errorf(ps.pos, "expected a quoted name, an index, a slice, '*' or a filter after '['")
	}
}

// names reads ['a'] or ['a','b']. The text between the quotes is kept as
// written: AWS does not unescape it (a backslash only stops the next
// character from closing the name).
func (ps *parser) names(open int) (segment, error) {
	quote := ps.src[ps.pos]
	var names []string
	for {
		name, err := ps.quotedRaw()
		if err != nil {
			return segment{}, err
		}
		names = append(names, name)
		ps.skipSpace()
		if !ps.more() {
			return segment{}, ps.errorf(open, "missing ']'")
		}
		if ps.src[ps.pos] == ']' {
			ps.pos++
			break
		}
		if ps.src[ps.pos] != ',' {
			return segment{}, ps.errorf(ps.pos, "expected ',' or ']' after a quoted name")
		}
		ps.pos++
		ps.skipSpace()
		if !ps.more() || ps.src[ps.pos] != quote {
			return segment{}, ps.errorf(ps.pos, "expected a name quoted with %c", quote)
		}
	}
	if len(names) == 1 {
		return segment{kind: segName, name: names[0], quote: quote}, nil
	}
	return segment{kind: segNames, names: names, quote: quote}, nil
}

func (ps *parser) quotedRaw() (string, error) {
	quote := ps.src[ps.pos]
	start := ps.pos + 1
	for i := start; i < ps.end; i++ {
		switch ps.src[i] {
		case '\\':
			i++
		case quote:
			ps.pos = i + 1
			return ps.src[start:i], nil
		}
	}
	return "", ps.errorf(start-1, "missing closing %c", quote)
}

// numbers reads [0], [0,1,2] or a slice [from:to] / [from:to:step].
func (ps *parser) numbers(open int) (segment, error) {
	first, hasFirst, err := ps.optInt()
	if err != nil {
		return segment{}, err
	}
	ps.skipSpace()
	if ps.more() && ps.src[ps.pos] == ':' {
		sl := sliceSpec{from: first, hasFrom: hasFirst, step: 1}
		ps.pos++
		ps.skipSpace()
		if sl.to, sl.hasTo, err = ps.optInt(); err != nil {
			return segment{}, err
		}
		ps.skipSpace()
		hasStep := false
		if ps.more() && ps.src[ps.pos] == ':' {
			ps.pos++
			ps.skipSpace()
			stepAt := ps.pos
			var step int
			if step, hasStep, err = ps.optInt(); err != nil {
				return segment{}, err
			}
			if hasStep {
				if step <= 0 {
					return segment{}, ps.errorf(stepAt, "a slice step must be positive")
				}
				sl.step = step
			}
		}
		if err := ps.expect(']', "']' to close the slice"); err != nil {
			return segment{}, err
		}
		if !sl.hasFrom && !sl.hasTo && !hasStep {
			return segment{}, ps.errorf(open, "a slice needs a start, an end or a step")
		}
		return segment{kind: segSlice, slice: sl}, nil
	}
	if !hasFirst {
		return segment{}, ps.errorf(ps.pos, "expected an index")
	}
	indexes := []int{first}
	for {
		ps.skipSpace()
		if !ps.more() {
			return segment{}, ps.errorf(open, "missing ']'")
		}
		if ps.src[ps.pos] == ']' {
			ps.pos++
			break
		}
		if ps.src[ps.pos] != ',' {
			return segment{}, ps.errorf(ps.pos, "expected ',' or ']' after an index")
		}
		ps.pos++
		ps.skipSpace()
		n, ok, err := ps.optInt()
		if err != nil {
			return segment{}, err
		}
		if !ok {
			return segment{}, ps.errorf(ps.pos, "expected an index")
		}
		indexes = append(indexes, n)
	}
	if len(indexes) == 1 {
		return segment{kind: segIndex, index: first}, nil
	}
	return segment{kind: segIndexes, indexes: indexes}, nil
}

// optInt reads an optional integer in the range of a Java int.
func (ps *parser) optInt() (int, bool, error) {
	start := ps.pos
	neg := false
	if ps.more() && ps.src[ps.pos] == '-' {
		neg = true
		ps.pos++
	}
	digits := ps.pos
	n := 0
	for ps.more() && isDigit(ps.src[ps.pos]) {
		n = n*10 + int(ps.src[ps.pos]-'0')
		if n > math.MaxInt32+1 {
			return 0, false, ps.errorf(start, "index out of range")
		}
		ps.pos++
	}
	if ps.pos == digits {
		if neg {
			return 0, false, ps.errorf(ps.pos, "expected digits after '-'")
		}
		return 0, false, nil
	}
	if neg {
		n = -n
	}
	if n > math.MaxInt32 {
		return 0, false, ps.errorf(start, "index out of range")
	}
	return n, true, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// isFilterStop reports whether c ends a dot name inside a filter.
func isFilterStop(c byte) bool {
	return isSpace(c) || strings.IndexByte(")]=!<>~&|,", c) >= 0
}

// Variable names follow the ASL rules: a letter or '_' and then letters,
// digits and '_'.
func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
