package jsonata

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a JSONata compile or evaluation error carrying the JSONata code.
type Error struct {
	Code     string
	Position int
	Token    string
	Message  string
}

func (e *Error) Error() string {
	if e.Token != "" {
		return fmt.Sprintf("%s: %s (token %q at %d)", e.Code, e.Message, e.Token, e.Position)
	}
	return fmt.Sprintf("%s: %s (at %d)", e.Code, e.Message, e.Position)
}

func newErr(code string, pos int, token string, msg string) *Error {
	return &Error{Code: code, Position: pos, Token: token, Message: msg}
}

type tokKind int

const (
	tkEnd tokKind = iota
	tkOperator
	tkString
	tkNumber
	tkValue
	tkName
	tkVariable
	tkRegex
)

type token struct {
	kind  tokKind
	value string // operator text, name, string value
	num   float64
	val   any // for tkValue: bool or null
	re    *regexp.Regexp
	pos   int // position just after the token, like jsonata.js
}

var operators = map[string]int{
	".": 75, "[": 80, "]": 0, "{": 70, "}": 0, "(": 80, ")": 0, ",": 0,
	"@": 80, "#": 80, ";": 80, ":": 80, "?": 20, "+": 50, "-": 50, "*": 60,
	"/": 60, "%": 60, "|": 20, "=": 40, "<": 40, ">": 40, "^": 40, "**": 60,
	"..": 20, ":=": 10, "!=": 40, "<=": 40, ">=": 40, "~>": 40, "and": 30,
	"or": 25, "in": 40, "&": 50, "!": 0, "~": 0,
}

var escapes = map[byte]string{'"': "\"", '\\': "\\", '/': "/", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t"}

type lexer struct {
	src  string
	pos  int
	prev *token
}

var numRe = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?([Ee][-+]?[0-9]+)?`)

func isOpChar(c byte) bool {
	switch c {
	case '.', '[', ']', '{', '}', '(', ')', ',', '@', '#', ';', ':', '?', '+', '-', '*', '/', '%', '|', '=', '<', '>', '^', '&', '!', '~':
		return true
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v'
}

func (l *lexer) regexAllowed() bool {
	p := l.prev
	if p == nil {
		return true
	}
	if p.kind != tkOperator {
		return false
	}
	switch p.value {
	case ")", "]", "}", "*", "**", "%":
		return false
	}
	return true
}

func (l *lexer) next() (*token, error) {
	t, err := l.scan()
	if err == nil {
		l.prev = t
	}
	return t, err
}

func (l *lexer) scan() (*token, error) {
	src := l.src
	for {
		for l.pos < len(src) && isSpace(src[l.pos]) {
			l.pos++
		}
		if l.pos+1 < len(src) && src[l.pos] == '/' && src[l.pos+1] == '*' {
			start := l.pos
			end := strings.Index(src[l.pos+2:], "*/")
			if end < 0 {
				return nil, newErr("S0106", start, "", "Comment has no closing tag")
			}
			l.pos += end + 4
			continue
		}
		break
	}
	if l.pos >= len(src) {
		return &token{kind: tkEnd, pos: l.pos}, nil
	}
	c := src[l.pos]
	if c == '/' && l.regexAllowed() {
		return l.scanRegex()
	}
	if l.pos+1 < len(src) {
		two := src[l.pos : l.pos+2]
		switch two {
		case "..", ":=", "!=", ">=", "<=", "**", "~>":
			l.pos += 2
			return &token{kind: tkOperator, value: two, pos: l.pos}, nil
		}
	}
	if isOpChar(c) {
		l.pos++
		return &token{kind: tkOperator, value: string(c), pos: l.pos}, nil
	}
	if c == '"' || c == '\'' {
		return l.scanString(c)
	}
	if m := numRe.FindString(src[l.pos:]); m != "" {
		f, _ := strconv.ParseFloat(m, 64)
		l.pos += len(m)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, newErr("S0102", l.pos, m, "Number out of range: "+m)
		}
		return &token{kind: tkNumber, num: f, value: m, pos: l.pos}, nil
	}
	if c == '`' {
		end := strings.IndexByte(src[l.pos+1:], '`')
		if end < 0 {
			return nil, newErr("S0105", len(src), "", "Quoted property name must be terminated with a backquote (`)")
		}
		name := src[l.pos+1 : l.pos+1+end]
		l.pos += end + 2
		return &token{kind: tkName, value: name, pos: l.pos}, nil
	}
	start := l.pos
	for l.pos < len(src) && !isSpace(src[l.pos]) && !isOpChar(src[l.pos]) {
		l.pos++
	}
	name := src[start:l.pos]
	if name[0] == '$' {
		return &token{kind: tkVariable, value: name[1:], pos: l.pos}, nil
	}
	switch name {
	case "and", "or", "in":
		return &token{kind: tkOperator, value: name, pos: l.pos}, nil
	case "true":
		return &token{kind: tkValue, value: name, val: true, pos: l.pos}, nil
	case "false":
		return &token{kind: tkValue, value: name, val: false, pos: l.pos}, nil
	case "null":
		return &token{kind: tkValue, value: name, val: null, pos: l.pos}, nil
	}
	return &token{kind: tkName, value: name, pos: l.pos}, nil
}

func (l *lexer) scanString(q byte) (*token, error) {
	src := l.src
	var sb strings.Builder
	l.pos++
	for l.pos < len(src) {
		c := src[l.pos]
		if c == '\\' {
			l.pos++
			if l.pos >= len(src) {
				break
			}
			e := src[l.pos]
			if s, ok := escapes[e]; ok {
				sb.WriteString(s)
			} else if e == 'u' {
				if l.pos+5 > len(src) {
					return nil, newErr("S0104", l.pos, "", "The escape sequence \\u must be followed by 4 hex digits")
				}
				v, err := strconv.ParseUint(src[l.pos+1:l.pos+5], 16, 32)
				if err != nil {
					return nil, newErr("S0104", l.pos, "", "The escape sequence \\u must be followed by 4 hex digits")
				}
				r := rune(v)
				l.pos += 4
				if r >= 0xD800 && r < 0xDC00 && l.pos+6 < len(src)+0 && src[l.pos+1] == '\\' && src[l.pos+2] == 'u' {
					if v2, err := strconv.ParseUint(src[l.pos+3:l.pos+7], 16, 32); err == nil && v2 >= 0xDC00 && v2 < 0xE000 {
						r = (r-0xD800)<<10 + (rune(v2) - 0xDC00) + 0x10000
						l.pos += 6
					}
				}
				sb.WriteRune(r)
			} else {
				return nil, newErr("S0103", l.pos, string(e), "Unsupported escape sequence: \\"+string(e))
			}
			l.pos++
			continue
		}
		if c == q {
			l.pos++
			return &token{kind: tkString, value: sb.String(), pos: l.pos}, nil
		}
		_, size := utf8.DecodeRuneInString(src[l.pos:])
		sb.WriteString(src[l.pos : l.pos+size])
		l.pos += size
	}
	return nil, newErr("S0101", l.pos, "", "String literal must be terminated by a matching quote")
}

func (l *lexer) scanRegex() (*token, error) {
	src := l.src
	start := l.pos + 1
	i := start
	depth := 0
	for i < len(src) {
		c := src[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '[' {
			depth++
		} else if c == ']' && depth > 0 {
			depth--
		} else if c == '/' && depth == 0 {
			break
		}
		i++
	}
	if i >= len(src) {
		return nil, newErr("S0302", l.pos, "", "No terminating / in regular expression")
	}
	pattern := src[start:i]
	if pattern == "" {
		return nil, newErr("S0301", i, "", "Empty regular expressions are not allowed")
	}
	i++
	fs := i
	for i < len(src) && (src[i] == 'i' || src[i] == 'm' || src[i] == 'g' || src[i] == 's' || src[i] == 'u' || src[i] == 'y') {
		i++
	}
	flags := src[fs:i]
	l.pos = i
	goFlags := ""
	if strings.Contains(flags, "i") {
		goFlags += "i"
	}
	if strings.Contains(flags, "m") {
		goFlags += "m"
	}
	if strings.Contains(flags, "s") {
		goFlags += "s"
	}
	gp := translateRegex(pattern)
	if goFlags != "" {
		gp = "(?" + goFlags + ")" + gp
	}
	re, err := regexp.Compile(gp)
	if err != nil {
		return nil, newErr("S0303", start, pattern, "Invalid regular expression: "+err.Error())
	}
	return &token{kind: tkRegex, value: pattern, re: re, pos: l.pos}, nil
}

// translateRegex adapts JavaScript regex syntax to RE2 where cheap.
func translateRegex(p string) string {
	// JS named groups (?<name>...) -> (?P<name>...)
	return strings.ReplaceAll(p, "(?<", "(?P<")
}
