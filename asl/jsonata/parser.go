package jsonata

import "regexp"

type nodeType int

const (
	ntPath nodeType = iota
	ntBinary
	ntUnaryMinus
	ntArray
	ntObject
	ntName
	ntString
	ntNumber
	ntValue
	ntWildcard
	ntDescendant
	ntParent
	ntCondition
	ntBlock
	ntBind
	ntRegex
	ntFunction
	ntPartial
	ntPlaceholder
	ntVariable
	ntLambda
	ntApply
	ntTransform
	ntSort
	ntGroupRaw // parse-time only: lhs{...}
	ntPredRaw  // parse-time only: lhs[...]
	ntFocusRaw // parse-time only: lhs@$v
	ntIndexRaw // parse-time only: lhs#$v
	ntSortRaw  // parse-time only: lhs^(...)
	ntDotRaw   // parse-time only: lhs.rhs
)

type sortTerm struct {
	desc bool
	expr *node
}

type pair struct{ k, v *node }

type node struct {
	typ   nodeType
	pos   int
	op    string // binary operator / name / variable name
	str   string
	num   float64
	val   any
	re    *regexp.Regexp
	lhs   *node
	rhs   *node
	cond  *node
	then  *node
	els   *node
	exprs []*node // block, array constructor, args
	pairs []pair  // object constructor / group
	steps []*node // path
	terms []sortTerm
	// path/step annotations
	predicate  []*node // filters applied to a non-path expression
	stages     []*node // filters applied inside a path step
	group      *node   // group-by object (ntObject)
	keepArray  bool
	consArray  bool
	keepSingle bool // path keepSingletonArray
	focus      string
	index      string
	hasIndex   bool
	hasFocus   bool
	tuple      bool
	// functions
	params    []string
	signature *signature
	body      *node
	proc      *node
	// transform
	pattern, update, delete *node
	// parent operator resolution
	slot     *slot   // ntParent
	seeking  []*slot // unresolved parent references below this node
	ancestor *slot   // step binding the parent label
}

type parser struct {
	lx  *lexer
	tok *token
	src string
}

// Expression is a compiled JSONata expression.
type Expression struct {
	ast *node
	src string
	// readsInput: evaluating the expression may read its input.
	readsInput bool
}

// Compile parses a JSONata expression.
func Compile(src string) (*Expression, error) {
	p := &parser{lx: &lexer{src: src}, src: src}
	if err := p.advance("", false); err != nil {
		return nil, err
	}
	n, err := p.expression(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tkEnd {
		return nil, newErr("S0201", p.tok.pos, p.tok.value, "Syntax error: "+p.tok.value)
	}
	ast, err := (&processor{}).process(n)
	if err != nil {
		return nil, err
	}
	if ast.typ == ntParent || ast.seeking != nil {
		return nil, newErr("S0217", ast.pos, "", "The object representing the 'parent' cannot be derived from this expression")
	}
	return &Expression{ast: ast, src: src, readsInput: readsInput(ast)}, nil
}

func (p *parser) advance(id string, infix bool) error {
	if id != "" && !(p.tok.kind == tkOperator && p.tok.value == id) {
		if p.tok.kind == tkEnd {
			return newErr("S0203", p.tok.pos, id, "Expected "+id+" before end of expression")
		}
		return newErr("S0202", p.tok.pos, p.tok.value, "Expected "+id+", got "+p.tok.value)
	}
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	if t.kind == tkOperator && (t.value == "!" || t.value == "~") {
		return newErr("S0204", t.pos, t.value, "Unknown operator: "+t.value)
	}
	p.tok = t
	return nil
}

func (p *parser) isOp(v string) bool { return p.tok.kind == tkOperator && p.tok.value == v }

func (p *parser) lbp() int {
	if p.tok.kind == tkOperator {
		switch p.tok.value {
		case ":", ";", ",", ")", "]", "}", "..", "|", "!", "~":
			return 0
		}
		return operators[p.tok.value]
	}
	return 0
}

func (p *parser) expression(rbp int) (*node, error) {
	t := p.tok
	if err := p.advance("", false); err != nil {
		return nil, err
	}
	left, err := p.nud(t)
	if err != nil {
		return nil, err
	}
	for rbp < p.lbp() {
		t = p.tok
		if err := p.advance("", false); err != nil {
			return nil, err
		}
		left, err = p.led(t, left)
		if err != nil {
			return nil, err
		}
	}
	return left, nil
}

func (p *parser) nud(t *token) (*node, error) {
	pos := t.pos
	switch t.kind {
	case tkEnd:
		return nil, newErr("S0207", t.pos, "", "Unexpected end of expression")
	case tkString:
		return &node{typ: ntString, str: t.value, pos: pos}, nil
	case tkNumber:
		return &node{typ: ntNumber, num: t.num, pos: pos}, nil
	case tkValue:
		return &node{typ: ntValue, val: t.val, pos: pos}, nil
	case tkName:
		return &node{typ: ntName, op: t.value, pos: pos}, nil
	case tkVariable:
		return &node{typ: ntVariable, op: t.value, pos: pos}, nil
	case tkRegex:
		return &node{typ: ntRegex, re: t.re, str: t.value, pos: pos}, nil
	}
	switch t.value {
	case "and", "or", "in":
		return &node{typ: ntName, op: t.value, pos: pos}, nil
	case "-":
		e, err := p.expression(70)
		if err != nil {
			return nil, err
		}
		return &node{typ: ntUnaryMinus, lhs: e, pos: pos}, nil
	case "*":
		return &node{typ: ntWildcard, pos: pos}, nil
	case "**":
		return &node{typ: ntDescendant, pos: pos}, nil
	case "%":
		return &node{typ: ntParent, pos: pos}, nil
	case "(":
		var exprs []*node
		for !p.isOp(")") {
			e, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			exprs = append(exprs, e)
			if !p.isOp(";") {
				break
			}
			if err := p.advance(";", false); err != nil {
				return nil, err
			}
		}
		if err := p.advance(")", true); err != nil {
			return nil, err
		}
		return &node{typ: ntBlock, exprs: exprs, pos: pos}, nil
	case "[":
		var exprs []*node
		if !p.isOp("]") {
			for {
				item, err := p.expression(0)
				if err != nil {
					return nil, err
				}
				if p.isOp("..") {
					rpos := p.tok.pos
					if err := p.advance("..", false); err != nil {
						return nil, err
					}
					r, err := p.expression(0)
					if err != nil {
						return nil, err
					}
					item = &node{typ: ntBinary, op: "..", lhs: item, rhs: r, pos: rpos}
				}
				exprs = append(exprs, item)
				if !p.isOp(",") {
					break
				}
				if err := p.advance(",", false); err != nil {
					return nil, err
				}
			}
		}
		if err := p.advance("]", true); err != nil {
			return nil, err
		}
		return &node{typ: ntArray, exprs: exprs, pos: pos}, nil
	case "{":
		pairs, err := p.objectPairs()
		if err != nil {
			return nil, err
		}
		return &node{typ: ntObject, pairs: pairs, pos: pos}, nil
	case "|":
		pat, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		if err := p.advance("|", false); err != nil {
			return nil, err
		}
		upd, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		n := &node{typ: ntTransform, pattern: pat, update: upd, pos: pos}
		if p.isOp(",") {
			if err := p.advance(",", false); err != nil {
				return nil, err
			}
			if n.delete, err = p.expression(0); err != nil {
				return nil, err
			}
		}
		if err := p.advance("|", false); err != nil {
			return nil, err
		}
		return n, nil
	}
	return nil, newErr("S0211", t.pos, t.value, "The symbol "+t.value+" cannot be used as a unary operator")
}

func (p *parser) objectPairs() ([]pair, error) {
	var pairs []pair
	if !p.isOp("}") {
		for {
			k, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			if err := p.advance(":", false); err != nil {
				return nil, err
			}
			v, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, pair{k, v})
			if !p.isOp(",") {
				break
			}
			if err := p.advance(",", false); err != nil {
				return nil, err
			}
		}
	}
	if err := p.advance("}", true); err != nil {
		return nil, err
	}
	return pairs, nil
}

func (p *parser) led(t *token, left *node) (*node, error) {
	pos := t.pos
	op := t.value
	if t.kind != tkOperator {
		return nil, newErr("S0201", t.pos, t.value, "Syntax error: "+t.value)
	}
	switch op {
	case ".", "+", "-", "*", "/", "%", "=", "<", ">", "!=", "<=", ">=", "&", "and", "or", "in", "~>", "..":
		rhs, err := p.expression(operators[op])
		if err != nil {
			return nil, err
		}
		typ := ntBinary
		if op == "." {
			typ = ntDotRaw
		}
		if op == "~>" {
			typ = ntApply
		}
		return &node{typ: typ, op: op, lhs: left, rhs: rhs, pos: pos}, nil
	case ":=":
		if left.typ != ntVariable {
			return nil, newErr("S0212", left.pos, left.op, "The left side of := must be a variable name (start with $)")
		}
		rhs, err := p.expression(operators[op] - 1)
		if err != nil {
			return nil, err
		}
		return &node{typ: ntBind, lhs: left, rhs: rhs, pos: pos}, nil
	case "@", "#":
		rhs, err := p.expression(operators[op])
		if err != nil {
			return nil, err
		}
		if rhs.typ != ntVariable {
			code := "S0214"
			return nil, newErr(code, rhs.pos, op, "The right side of "+op+" must be a variable name (start with $)")
		}
		typ := ntFocusRaw
		if op == "#" {
			typ = ntIndexRaw
		}
		return &node{typ: typ, lhs: left, op: rhs.op, pos: pos}, nil
	case "?":
		then, err := p.expression(0)
		if err != nil {
			return nil, err
		}
		n := &node{typ: ntCondition, cond: left, then: then, pos: pos}
		if p.isOp(":") {
			if err := p.advance(":", false); err != nil {
				return nil, err
			}
			if n.els, err = p.expression(0); err != nil {
				return nil, err
			}
		}
		return n, nil
	case "(":
		var args []*node
		partial := false
		if !p.isOp(")") {
			for {
				if p.isOp("?") {
					args = append(args, &node{typ: ntPlaceholder, pos: p.tok.pos})
					partial = true
					if err := p.advance("?", false); err != nil {
						return nil, err
					}
				} else {
					a, err := p.expression(0)
					if err != nil {
						return nil, err
					}
					args = append(args, a)
				}
				if !p.isOp(",") {
					break
				}
				if err := p.advance(",", false); err != nil {
					return nil, err
				}
			}
		}
		if err := p.advance(")", true); err != nil {
			return nil, err
		}
		if left.typ == ntName && (left.op == "function" || left.op == "λ") {
			// lambda definition
			var params []string
			for _, a := range args {
				if a.typ != ntVariable {
					return nil, newErr("S0208", a.pos, nodeToken(a), "Parameter of function definition must be a variable name (start with $)")
				}
				params = append(params, a.op)
			}
			n := &node{typ: ntLambda, params: params, pos: pos}
			if p.isOp("<") {
				// signature: collect raw text up to matching '>'
				start := p.tok.pos
				depth := 1
				src := p.src
				i := start
				for i < len(src) && depth > 0 {
					if src[i] == '<' {
						depth++
					} else if src[i] == '>' {
						depth--
					}
					i++
				}
				if depth != 0 {
					return nil, newErr("S0401", start, "", "Unterminated signature")
				}
				sigText := "<" + src[start:i]
				sig, err := parseSignature(sigText, start)
				if err != nil {
					return nil, err
				}
				n.signature = sig
				p.lx.pos = i
				p.lx.prev = &token{kind: tkOperator, value: ">"}
				if err := p.advance("", false); err != nil {
					return nil, err
				}
			}
			if err := p.advance("{", false); err != nil {
				return nil, err
			}
			body, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			n.body = body
			if err := p.advance("}", false); err != nil {
				return nil, err
			}
			return n, nil
		}
		typ := ntFunction
		if partial {
			typ = ntPartial
		}
		return &node{typ: typ, proc: left, exprs: args, pos: pos}, nil
	case "[":
		if p.isOp("]") {
			step := left
			for step.typ == ntPredRaw {
				step = step.lhs
			}
			step.keepArray = true
			if err := p.advance("]", false); err != nil {
				return nil, err
			}
			return left, nil
		}
		rhs, err := p.expression(operators["]"])
		if err != nil {
			return nil, err
		}
		if err := p.advance("]", true); err != nil {
			return nil, err
		}
		return &node{typ: ntPredRaw, lhs: left, rhs: rhs, pos: pos}, nil
	case "^":
		if err := p.advance("(", false); err != nil {
			return nil, err
		}
		var terms []sortTerm
		for {
			desc := false
			if p.isOp("<") {
				if err := p.advance("<", false); err != nil {
					return nil, err
				}
			} else if p.isOp(">") {
				desc = true
				if err := p.advance(">", false); err != nil {
					return nil, err
				}
			}
			e, err := p.expression(0)
			if err != nil {
				return nil, err
			}
			terms = append(terms, sortTerm{desc, e})
			if !p.isOp(",") {
				break
			}
			if err := p.advance(",", false); err != nil {
				return nil, err
			}
		}
		if err := p.advance(")", false); err != nil {
			return nil, err
		}
		return &node{typ: ntSortRaw, lhs: left, terms: terms, pos: pos}, nil
	case "{":
		pairs, err := p.objectPairs()
		if err != nil {
			return nil, err
		}
		return &node{typ: ntGroupRaw, lhs: left, pairs: pairs, pos: pos}, nil
	}
	return nil, newErr("S0201", t.pos, t.value, "Syntax error: "+t.value)
}
