package jp1

import (
	"fmt"
	"strings"
)

// Unit is one unit of a definition file: its attributes, its parameters
// in the order written and the units under it.
type Unit struct {
	Name       string // as written; the first unit of a file may be a path
	Permission string
	Owner      string // the JP1 user
	Group      string // the JP1 resource group
	Params     []Param
	Units      []*Unit
	Line, Col  int
}

// Param is one `key=value;` of a unit.
type Param struct {
	Key       string
	Value     string // as written, quotes and escapes kept
	Line, Col int
}

// Type is the unit's ty= parameter.
func (u *Unit) Type() string { return u.Get("ty") }

// Get is the last value of the parameter key ("" if the unit has none),
// unquoted.
func (u *Unit) Get(key string) string {
	for i := len(u.Params) - 1; i >= 0; i-- {
		if u.Params[i].Key == key {
			return Unquote(u.Params[i].Value)
		}
	}
	return ""
}

// All is every value of the parameter key, unquoted, in order.
func (u *Unit) All(key string) []string {
	var out []string
	for _, p := range u.Params {
		if p.Key == key {
			out = append(out, Unquote(p.Value))
		}
	}
	return out
}

// Unquote takes the quotes off a quoted value and undoes its escapes
// (#" is ", ## is #); a value not in quotes is returned as it is.
func Unquote(v string) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return v
	}
	v = v[1 : len(v)-1]
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '#' && i+1 < len(v) && (v[i+1] == '"' || v[i+1] == '#') {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// ParseError is a definition file that does not parse, with where.
type ParseError struct {
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// MaxDepth bounds how deep units nest.
const MaxDepth = 64

type parser struct {
	src       string
	pos       int
	line, col int
}

// Parse reads a unit definition file.
func Parse(src []byte) ([]*Unit, error) {
	p := &parser{src: string(src), line: 1, col: 1}
	var units []*Unit
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			break
		}
		u, err := p.unit(0)
		if err != nil {
			return nil, err
		}
		units = append(units, u)
	}
	if len(units) == 0 {
		return nil, &ParseError{p.line, p.col, "no unit: a definition starts with unit=NAME,...;{ ... }"}
	}
	return units, nil
}

func (p *parser) errf(line, col int, format string, args ...any) error {
	return &ParseError{line, col, fmt.Sprintf(format, args...)}
}

func (p *parser) advance() {
	if p.src[p.pos] == '\n' {
		p.line++
		p.col = 1
	} else if p.src[p.pos]&0xC0 != 0x80 { // count runes, not bytes
		p.col++
	}
	p.pos++
}

// skip passes over white space and /* */ comments.
func (p *parser) skip() error {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f':
			p.advance()
		case strings.HasPrefix(p.src[p.pos:], "/*"):
			line, col := p.line, p.col
			end := strings.Index(p.src[p.pos+2:], "*/")
			if end < 0 {
				return p.errf(line, col, "a comment /* is not closed with */")
			}
			for n := end + 4; n > 0; n-- {
				p.advance()
			}
		default:
			return nil
		}
	}
	return nil
}

// key reads a parameter key: letters and digits.
func (p *parser) key() string {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			break
		}
		p.advance()
	}
	return p.src[start:p.pos]
}

// value reads up to the ';' that ends it (outside quotes) and passes it.
func (p *parser) value(key string, line, col int) (string, error) {
	start := p.pos
	quoted := false
	qline, qcol := 0, 0
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case quoted && c == '#' && p.pos+1 < len(p.src) && (p.src[p.pos+1] == '"' || p.src[p.pos+1] == '#'):
			p.advance()
		case c == '"':
			if !quoted {
				qline, qcol = p.line, p.col
			}
			quoted = !quoted
		case !quoted && c == ';':
			v := strings.TrimSpace(p.src[start:p.pos])
			p.advance()
			return v, nil
		case !quoted && (c == '{' || c == '}'):
			return "", p.errf(p.line, p.col, "%s= has no ';' before %q", key, c)
		}
		p.advance()
	}
	if quoted {
		return "", p.errf(qline, qcol, "the quoted value of %s= is not closed (write #\" for a quote inside it)", key)
	}
	return "", p.errf(line, col, "%s= has no ';' at its end", key)
}

func (p *parser) unit(depth int) (*Unit, error) {
	if depth > MaxDepth {
		return nil, p.errf(p.line, p.col, "units nest deeper than %d", MaxDepth)
	}
	line, col := p.line, p.col
	if k := p.key(); k != "unit" {
		if k == "" && p.pos < len(p.src) {
			return nil, p.errf(line, col, "unexpected %q: expected unit=", p.src[p.pos])
		}
		return nil, p.errf(line, col, "expected unit=, found %q", k)
	}
	if p.pos >= len(p.src) || p.src[p.pos] != '=' {
		return nil, p.errf(p.line, p.col, "expected '=' after unit")
	}
	p.advance()
	attrs, err := p.value("unit", line, col)
	if err != nil {
		return nil, err
	}
	fields := strings.Split(attrs, ",")
	for len(fields) < 4 {
		fields = append(fields, "")
	}
	u := &Unit{Name: strings.TrimSpace(fields[0]), Permission: strings.TrimSpace(fields[1]),
		Owner: strings.TrimSpace(fields[2]), Group: strings.TrimSpace(strings.Join(fields[3:], ",")), Line: line, Col: col}
	if u.Name == "" {
		return nil, p.errf(line, col, "unit= names no unit")
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos >= len(p.src) || p.src[p.pos] != '{' {
		return nil, p.errf(p.line, p.col, "expected '{' after unit=%s;", u.Name)
	}
	p.advance()
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.errf(line, col, "unit %s has no closing '}'", u.Name)
		}
		if p.src[p.pos] == '}' {
			p.advance()
			return u, nil
		}
		kline, kcol := p.line, p.col
		k := p.key()
		if k == "" {
			return nil, p.errf(kline, kcol, "unexpected %q in unit %s: expected a parameter key=value; or a unit", p.src[p.pos], u.Name)
		}
		if k == "unit" && p.pos < len(p.src) && p.src[p.pos] == '=' {
			p.pos, p.line, p.col = p.pos-len(k), kline, kcol
			child, err := p.unit(depth + 1)
			if err != nil {
				return nil, err
			}
			u.Units = append(u.Units, child)
			continue
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '=' {
			return nil, p.errf(p.line, p.col, "expected '=' after %s", k)
		}
		p.advance()
		v, err := p.value(k, kline, kcol)
		if err != nil {
			return nil, err
		}
		u.Params = append(u.Params, Param{Key: k, Value: v, Line: kline, Col: kcol})
	}
}
