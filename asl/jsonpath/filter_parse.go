package jsonpath

import (
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"stepwise/jsonvalue"
)

// Filters
//
//	or      = and { "||" and }
//	and     = unary { "&&" unary }
//	unary   = "!" path | "!" unary | "(" or ")" | compare
//	compare = operand [ operator operand ]     (a lone path tests existence)

func (ps *parser) orExpr() (expr, error) {
	if err := ps.nest(); err != nil {
		return nil, err
	}
	defer func() { ps.depth-- }()
	list, err := ps.operands("||", ps.andExpr)
	if err != nil || len(list) == 1 {
		return first(list), err
	}
	return orExpr(list), nil
}

func (ps *parser) andExpr() (expr, error) {
	list, err := ps.operands("&&", ps.unaryExpr)
	if err != nil || len(list) == 1 {
		return first(list), err
	}
	return andExpr(list), nil
}

// operands parses one or more operands of next separated by op.
func (ps *parser) operands(op string, next func() (expr, error)) ([]expr, error) {
	e, err := next()
	if err != nil {
		return nil, err
	}
	list := []expr{e}
	for {
		ps.skipSpace()
		if !ps.has(op) {
			return list, nil
		}
		ps.pos += len(op)
		if e, err = next(); err != nil {
			return nil, err
		}
		list = append(list, e)
	}
}

func first(list []expr) expr {
	if len(list) == 0 {
		return nil
	}
	return list[0]
}

func (ps *parser) unaryExpr() (expr, error) {
	ps.skipSpace()
	if !ps.more() {
		return nil, ps.errorf(ps.pos, "unexpected end of filter")
	}
	switch ps.src[ps.pos] {
	case '!':
		bang := ps.pos
		ps.pos++
		ps.skipSpace()
		if c := ps.peek(0); c == '@' || c == '$' {
			o, err := ps.pathOperand()
			if err != nil {
				return nil, err
			}
			ps.skipSpace()
			if !ps.atConditionEnd() {
				return nil, ps.errorf(bang, "'!' before a path negates an existence test; write !(...) to negate a comparison")
			}
			return &existExpr{path: o.path, relative: o.relative, want: false}, nil
		}
		if err := ps.nest(); err != nil {
			return nil, err
		}
		e, err := ps.unaryExpr()
		ps.depth--
		if err != nil {
			return nil, err
		}
		return notExpr{e}, nil
	case '(':
		ps.pos++
		e, err := ps.orExpr()
		if err != nil {
			return nil, err
		}
		if err := ps.expect(')', "')'"); err != nil {
			return nil, err
		}
		return e, nil
	}
	return ps.compareExpr()
}

// atConditionEnd reports whether a condition ends here: at ')', "&&", "||"
// or the end of the text.
func (ps *parser) atConditionEnd() bool {
	return !ps.more() || ps.src[ps.pos] == ')' || ps.has("&&") || ps.has("||")
}

func (ps *parser) compareExpr() (expr, error) {
	start := ps.pos
	left, err := ps.operand()
	if err != nil {
		return nil, err
	}
	ps.skipSpace()
	if ps.atConditionEnd() {
		if left.path == nil {
			return nil, ps.errorf(start, "a literal is not a condition; compare it with a path")
		}
		return &existExpr{path: left.path, relative: left.relative, want: true}, nil
	}
	opAt := ps.pos
	op, err := ps.operator()
	if err != nil {
		return nil, err
	}
	right, err := ps.operand()
	if err != nil {
		return nil, err
	}
	if op == opRegex {
		if (left.re == nil) == (right.re == nil) {
			return nil, ps.errorf(opAt, "=~ needs a /pattern/ on one side")
		}
	} else if left.re != nil || right.re != nil {
		return nil, ps.errorf(opAt, "a /pattern/ can only be used with =~")
	}
	return &compareExpr{op: op, left: left, right: right}, nil
}

var symbolOps = map[string]cmpOp{
	"==": opEq, "!=": opNe, "===": opStrictEq, "!==": opStrictNe,
	"<": opLt, "<=": opLe, ">": opGt, ">=": opGe, "=~": opRegex,
}

var wordOps = map[string]cmpOp{
	"in": opIn, "nin": opNin, "contains": opContains, "size": opSize, "empty": opEmpty,
	"subsetof": opSubsetOf, "anyof": opAnyOf, "noneof": opNoneOf,
}

func (ps *parser) operator() (cmpOp, error) {
	start := ps.pos
	if strings.IndexByte("=!<>~", ps.src[ps.pos]) >= 0 {
		for ps.more() && strings.IndexByte("=!<>~", ps.src[ps.pos]) >= 0 {
			ps.pos++
		}
		if op, ok := symbolOps[ps.src[start:ps.pos]]; ok {
			return op, nil
		}
		return 0, ps.errorf(start, "unknown operator %q", ps.src[start:ps.pos])
	}
	for ps.more() && isLetter(ps.src[ps.pos]) {
		ps.pos++
	}
	if ps.pos == start {
		return 0, ps.errorf(start, "expected an operator, found %q", ps.src[start])
	}
	if op, ok := wordOps[strings.ToLower(ps.src[start:ps.pos])]; ok {
		return op, nil
	}
	return 0, ps.errorf(start, "unknown operator %q", ps.src[start:ps.pos])
}

func (ps *parser) operand() (*operand, error) {
	ps.skipSpace()
	if !ps.more() {
		return nil, ps.errorf(ps.pos, "expected a value")
	}
	switch c := ps.src[ps.pos]; {
	case c == '@' || c == '$':
		return ps.pathOperand()
	case c == '/':
		re, err := ps.pattern()
		if err != nil {
			return nil, err
		}
		return &operand{re: re}, nil
	case c == '\'' || c == '"' || c == '-' || c == '[' || c == '{' || isDigit(c) || isLetter(c):
		v, err := ps.literal()
		if err != nil {
			return nil, err
		}
		return &operand{lit: v}, nil
	default:
		return nil, ps.errorf(ps.pos, "expected a value, found %q", c)
	}
}

// pathOperand reads a path inside a filter: "@..." relative to the item
// being tested, or "$..." from the root of the evaluation.
func (ps *parser) pathOperand() (*operand, error) {
	start := ps.pos
	relative := ps.src[ps.pos] == '@'
	ps.pos++
	if !relative && ps.more() {
		if r, _ := utf8.DecodeRuneInString(ps.src[ps.pos:ps.end]); r == '$' || isIdentStart(r) {
			return nil, ps.errorf(start, "only '$' and '@' paths can be used in a filter")
		}
	}
	segs, err := ps.segments(true)
	if err != nil {
		return nil, err
	}
	p := &Path{text: ps.src[start:ps.pos], segs: segs}
	p.finish()
	return &operand{path: p, relative: relative}, nil
}

// literal reads a string, number, true, false, null or a JSON array or
// object (whose strings may use either quote, as Jayway accepts).
func (ps *parser) literal() (any, error) {
	ps.skipSpace()
	if !ps.more() {
		return nil, ps.errorf(ps.pos, "expected a value")
	}
	switch c := ps.src[ps.pos]; {
	case c == '\'' || c == '"':
		return ps.stringLit()
	case c == '-' || isDigit(c):
		return ps.numberLit()
	case c == '[':
		return ps.arrayLit()
	case c == '{':
		return ps.objectLit()
	case isLetter(c):
		start := ps.pos
		for ps.more() && isLetter(ps.src[ps.pos]) {
			ps.pos++
		}
		switch ps.src[start:ps.pos] {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "null":
			return nil, nil
		}
		return nil, ps.errorf(start, "unexpected %q, expected a value", ps.src[start:ps.pos])
	default:
		return nil, ps.errorf(ps.pos, "expected a value, found %q", c)
	}
}

func (ps *parser) arrayLit() (any, error) {
	if err := ps.nest(); err != nil {
		return nil, err
	}
	defer func() { ps.depth-- }()
	open := ps.pos
	ps.pos++ // [
	arr := []any{}
	ps.skipSpace()
	if ps.more() && ps.src[ps.pos] == ']' {
		ps.pos++
		return arr, nil
	}
	for {
		v, err := ps.literal()
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		ps.skipSpace()
		if !ps.more() {
			return nil, ps.errorf(open, "missing ']'")
		}
		switch ps.src[ps.pos] {
		case ',':
			ps.pos++
		case ']':
			ps.pos++
			return arr, nil
		default:
			return nil, ps.errorf(ps.pos, "expected ',' or ']' in an array")
		}
	}
}

func (ps *parser) objectLit() (any, error) {
	if err := ps.nest(); err != nil {
		return nil, err
	}
	defer func() { ps.depth-- }()
	open := ps.pos
	ps.pos++ // {
	obj := jsonvalue.NewObject(0)
	ps.skipSpace()
	if ps.more() && ps.src[ps.pos] == '}' {
		ps.pos++
		return obj, nil
	}
	for {
		ps.skipSpace()
		if c := ps.peek(0); c != '\'' && c != '"' {
			return nil, ps.errorf(ps.pos, "expected a quoted member name")
		}
		k, err := ps.stringLit()
		if err != nil {
			return nil, err
		}
		if err := ps.expect(':', "':' after a member name"); err != nil {
			return nil, err
		}
		v, err := ps.literal()
		if err != nil {
			return nil, err
		}
		obj.Set(k, v)
		ps.skipSpace()
		if !ps.more() {
			return nil, ps.errorf(open, "missing '}'")
		}
		switch ps.src[ps.pos] {
		case ',':
			ps.pos++
		case '}':
			ps.pos++
			return obj, nil
		default:
			return nil, ps.errorf(ps.pos, "expected ',' or '}' in an object")
		}
	}
}

// stringLit reads a quoted string in a filter, unescaping it the way
// Jayway does (\n, \t, \uXXXX, ...; any other escaped character stands for
// itself).
func (ps *parser) stringLit() (string, error) {
	quote := ps.src[ps.pos]
	open := ps.pos
	ps.pos++
	start := ps.pos
	var b []byte
	for ps.more() {
		c := ps.src[ps.pos]
		if c == quote {
			ps.pos++
			if b == nil {
				return ps.src[start : ps.pos-1], nil
			}
			return string(b), nil
		}
		if c != '\\' {
			if b != nil {
				b = append(b, c)
			}
			ps.pos++
			continue
		}
		if b == nil {
			b = append([]byte(nil), ps.src[start:ps.pos]...)
		}
		if ps.pos+1 >= ps.end {
			break
		}
		e := ps.src[ps.pos+1]
		ps.pos += 2
		switch e {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'u':
			r, err := ps.hex4()
			if err != nil {
				return "", err
			}
			if utf16.IsSurrogate(r) && ps.has(`\u`) {
				save := ps.pos
				ps.pos += 2
				r2, err := ps.hex4()
				if err != nil {
					return "", err
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
				} else {
					ps.pos = save
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			b = append(b, e)
		}
	}
	return "", ps.errorf(open, "missing closing %c", quote)
}

func (ps *parser) hex4() (rune, error) {
	if ps.end-ps.pos < 4 {
		return 0, ps.errorf(ps.pos, `invalid \u escape`)
	}
	var r rune
	for _, c := range []byte(ps.src[ps.pos : ps.pos+4]) {
		var d byte
		switch {
		case isDigit(c):
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, ps.errorf(ps.pos, `invalid \u escape`)
		}
		r = r<<4 | rune(d)
	}
	ps.pos += 4
	return r, nil
}

// numberLit reads a number written as in JSON.
func (ps *parser) numberLit() (any, error) {
	start := ps.pos
	digits := func() int {
		n := 0
		for ps.more() && isDigit(ps.src[ps.pos]) {
			ps.pos++
			n++
		}
		return n
	}
	if ps.peek(0) == '-' {
		ps.pos++
	}
	if digits() == 0 {
		return nil, ps.errorf(start, "invalid number")
	}
	if ps.peek(0) == '.' {
		ps.pos++
		if digits() == 0 {
			return nil, ps.errorf(start, "invalid number")
		}
	}
	if c := ps.peek(0); c == 'e' || c == 'E' {
		ps.pos++
		if c := ps.peek(0); c == '+' || c == '-' {
			ps.pos++
		}
		if digits() == 0 {
			return nil, ps.errorf(start, "invalid number")
		}
	}
	return jsonvalue.Number(ps.src[start:ps.pos]), nil
}

// pattern reads /regex/flags. The regex must match the whole input, as
// Java's Matcher.matches does; flags i, m and s are supported.
func (ps *parser) pattern() (*regexp.Regexp, error) {
	open := ps.pos
	ps.pos++ // /
	var body strings.Builder
	closed := false
	for ps.more() {
		c := ps.src[ps.pos]
		if c == '/' {
			ps.pos++
			closed = true
			break
		}
		if c == '\\' && ps.pos+1 < ps.end {
			if ps.src[ps.pos+1] == '/' {
				body.WriteByte('/')
			} else {
				body.WriteString(ps.src[ps.pos : ps.pos+2])
			}
			ps.pos += 2
			continue
		}
		body.WriteByte(c)
		ps.pos++
	}
	if !closed {
		return nil, ps.errorf(open, "missing closing '/'")
	}
	flags := ""
	for ps.more() && isLetter(ps.src[ps.pos]) {
		switch c := ps.src[ps.pos]; c {
		case 'i', 'm', 's':
			if !strings.ContainsRune(flags, rune(c)) {
				flags += string(c)
			}
		default:
			return nil, ps.errorf(ps.pos, "unsupported regular expression flag %q", c)
		}
		ps.pos++
	}
	src := "^(?:" + body.String() + ")$"
	if flags != "" {
		src = "(?" + flags + ")" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, ps.errorf(open, "invalid regular expression: %v", err)
	}
	return re, nil
}
