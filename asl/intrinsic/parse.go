package intrinsic

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"stepwise/asl/jsonpath"
	"stepwise/jsonvalue"
)

// MaxDepth is the deepest nesting of calls Parse accepts. AWS documents
// nesting "up to 10" functions; the limit here only guards the parser's
// stack.
const MaxDepth = 64

// SyntaxError describes a malformed intrinsic function call.
type SyntaxError struct {
	Expr   string // the expression being parsed
	Offset int    // byte offset of the error in Expr
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid intrinsic function call: %s at offset %d", e.Msg, e.Offset)
}

// Parse parses an intrinsic function call such as
// "States.Format('Hello {}', $.name)". Malformed calls, unknown function
// names, bad escapes and invalid paths are reported as a *SyntaxError.
// A wrong number of arguments is not a parse error (see Validate).
func Parse(expr string) (*Call, error) {
	p := parser{src: expr}
	c, err := p.call()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return nil, p.errorf(p.pos, "unexpected %s after the call", p.describe())
	}
	return c, nil
}

type parser struct {
	src   string
	pos   int
	depth int
}

func (p *parser) errorf(off int, format string, args ...any) error {
	return &SyntaxError{Expr: p.src, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// describe names the text at the current position for error messages.
func (p *parser) describe() string {
	if p.pos >= len(p.src) {
		return "end of expression"
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return fmt.Sprintf("%q", r)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

const statesPrefix = "States."

func (p *parser) call() (*Call, error) {
	start := p.pos
	if !strings.HasPrefix(p.src[p.pos:], statesPrefix) {
		return nil, p.errorf(start, "expected an intrinsic function call, found %s", p.describe())
	}
	end := p.pos + len(statesPrefix)
	for end < len(p.src) && isNameByte(p.src[end]) {
		end++
	}
	name := p.src[start:end]
	fn := functions[name]
	if fn == nil {
		return nil, p.errorf(start, "unknown intrinsic function %q", name)
	}
	p.pos = end
	if p.pos >= len(p.src) || p.src[p.pos] != '(' {
		return nil, p.errorf(p.pos, "expected '(' after %s, found %s", name, p.describe())
	}
	p.pos++
	p.depth++
	if p.depth > MaxDepth {
		return nil, p.errorf(start, "intrinsic functions nested more than %d deep", MaxDepth)
	}
	c := &Call{fn: fn, pos: start}
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ')' {
		p.pos++
	} else {
		for {
			p.skipSpace()
			a, err := p.arg()
			if err != nil {
				return nil, err
			}
			c.args = append(c.args, a)
			p.skipSpace()
			if p.pos >= len(p.src) {
				return nil, p.errorf(p.pos, "unterminated call to %s: expected ',' or ')'", name)
			}
			if p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.src[p.pos] == ')' {
				p.pos++
				break
			}
			return nil, p.errorf(p.pos, "expected ',' or ')' after argument %d of %s, found %s", len(c.args), name, p.describe())
		}
	}
	p.depth--
	c.text = p.src[start:p.pos]
	return c, nil
}

func isNameByte(b byte) bool {
	return b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}

func (p *parser) arg() (arg, error) {
	start := p.pos
	if p.pos >= len(p.src) {
		return arg{}, p.errorf(p.pos, "expected an argument, found end of expression")
	}
	switch b := p.src[p.pos]; {
	case b == '\'':
		return p.stringLit()
	case b == '$':
		return p.pathArg()
	case b == '-' || b >= '0' && b <= '9':
		return p.numberLit()
	case b == ',' || b == ')':
		return arg{}, p.errorf(start, "missing argument")
	case strings.HasPrefix(p.src[p.pos:], statesPrefix):
		c, err := p.call()
		if err != nil {
			return arg{}, err
		}
		return arg{call: c}, nil
	case b >= 'a' && b <= 'z':
		end := p.pos
		for end < len(p.src) && isNameByte(p.src[end]) {
			end++
		}
		word := p.src[p.pos:end]
		var v any
		switch word {
		case "true":
			v = true
		case "false":
			v = false
		case "null":
			v = nil
		default:
			return arg{}, p.errorf(start, "unknown literal %q", word)
		}
		p.pos = end
		return arg{value: v}, nil
	default:
		return arg{}, p.errorf(start, "expected an argument (string, number, true, false, null, path or intrinsic call), found %s", p.describe())
	}
}

// stringLit parses a literal in single quotes. The escapes \' \{ \} and \\
// are the only ones allowed; AWS rejects any other backslash.
func (p *parser) stringLit() (arg, error) {
	start := p.pos
	p.pos++ // opening quote
	rawStart := p.pos
	escaped := false
	for {
		if p.pos >= len(p.src) {
			return arg{}, p.errorf(start, "unterminated string literal")
		}
		switch p.src[p.pos] {
		case '\'':
			raw := p.src[rawStart:p.pos]
			p.pos++
			v := raw
			if escaped {
				v = unescape(raw)
			}
			return arg{value: v, raw: raw, str: true}, nil
		case '\\':
			if p.pos+1 >= len(p.src) {
				return arg{}, p.errorf(start, "unterminated string literal")
			}
			switch p.src[p.pos+1] {
			case '\'', '{', '}', '\\':
				escaped = true
				p.pos += 2
			default:
				r, _ := utf8.DecodeRuneInString(p.src[p.pos+1:])
				return arg{}, p.errorf(p.pos, "invalid escape sequence \\%c in string literal: only \\', \\{, \\} and \\\\ are allowed", r)
			}
		default:
			p.pos++
		}
	}
}

// unescape resolves the escapes of a string literal's raw text.
func unescape(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) {
			i++
		}
		b.WriteByte(raw[i])
	}
	return b.String()
}

// numberLit parses a number written as in JSON. The literal keeps its text.
func (p *parser) numberLit() (arg, error) {
	start := p.pos
	s := p.src
	i := p.pos
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return arg{}, p.errorf(start, "invalid number")
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return arg{}, p.errorf(start, "invalid number: no digits after the decimal point")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return arg{}, p.errorf(start, "invalid number: no digits in the exponent")
		}
	}
	if i < len(s) && !isArgEnd(s[i]) {
		return arg{}, p.errorf(start, "invalid number %q", s[start:argEnd(s, i)])
	}
	p.pos = i
	return arg{value: jsonvalue.Number(s[start:i])}, nil
}

func isArgEnd(b byte) bool {
	switch b {
	case ',', ')', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func argEnd(s string, i int) int {
	for i < len(s) && !isArgEnd(s[i]) {
		i++
	}
	return i
}

// pathArg parses a path argument. It runs to the next ',' or ')' that is
// not inside brackets, parentheses or a quoted name, so filters such as
// $.a[?(@.b > 1)] stay whole.
func (p *parser) pathArg() (arg, error) {
	start := p.pos
	s := p.src
	i := p.pos
	brackets, parens := 0, 0
	var quote byte
scan:
	for ; i < len(s); i++ {
		b := s[i]
		if quote != 0 {
			switch b {
			case '\\':
				i++
			case quote:
				quote = 0
			}
			continue
		}
		switch b {
		case '\'', '"':
			if brackets > 0 {
				quote = b
			}
		case '[':
			brackets++
		case ']':
			if brackets > 0 {
				brackets--
			}
		case '(':
			parens++
		case ')':
			if parens == 0 && brackets == 0 {
				break scan
			}
			if parens > 0 {
				parens--
			}
		case ',':
			if parens == 0 && brackets == 0 {
				break scan
			}
		}
	}
	if quote != 0 || brackets > 0 || parens > 0 {
		return arg{}, p.errorf(start, "unterminated path %q", s[start:min(i, len(s))])
	}
	text := strings.TrimRight(s[start:i], " \t\n\r")
	path, err := jsonpath.Compile(text)
	if err != nil {
		return arg{}, p.errorf(start, "invalid path %q: %v", text, err)
	}
	p.pos = start + len(text)
	return arg{path: path}, nil
}
