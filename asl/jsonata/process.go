package jsonata

// The processor rewrites the raw parse tree into evaluable form, as
// jsonata.js processAST does.

type slot struct {
	label string
	level int
	index int
}

type processor struct {
	ancestry []*node
	label    int
}

func (pr *processor) pushAncestry(res, v *node) {
	if v == nil {
		return
	}
	if v.seeking != nil || v.typ == ntParent {
		slots := v.seeking
		if v.typ == ntParent {
			slots = append(slots, v.slot)
		}
		res.seeking = append(res.seeking, slots...)
	}
}

func (pr *processor) seekParent(n *node, s *slot) (*slot, error) {
	switch n.typ {
	case ntName, ntWildcard:
		s.level--
		if s.level == 0 {
			if n.ancestor == nil {
				n.ancestor = s
			} else {
				pr.ancestry[s.index].slot.label = n.ancestor.label
				n.ancestor = s
			}
			n.tuple = true
		}
	case ntParent:
		s.level++
	case ntBlock:
		if len(n.exprs) > 0 {
			n.tuple = true
			return pr.seekParent(n.exprs[len(n.exprs)-1], s)
		}
	case ntPath:
		n.tuple = true
		i := len(n.steps) - 1
		var err error
		if s, err = pr.seekParent(n.steps[i], s); err != nil {
			return nil, err
		}
		i--
		for s.level > 0 && i >= 0 {
			if s, err = pr.seekParent(n.steps[i], s); err != nil {
				return nil, err
			}
			i--
		}
	default:
		return nil, newErr("S0217", n.pos, "", "The object representing the 'parent' cannot be derived from this expression")
	}
	return s, nil
}

func (pr *processor) resolveAncestry(path *node) error {
	last := path.steps[len(path.steps)-1]
	slots := last.seeking
	if last.typ == ntParent {
		slots = append(slots, last.slot)
	}
	for _, s := range slots {
		index := len(path.steps) - 2
		for s.level > 0 {
			if index < 0 {
				path.seeking = append(path.seeking, s)
				break
			}
			step := path.steps[index]
			index--
			for index >= 0 && step.hasFocus && path.steps[index].hasFocus {
				step = path.steps[index]
				index--
			}
			var err error
			if s, err = pr.seekParent(step, s); err != nil {
				return err
			}
		}
	}
	return nil
}

func nodeToken(n *node) string {
	switch n.typ {
	case ntName, ntVariable:
		return n.op
	case ntString:
		return n.str
	}
	return ""
}

// process rewrites the raw parse tree into evaluable form, following
// jsonata.js processAST: dot chains become paths of steps, predicates attach
// to steps as stages, group-by/sort/focus/index annotate steps.
func (pr *processor) process(n *node) (*node, error) {
	if n == nil {
		return nil, nil
	}
	var err error
	switch n.typ {
	case ntDotRaw:
		l, err := pr.process(n.lhs)
		if err != nil {
			return nil, err
		}
		var res *node
		if l.typ == ntPath {
			res = l
		} else {
			res = &node{typ: ntPath, steps: []*node{l}, pos: n.pos}
		}
		if l.typ == ntParent {
			res.seeking = []*slot{l.slot}
		}
		r, err := pr.process(n.rhs)
		if err != nil {
			return nil, err
		}
		if r.typ == ntPath {
			res.steps = append(res.steps, r.steps...)
		} else {
			if r.predicate != nil {
				r.stages = r.predicate
				r.predicate = nil
			}
			res.steps = append(res.steps, r)
		}
		for _, s := range res.steps {
			if s.typ == ntNumber || s.typ == ntValue {
				return nil, newErr("S0213", s.pos, "", "The literal value cannot be used as a step within a path expression")
			}
			if s.typ == ntString {
				s.typ = ntName
				s.op = s.str
			}
			if s.keepArray {
				res.keepSingle = true
			}
		}
		if first := res.steps[0]; first.typ == ntArray {
			first.consArray = true
		}
		if last := res.steps[len(res.steps)-1]; last.typ == ntArray {
			last.consArray = true
		}
		if err := pr.resolveAncestry(res); err != nil {
			return nil, err
		}
		return res, nil
	case ntPredRaw:
		res, err := pr.process(n.lhs)
		if err != nil {
			return nil, err
		}
		step := res
		isPath := res.typ == ntPath
		if isPath {
			step = res.steps[len(res.steps)-1]
		}
		if step.group != nil {
			return nil, newErr("S0209", n.pos, "", "A predicate cannot follow a grouping expression in a step")
		}
		pred, err := pr.process(n.rhs)
		if err != nil {
			return nil, err
		}
		if pred.seeking != nil {
			for _, s := range pred.seeking {
				if s.level == 1 {
					if _, err := pr.seekParent(step, s); err != nil {
						return nil, err
					}
				} else {
					s.level--
				}
			}
			pr.pushAncestry(step, pred)
		}
		if isPath {
			step.stages = append(step.stages, &node{typ: ntPredRaw, rhs: pred, pos: n.pos})
		} else {
			step.predicate = append(step.predicate, &node{typ: ntPredRaw, rhs: pred, pos: n.pos})
		}
		return res, nil
	case ntGroupRaw:
		res, err := pr.process(n.lhs)
		if err != nil {
			return nil, err
		}
		if res.group != nil {
			return nil, newErr("S0210", n.pos, "", "Each step can only have one grouping expression")
		}
		g := &node{typ: ntObject, pos: n.pos}
		for _, pp := range n.pairs {
			k, err := pr.process(pp.k)
			if err != nil {
				return nil, err
			}
			v, err := pr.process(pp.v)
			if err != nil {
				return nil, err
			}
			g.pairs = append(g.pairs, pair{k, v})
		}
		res.group = g
		return res, nil
	case ntSortRaw:
		res, err := pr.process(n.lhs)
		if err != nil {
			return nil, err
		}
		if res.typ != ntPath {
			res = &node{typ: ntPath, steps: []*node{res}, pos: n.pos}
		}
		s := &node{typ: ntSort, pos: n.pos}
		for _, t := range n.terms {
			e, err := pr.process(t.expr)
			if err != nil {
				return nil, err
			}
			s.terms = append(s.terms, sortTerm{t.desc, e})
			pr.pushAncestry(s, e)
		}
		res.steps = append(res.steps, s)
		if err := pr.resolveAncestry(res); err != nil {
			return nil, err
		}
		return res, nil
	case ntFocusRaw, ntIndexRaw:
		res, err := pr.process(n.lhs)
		if err != nil {
			return nil, err
		}
		step := res
		if res.typ == ntPath {
			step = res.steps[len(res.steps)-1]
		} else {
			res = &node{typ: ntPath, steps: []*node{res}, pos: n.pos}
			if step.predicate != nil {
				step.stages = step.predicate
				step.predicate = nil
			}
		}
		if n.typ == ntFocusRaw {
			if step.stages != nil || step.predicate != nil {
				return nil, newErr("S0215", n.pos, "", "A context variable binding must precede any predicates on a step")
			}
			if step.typ == ntSort {
				return nil, newErr("S0216", n.pos, "", "A context variable binding must precede the 'order-by' clause on a step")
			}
			step.focus = n.op
			step.hasFocus = true
		} else {
			if step.stages == nil {
				step.index = n.op
				step.hasIndex = true
			} else {
				step.stages = append(step.stages, &node{typ: ntIndexRaw, op: n.op, pos: n.pos})
			}
		}
		step.tuple = true
		return res, nil
	case ntName:
		res := &node{typ: ntPath, steps: []*node{n}, pos: n.pos}
		if n.keepArray {
			res.keepSingle = true
		}
		return res, nil
	case ntBinary, ntApply:
		if n.lhs, err = pr.process(n.lhs); err != nil {
			return nil, err
		}
		if n.rhs, err = pr.process(n.rhs); err != nil {
			return nil, err
		}
		pr.pushAncestry(n, n.lhs)
		pr.pushAncestry(n, n.rhs)
	case ntParent:
		n.slot = &slot{label: "!" + itoa(pr.label), level: 1, index: len(pr.ancestry)}
		pr.label++
		pr.ancestry = append(pr.ancestry, n)
	case ntBind:
		if n.rhs, err = pr.process(n.rhs); err != nil {
			return nil, err
		}
	case ntUnaryMinus:
		if n.lhs, err = pr.process(n.lhs); err != nil {
			return nil, err
		}
		if n.lhs.typ == ntNumber {
			n.lhs.num = -n.lhs.num
			return n.lhs, nil
		}
	case ntArray, ntBlock:
		for i := range n.exprs {
			if n.exprs[i], err = pr.process(n.exprs[i]); err != nil {
				return nil, err
			}
			pr.pushAncestry(n, n.exprs[i])
		}
	case ntObject:
		for i := range n.pairs {
			if n.pairs[i].k, err = pr.process(n.pairs[i].k); err != nil {
				return nil, err
			}
			if n.pairs[i].v, err = pr.process(n.pairs[i].v); err != nil {
				return nil, err
			}
			pr.pushAncestry(n, n.pairs[i].k)
			pr.pushAncestry(n, n.pairs[i].v)
		}
	case ntFunction, ntPartial:
		if n.proc, err = pr.process(n.proc); err != nil {
			return nil, err
		}
		for i := range n.exprs {
			if n.exprs[i], err = pr.process(n.exprs[i]); err != nil {
				return nil, err
			}
			pr.pushAncestry(n, n.exprs[i])
		}
	case ntLambda:
		if n.body, err = pr.process(n.body); err != nil {
			return nil, err
		}
	case ntCondition:
		if n.cond, err = pr.process(n.cond); err != nil {
			return nil, err
		}
		if n.then, err = pr.process(n.then); err != nil {
			return nil, err
		}
		if n.els, err = pr.process(n.els); err != nil {
			return nil, err
		}
		pr.pushAncestry(n, n.cond)
		pr.pushAncestry(n, n.then)
		pr.pushAncestry(n, n.els)
	case ntTransform:
		if n.pattern, err = pr.process(n.pattern); err != nil {
			return nil, err
		}
		if n.update, err = pr.process(n.update); err != nil {
			return nil, err
		}
		if n.delete, err = pr.process(n.delete); err != nil {
			return nil, err
		}
	}
	return n, nil
}
