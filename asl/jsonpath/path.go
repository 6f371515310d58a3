package jsonpath

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"stepwise/asl/budget"
	"stepwise/jsonvalue"
)

// ErrNotFound is wrapped by the error a definite path returns when it
// selects nothing, and by the error for a variable that is not defined.
var ErrNotFound = errors.New("no results for path")

// NotFoundError is the error of a definite path that selects nothing. Its
// text is the one AWS reports for InputPath, OutputPath and the *Path
// fields: "Invalid path '$.a' : No results for path: $['a']". Reason is the
// part after the colon, worded as Jayway JsonPath words it.
type NotFoundError struct {
	Path   string // the path as written
	Reason string
}

func (e *NotFoundError) Error() string { return "Invalid path '" + e.Path + "' : " + e.Reason }

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// SetError is the error of Set when the path cannot be applied to the
// value, for example $.a.b when $.a is a string.
type SetError struct {
	Path   string // the path as written
	Reason string
}

func (e *SetError) Error() string { return e.Reason }

// Path is a compiled path. It is immutable and safe for concurrent use.
type Path struct {
	text       string
	root       Root
	variable   string
	segs       []segment
	definite   bool
	reference  bool
	normalized string
}

type segKind uint8

const (
	segName     segKind = iota // .a or ['a']
	segNames                   // ['a','b']
	segIndex                   // [0]
	segIndexes                 // [0,1]
	segWildcard                // .* or [*]
	segSlice                   // [1:3]
	segFilter                  // [?(...)]
	segFunc                    // .length()
)

type segment struct {
	kind    segKind
	descend bool // written after "..": applies to the node and all below it
	quote   byte // the quote of a name, kept for Normalized
	name    string
	names   []string
	index   int
	indexes []int
	slice   sliceSpec
	filter  expr
}

// sliceSpec is [from:to:step]. Jayway's slice rules apply: a lone negative
// start or end counts from the end of the array; with both given, the
// indexes from..to-1 are taken one by one, each negative one counting from
// the end.
type sliceSpec struct {
	from, to, step int
	hasFrom, hasTo bool
}

func (p *Path) finish() {
	p.definite, p.reference = true, true
	for i := range p.segs {
		s := &p.segs[i]
		if !s.isDefinite(i == len(p.segs)-1) {
			p.definite = false
		}
		if s.descend || (s.kind != segName && s.kind != segIndex) {
			p.reference = false
		}
	}
	var b strings.Builder
	b.WriteString(p.rootText())
	p.appendFragments(&b, 0, len(p.segs))
	p.normalized = b.String()
}

// isDefinite follows Jayway: a single name or index, a function, and
// several names in the last segment (merged into one object) select at most
// one value.
func (s *segment) isDefinite(last bool) bool {
	if s.descend {
		return false
	}
	switch s.kind {
	case segName, segIndex, segFunc:
		return true
	case segNames:
		return last
	}
	return false
}

// String returns the path as written.
func (p *Path) String() string { return p.text }

// Normalized returns the path in the bracketed form Jayway uses in its
// messages: $.a.b[0] is $['a']['b'][0]. The root is kept as written ($, $$
// or $name).
func (p *Path) Normalized() string { return p.normalized }

// Root says which value the path starts from.
func (p *Path) Root() Root { return p.root }

// Variable returns the variable name of a RootVariable path ("$foo.bar"
// gives "foo"), and "" for other paths.
func (p *Path) Variable() string { return p.variable }

// IsDefinite reports whether the path selects at most one value: it has no
// wildcard, slice, filter, index list, recursive descent, and several names
// only in its last segment.
func (p *Path) IsDefinite() bool { return p.definite }

// IsReference reports whether the path is an ASL Reference Path: only
// names (dot or bracket notation) and single indexes.
func (p *Path) IsReference() bool { return p.reference }

func (p *Path) rootText() string {
	switch p.root {
	case RootContext:
		return "$$"
	case RootVariable:
		return "$" + p.variable
	}
	return "$"
}

func (p *Path) appendFragments(b *strings.Builder, from, to int) {
	for i := from; i < to; i++ {
		p.segs[i].appendFragment(b)
	}
}

func (s *segment) appendFragment(b *strings.Builder) {
	if s.descend {
		b.WriteString("..")
	}
	switch s.kind {
	case segName:
		b.WriteByte('[')
		b.WriteByte(s.quote)
		b.WriteString(s.name)
		b.WriteByte(s.quote)
		b.WriteByte(']')
	case segNames:
		b.WriteByte('[')
		for i, n := range s.names {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte(s.quote)
			b.WriteString(n)
			b.WriteByte(s.quote)
		}
		b.WriteByte(']')
	case segIndex:
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(s.index))
		b.WriteByte(']')
	case segIndexes:
		b.WriteByte('[')
		for i, n := range s.indexes {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(n))
		}
		b.WriteByte(']')
	case segWildcard:
		b.WriteString("[*]")
	case segSlice:
		b.WriteByte('[')
		if s.slice.hasFrom {
			b.WriteString(strconv.Itoa(s.slice.from))
		}
		b.WriteByte(':')
		if s.slice.hasTo {
			b.WriteString(strconv.Itoa(s.slice.to))
		}
		if s.slice.step != 1 || !s.slice.hasFrom && !s.slice.hasTo {
			// A bare "[:]" does not parse: keep the step ("[::1]").
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(s.slice.step))
		}
		b.WriteByte(']')
	case segFilter:
		b.WriteString("[?]")
	case segFunc:
		b.WriteByte('.')
		b.WriteString(s.name)
		b.WriteString("()")
	}
}

// Eval evaluates the path against the root Root() picks from env: Input,
// Context or the variable. A definite path returns the value it selects or
// an error wrapping ErrNotFound; an indefinite path returns a []any of all
// matches in document order, empty when nothing matches.
func (p *Path) Eval(env *Env) (any, error) {
	var root any
	if env != nil {
		switch p.root {
		case RootInput:
			root = env.Input
		case RootContext:
			root = env.ContextValue()
		}
	}
	if p.root == RootVariable {
		var ok bool
		if env != nil && env.Vars != nil {
			root, ok = env.Vars(p.variable)
		}
		if !ok {
			return nil, &NotFoundError{Path: p.text, Reason: "The variable '" + p.variable + "' is not defined"}
		}
	}
	if p.definite {
		return p.Apply(root)
	}
	return p.ApplyBudget(root, env.Meter())
}

// Apply is Eval against root, whatever Root() says.
func (p *Path) Apply(root any) (any, error) {
	if p.definite {
		v, failed := p.walk(root)
		if failed >= 0 {
			return nil, p.notFound(failed, v)
		}
		return v, nil
	}
	return p.collect(root, 0, root, nil, make([]any, 0, 4)), nil
}

// ApplyBudget is Apply counting the nodes an indefinite path visits and
// the values it collects against m; past a limit it returns m's
// *budget.Error.
func (p *Path) ApplyBudget(root any, m *budget.Meter) (v any, err error) {
	if p.definite || m == nil {
		return p.Apply(root)
	}
	defer func() {
		if r := recover(); r != nil {
			le, ok := r.(limitPanic)
			if !ok {
				panic(r)
			}
			v, err = nil, le.err
		}
	}()
	return p.collect(root, 0, root, m, make([]any, 0, 4)), nil
}

// limitPanic carries a budget's error out of a deep walk; ApplyBudget
// recovers it.
type limitPanic struct{ err error }

// count counts one visit, and a collected value when collected is set.
func count(m *budget.Meter, collected bool) {
	if m == nil {
		return
	}
	err := m.Step()
	if err == nil && collected {
		err = m.Bytes(slotBytes)
	}
	if err != nil {
		panic(limitPanic{err})
	}
}

// slotBytes is what one collected value is counted as.
const slotBytes = 16

// walk follows a definite path from node. When segment i cannot be applied
// it returns the node it was applied to and i; otherwise the value and -1.
func (p *Path) walk(node any) (any, int) {
	for i := range p.segs {
		s := &p.segs[i]
		switch s.kind {
		case segName:
			obj, ok := node.(*jsonvalue.Object)
			if !ok {
				return node, i
			}
			v, ok := obj.Get(s.name)
			if !ok {
				return node, i
			}
			node = v
		case segIndex:
			arr, ok := node.([]any)
			if !ok {
				return node, i
			}
			v, ok := elem(arr, s.index)
			if !ok {
				return node, i
			}
			node = v
		case segNames:
			obj, ok := node.(*jsonvalue.Object)
			if !ok {
				return node, i
			}
			node = merge(obj, s.names)
		case segFunc:
			node = length(node)
		}
	}
	return node, -1
}

// notFound explains why segment i could not be applied to node, in the
// words of Jayway JsonPath.
func (p *Path) notFound(i int, node any) error {
	s := &p.segs[i]
	var at strings.Builder
	at.WriteString(p.rootText())
	p.appendFragments(&at, 0, i)
	var reason string
	switch s.kind {
	case segName, segNames:
		var frag strings.Builder
		s.appendFragment(&frag)
		switch _, isObj := node.(*jsonvalue.Object); {
		case !isObj:
			reason = fmt.Sprintf("Expected to find an object with property %s in path %s but found '%s'",
				frag.String(), at.String(), jsonvalue.TypeName(node))
		case i == len(p.segs)-1:
			reason = "No results for path: " + p.normalized
		default:
			reason = "Missing property in path " + at.String() + frag.String()
		}
	case segIndex:
		switch node.(type) {
		case nil:
			reason = "The path " + at.String() + " is null"
		case []any:
			reason = "No results for path: " + p.normalized
		default:
			var rest strings.Builder
			p.appendFragments(&rest, i, len(p.segs))
			reason = fmt.Sprintf("Filter: %s can only be applied to arrays. Current context is: %s",
				rest.String(), jsonvalue.String(node))
		}
	default:
		reason = "No results for path: " + p.normalized
	}
	return &NotFoundError{Path: p.text, Reason: reason}
}

// collect appends to out every value segments i... select from node.
func (p *Path) collect(node any, i int, root any, m *budget.Meter, out []any) []any {
	count(m, i == len(p.segs))
	if i == len(p.segs) {
		return append(out, node)
	}
	if p.segs[i].descend {
		return p.scan(node, i, root, m, out)
	}
	return p.step(node, i, root, m, out)
}

// step applies segment i (ignoring its descent) to node and continues with
// each value it selects.
func (p *Path) step(node any, i int, root any, m *budget.Meter, out []any) []any {
	s := &p.segs[i]
	switch s.kind {
	case segName:
		if obj, ok := node.(*jsonvalue.Object); ok {
			if v, ok := obj.Get(s.name); ok {
				out = p.collect(v, i+1, root, m, out)
			}
		}
	case segNames:
		obj, ok := node.(*jsonvalue.Object)
		if !ok {
			break
		}
		if i == len(p.segs)-1 {
			return append(out, merge(obj, s.names))
		}
		for _, name := range s.names {
			if v, ok := obj.Get(name); ok {
				out = p.collect(v, i+1, root, m, out)
			}
		}
	case segIndex:
		if arr, ok := node.([]any); ok {
			if v, ok := elem(arr, s.index); ok {
				out = p.collect(v, i+1, root, m, out)
			}
		}
	case segIndexes:
		if arr, ok := node.([]any); ok {
			for _, j := range s.indexes {
				if v, ok := elem(arr, j); ok {
					out = p.collect(v, i+1, root, m, out)
				}
			}
		}
	case segWildcard:
		switch t := node.(type) {
		case *jsonvalue.Object:
			for j := range t.Len() {
				_, v := t.At(j)
				out = p.collect(v, i+1, root, m, out)
			}
		case []any:
			for _, v := range t {
				out = p.collect(v, i+1, root, m, out)
			}
		}
	case segSlice:
		if arr, ok := node.([]any); ok {
			start, stop := s.slice.bounds(len(arr))
			for j := start; j < stop; j += s.slice.step {
				if v, ok := elem(arr, j); ok {
					out = p.collect(v, i+1, root, m, out)
				}
			}
		}
	case segFilter:
		// On an array the filter keeps the matching elements; on an object
		// it tests the object itself (Jayway).
		switch t := node.(type) {
		case []any:
			for _, v := range t {
				if s.filter.match(v, root) {
					out = p.collect(v, i+1, root, m, out)
				}
			}
		case *jsonvalue.Object:
			if s.filter.match(t, root) {
				out = p.collect(t, i+1, root, m, out)
			}
		}
	case segFunc:
		out = p.collect(length(node), i+1, root, m, out)
	}
	return out
}

// scan applies segment i to node and to every array and object below it,
// in pre-order, as Jayway's deep scan does.
func (p *Path) scan(node any, i int, root any, m *budget.Meter, out []any) []any {
	count(m, false)
	switch t := node.(type) {
	case *jsonvalue.Object:
		if p.scanApplies(t, i, root) {
			out = p.step(t, i, root, m, out)
		}
		for j := range t.Len() {
			_, v := t.At(j)
			out = p.scan(v, i, root, m, out)
		}
	case []any:
		if p.scanApplies(t, i, root) {
			out = p.step(t, i, root, m, out)
		}
		for _, v := range t {
			out = p.scan(v, i, root, m, out)
		}
	}
	return out
}

// scanApplies says whether a deep scan applies segment i at node: names to
// objects (all of them present for a merge), indexes and slices to arrays,
// '*' to both, and a filter where the node itself passes it.
func (p *Path) scanApplies(node any, i int, root any) bool {
	s := &p.segs[i]
	switch s.kind {
	case segName:
		_, ok := node.(*jsonvalue.Object)
		return ok
	case segNames:
		obj, ok := node.(*jsonvalue.Object)
		if !ok {
			return false
		}
		if i == len(p.segs)-1 {
			for _, n := range s.names {
				if !obj.Has(n) {
					return false
				}
			}
		}
		return true
	case segIndex, segIndexes, segSlice:
		_, ok := node.([]any)
		return ok
	case segWildcard:
		return true
	case segFilter:
		return s.filter.match(node, root)
	}
	return false
}

// bounds returns the first index and the end of a slice over n elements.
func (sl *sliceSpec) bounds(n int) (start, stop int) {
	switch {
	case sl.hasFrom && !sl.hasTo:
		start = sl.from
		if start < 0 {
			start += n
		}
		return max(start, 0), n
	case !sl.hasFrom && sl.hasTo:
		stop = sl.to
		if stop < 0 {
			stop += n
		}
		return 0, min(stop, n)
	case sl.hasFrom && sl.hasTo:
		start, stop = sl.from, min(sl.to, n)
		if start < -n { // skip the indexes that fall before the array
			k := (-n - start + sl.step - 1) / sl.step
			start += k * sl.step
		}
		return start, stop
	}
	return 0, n
}

// elem returns arr[i], counting a negative i from the end.
func elem(arr []any, i int) (any, bool) {
	if i < 0 {
		i += len(arr)
	}
	if i < 0 || i >= len(arr) {
		return nil, false
	}
	return arr[i], true
}

// merge returns the object holding those of names that obj has.
func merge(obj *jsonvalue.Object, names []string) *jsonvalue.Object {
	m := jsonvalue.NewObject(len(names))
	for _, n := range names {
		if v, ok := obj.Get(n); ok {
			m.Set(n, v)
		}
	}
	return m
}

// length is length() and size(): the size of an array or object, else null.
func length(v any) any {
	switch t := v.(type) {
	case []any:
		return jsonvalue.NumberFromInt(int64(len(t)))
	case *jsonvalue.Object:
		return jsonvalue.NumberFromInt(int64(t.Len()))
	}
	return nil
}

// Set returns a copy of root with v placed at the path, the way ResultPath
// places a result: "$" replaces the whole root, a missing member is added,
// missing objects on the way are created, and an index replaces an existing
// array element. Only the objects and arrays along the path are copied; root
// itself is left as it was. The path must be a reference path.
func (p *Path) Set(root, v any) (any, error) {
	if !p.reference {
		return nil, &SetError{Path: p.text, Reason: "'" + p.text + "' is not a reference path"}
	}
	return p.set(root, 0, v)
}

func (p *Path) set(node any, i int, v any) (any, error) {
	if i == len(p.segs) {
		return v, nil
	}
	s := &p.segs[i]
	switch s.kind {
	case segName:
		obj, ok := node.(*jsonvalue.Object)
		if !ok {
			return nil, p.setError(i, node, "")
		}
		child, ok := obj.Get(s.name)
		if !ok && i+1 < len(p.segs) {
			if p.segs[i+1].kind != segName {
				return nil, p.setError(i+1, nil, "missing")
			}
			child = jsonvalue.NewObject(1)
		}
		nv, err := p.set(child, i+1, v)
		if err != nil {
			return nil, err
		}
		c := obj.Clone()
		c.Set(s.name, nv)
		return c, nil
	case segIndex:
		arr, ok := node.([]any)
		if !ok {
			return nil, p.setError(i, node, "")
		}
		j := s.index
		if j < 0 {
			j += len(arr)
		}
		if j < 0 || j >= len(arr) {
			return nil, p.setError(i, node, "bounds")
		}
		nv, err := p.set(arr[j], i+1, v)
		if err != nil {
			return nil, err
		}
		c := make([]any, len(arr))
		copy(c, arr)
		c[j] = nv
		return c, nil
	}
	return nil, &SetError{Path: p.text, Reason: "'" + p.text + "' is not a reference path"}
}

// setError explains why segment i cannot be applied to node: why is
// "missing" when the member that should hold node is absent, "bounds" when
// an index is out of range, and "" when node has the wrong type.
func (p *Path) setError(i int, node any, why string) error {
	s := &p.segs[i]
	var at, frag strings.Builder
	at.WriteString(p.rootText())
	p.appendFragments(&at, 0, i)
	s.appendFragment(&frag)
	var reason string
	switch {
	case why == "missing":
		reason = fmt.Sprintf("missing property in path %s, so %s cannot be applied", at.String(), frag.String())
	case why == "bounds":
		reason = fmt.Sprintf("index %s is out of bounds in path %s (length %d)", frag.String(), at.String(), len(node.([]any)))
	case s.kind == segIndex:
		reason = fmt.Sprintf("expected to find an array with index %s in path %s but found '%s'",
			frag.String(), at.String(), jsonvalue.TypeName(node))
	default:
		reason = fmt.Sprintf("expected to find an object with property %s in path %s but found '%s'",
			frag.String(), at.String(), jsonvalue.TypeName(node))
	}
	return &SetError{Path: p.text, Reason: reason}
}
