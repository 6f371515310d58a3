package cfn

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Pattern is a parameter's AllowedPattern: a Java regular expression, as
// CloudFormation takes it, that must match the whole value. One RE2
// takes is run by package regexp; one it refuses for its lookarounds
// ((?=, (?!, (?<=, (?<!) or atomic groups ((?>) by a small backtracking
// matcher of the Java syntax templates use: literals and escapes (\d \w
// \s and their negations, \t \n \r \f \e \xhh \uhhhh, \b \B \A \z \Z),
// classes with ranges, groups, alternation, the greedy, lazy and
// possessive quantifiers, ^ and $.
type Pattern struct {
	source string
	re     *regexp.Regexp
	bt     *btNode
}

// CompilePattern compiles an AllowedPattern.
func CompilePattern(source string) (*Pattern, error) {
	re, reErr := regexp.Compile("^(?:" + source + ")$")
	if reErr == nil {
		return &Pattern{source: source, re: re}, nil
	}
	p := &btParser{src: []rune(source)}
	n, err := p.parse()
	if err != nil {
		return nil, err
	}
	return &Pattern{source: source, bt: n}, nil
}

// String is the pattern as the template has it.
func (p *Pattern) String() string { return p.source }

// MatchString says whether s matches the whole pattern. A value that
// makes the backtracking matcher take too many steps does not match.
func (p *Pattern) MatchString(s string) bool {
	if p.re != nil {
		return p.re.MatchString(s)
	}
	m := &btMatcher{in: []rune(s), budget: btBudget}
	in := len(m.in)
	return m.match(p.bt, 0, func(e int) bool { return e == in })
}

// btBudget bounds the steps of one match (and so the depth of its
// recursion).
const btBudget = 100_000

// btMaxRepeat bounds a {n,m}'s counts, as RE2 does.
const btMaxRepeat = 1000

type btKind int

const (
	btChar   btKind = iota // one character that pred takes
	btSeq                  // subs in turn
	btAlt                  // one of subs
	btRepeat               // sub, min to max times (max -1: no bound)
	btAtomic               // sub's first match, not backtracked into
	btLook                 // sub matches here (ahead) or ending here (behind); neg: does not
	btAssert               // an anchor: ^ $ \b \B
)

type btNode struct {
	kind     btKind
	pred     func(rune) bool
	subs     []*btNode
	min, max int
	lazy     bool
	behind   bool
	neg      bool
	anchor   rune // '^', '$', 'b', 'B', 'z'
	lit      rune // a btChar of one character: that character
	isLit    bool
}

type btMatcher struct {
	in     []rune
	budget int
}

// match matches n at i, then k at where n ended.
func (m *btMatcher) match(n *btNode, i int, k func(int) bool) bool {
	if m.budget--; m.budget < 0 {
		return false
	}
	switch n.kind {
	case btChar:
		return i < len(m.in) && n.pred(m.in[i]) && k(i+1)
	case btSeq:
		return m.seq(n.subs, i, k)
	case btAlt:
		for _, s := range n.subs {
			if m.match(s, i, k) {
				return true
			}
		}
		return false
	case btRepeat:
		return m.repeat(n, 0, i, k)
	case btAtomic:
		end := -1
		if !m.match(n.subs[0], i, func(e int) bool { end = e; return true }) {
			return false
		}
		return k(end)
	case btLook:
		ok := false
		if n.behind {
			for j := i; j >= 0 && !ok; j-- {
				ok = m.match(n.subs[0], j, func(e int) bool { return e == i })
			}
		} else {
			ok = m.match(n.subs[0], i, func(int) bool { return true })
		}
		return ok != n.neg && k(i)
	case btAssert:
		switch n.anchor {
		case '^':
			return i == 0 && k(i)
		case '$':
			return (i == len(m.in) || i == len(m.in)-1 && m.in[i] == '\n') && k(i)
		case 'z':
			return i == len(m.in) && k(i)
		case 'b', 'B':
			before := i > 0 && isWord(m.in[i-1])
			after := i < len(m.in) && isWord(m.in[i])
			return (before != after) == (n.anchor == 'b') && k(i)
		}
	}
	return false
}

func (m *btMatcher) seq(subs []*btNode, i int, k func(int) bool) bool {
	if len(subs) == 0 {
		return k(i)
	}
	return m.match(subs[0], i, func(j int) bool { return m.seq(subs[1:], j, k) })
}

func (m *btMatcher) repeat(n *btNode, count, i int, k func(int) bool) bool {
	more := func() bool {
		return (n.max < 0 || count < n.max) && m.match(n.subs[0], i, func(j int) bool {
			return j != i && m.repeat(n, count+1, j, k) // an empty pass ends the loop
		})
	}
	if count < n.min {
		return m.match(n.subs[0], i, func(j int) bool { return m.repeat(n, count+1, j, k) })
	}
	if n.lazy {
		return k(i) || more()
	}
	return more() || k(i)
}

func isWord(r rune) bool {
	return r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// btParser reads a Java regular expression.
type btParser struct {
	src []rune
	pos int
}

func (p *btParser) fail(format string, args ...any) error {
	return fmt.Errorf("%s at offset %d", fmt.Sprintf(format, args...), p.pos)
}

func (p *btParser) parse() (*btNode, error) {
	n, err := p.alternation()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.src) {
		return nil, p.fail("unmatched )")
	}
	return n, nil
}

func (p *btParser) more() bool { return p.pos < len(p.src) }

func (p *btParser) peek() rune { return p.src[p.pos] }

func (p *btParser) alternation() (*btNode, error) {
	var alts []*btNode
	for {
		s, err := p.sequence()
		if err != nil {
			return nil, err
		}
		alts = append(alts, s)
		if !p.more() || p.peek() != '|' {
			break
		}
		p.pos++
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &btNode{kind: btAlt, subs: alts}, nil
}

func (p *btParser) sequence() (*btNode, error) {
	seq := &btNode{kind: btSeq}
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		atom, err := p.atom()
		if err != nil {
			return nil, err
		}
		if atom, err = p.quantified(atom); err != nil {
			return nil, err
		}
		seq.subs = append(seq.subs, atom)
	}
	return seq, nil
}

func (p *btParser) quantified(atom *btNode) (*btNode, error) {
	if !p.more() {
		return atom, nil
	}
	lo, hi := 0, 0
	switch p.peek() {
	case '*':
		lo, hi = 0, -1
	case '+':
		lo, hi = 1, -1
	case '?':
		lo, hi = 0, 1
	case '{':
		end := p.pos
		for end < len(p.src) && p.src[end] != '}' {
			end++
		}
		if end == len(p.src) {
			return nil, p.fail("unclosed {")
		}
		body := string(p.src[p.pos+1 : end])
		a, b, comma := strings.Cut(body, ",")
		var err error
		if lo, err = strconv.Atoi(a); err != nil {
			return nil, p.fail("bad repetition {%s}", body)
		}
		hi = lo
		if comma {
			hi = -1
			if b != "" {
				if hi, err = strconv.Atoi(b); err != nil || hi < lo {
					return nil, p.fail("bad repetition {%s}", body)
				}
			}
		}
		if lo > btMaxRepeat || hi > btMaxRepeat {
			return nil, p.fail("repetition {%s} over %d", body, btMaxRepeat)
		}
		p.pos = end // the } is passed below
	default:
		return atom, nil
	}
	if atom.kind == btAssert || atom.kind == btLook {
		return nil, p.fail("nothing to repeat")
	}
	p.pos++
	n := &btNode{kind: btRepeat, subs: []*btNode{atom}, min: lo, max: hi}
	if p.more() && p.peek() == '?' {
		n.lazy = true
		p.pos++
	} else if p.more() && p.peek() == '+' {
		p.pos++
		return &btNode{kind: btAtomic, subs: []*btNode{n}}, nil
	}
	return n, nil
}

func (p *btParser) atom() (*btNode, error) {
	r := p.peek()
	p.pos++
	switch r {
	case '(':
		return p.group()
	case '[':
		pred, err := p.class()
		if err != nil {
			return nil, err
		}
		return &btNode{kind: btChar, pred: pred}, nil
	case '.':
		return &btNode{kind: btChar, pred: func(r rune) bool { return r != '\n' && r != '\r' }}, nil
	case '^', '$':
		return &btNode{kind: btAssert, anchor: r}, nil
	case '\\':
		return p.escape(false)
	case '*', '+', '?', '{':
		return nil, p.fail("nothing to repeat")
	}
	return literal(r), nil
}

func literal(c rune) *btNode {
	return &btNode{kind: btChar, pred: func(r rune) bool { return r == c }, lit: c, isLit: true}
}

func (p *btParser) group() (*btNode, error) {
	look, behind, neg, atomic := false, false, false, false
	rest := string(p.src[p.pos:])
	switch {
	case strings.HasPrefix(rest, "?:"):
		p.pos += 2
	case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"):
		look, neg = true, rest[1] == '!'
		p.pos += 2
	case strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"):
		look, behind, neg = true, true, rest[2] == '!'
		p.pos += 3
	case strings.HasPrefix(rest, "?>"):
		atomic = true
		p.pos += 2
	case strings.HasPrefix(rest, "?<"):
		end := strings.IndexRune(rest, '>')
		if end < 0 {
			return nil, p.fail("unclosed group name")
		}
		p.pos += len([]rune(rest[:end+1]))
	case strings.HasPrefix(rest, "?"):
		return nil, p.fail("group (%s is not supported", string(p.src[p.pos:min(p.pos+2, len(p.src))]))
	}
	sub, err := p.alternation()
	if err != nil {
		return nil, err
	}
	if !p.more() || p.peek() != ')' {
		return nil, p.fail("missing )")
	}
	p.pos++
	switch {
	case look:
		return &btNode{kind: btLook, subs: []*btNode{sub}, behind: behind, neg: neg}, nil
	case atomic:
		return &btNode{kind: btAtomic, subs: []*btNode{sub}}, nil
	}
	return sub, nil
}

// escape reads what follows a backslash; inClass: within [...], where
// only characters and character sets are.
func (p *btParser) escape(inClass bool) (*btNode, error) {
	if !p.more() {
		return nil, p.fail("trailing backslash")
	}
	r := p.peek()
	p.pos++
	switch r {
	case 'd', 'D':
		return set(r == 'D', func(r rune) bool { return '0' <= r && r <= '9' }), nil
	case 'w', 'W':
		return set(r == 'W', isWord), nil
	case 's', 'S':
		return set(r == 'S', func(r rune) bool { return strings.ContainsRune(" \t\n\x0B\f\r", r) }), nil
	case 't':
		return literal('\t'), nil
	case 'n':
		return literal('\n'), nil
	case 'r':
		return literal('\r'), nil
	case 'f':
		return literal('\f'), nil
	case 'e':
		return literal('\x1b'), nil
	case 'a':
		return literal('\a'), nil
	case 'x', 'u':
		n := 2
		if r == 'u' {
			n = 4
		}
		if p.pos+n > len(p.src) {
			return nil, p.fail("bad \\%c escape", r)
		}
		v, err := strconv.ParseUint(string(p.src[p.pos:p.pos+n]), 16, 32)
		if err != nil {
			return nil, p.fail("bad \\%c escape", r)
		}
		p.pos += n
		return literal(rune(v)), nil
	}
	if !inClass {
		switch r {
		case 'b', 'B':
			return &btNode{kind: btAssert, anchor: r}, nil
		case 'A':
			return &btNode{kind: btAssert, anchor: '^'}, nil
		case 'z':
			return &btNode{kind: btAssert, anchor: 'z'}, nil
		case 'Z':
			return &btNode{kind: btAssert, anchor: '$'}, nil
		}
	}
	if isWord(r) {
		return nil, p.fail("escape \\%c is not supported", r)
	}
	return literal(r), nil
}

// set is a character set's node: pred, or its negation.
func set(neg bool, pred func(rune) bool) *btNode {
	return &btNode{kind: btChar, pred: func(r rune) bool { return pred(r) != neg }}
}

// class reads a [...] class, after its [.
func (p *btParser) class() (func(rune) bool, error) {
	neg := false
	if p.more() && p.peek() == '^' {
		neg = true
		p.pos++
	}
	var preds []func(rune) bool
	first := true
	for {
		if !p.more() {
			return nil, errors.New("unclosed character class")
		}
		r := p.peek()
		if r == ']' && !first {
			p.pos++
			break
		}
		first = false
		if r == '[' {
			return nil, p.fail("nested character classes are not supported")
		}
		p.pos++
		lo := r
		if r == '\\' {
			n, err := p.escape(true)
			if err != nil {
				return nil, err
			}
			if !n.isLit {
				preds = append(preds, n.pred)
				continue
			}
			lo = n.lit
		}
		if p.pos+1 < len(p.src) && p.peek() == '-' && p.src[p.pos+1] != ']' {
			p.pos++
			hi := p.peek()
			p.pos++
			if hi == '\\' {
				n, err := p.escape(true)
				if err != nil {
					return nil, err
				}
				if !n.isLit {
					return nil, p.fail("bad range")
				}
				hi = n.lit
			}
			if hi < lo {
				return nil, p.fail("bad range %c-%c", lo, hi)
			}
			l, h := lo, hi
			preds = append(preds, func(r rune) bool { return l <= r && r <= h })
			continue
		}
		c := lo
		preds = append(preds, func(r rune) bool { return r == c })
	}
	return func(r rune) bool {
		for _, f := range preds {
			if f(r) {
				return !neg
			}
		}
		return neg
	}, nil
}
