package service

import (
	"regexp"
	"slices"
	"strings"

	"stepwise/asl"
	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/jsonvalue"
)

// variableReferencesOf returns, for each state of a definition (nested
// states included), the sorted names of the variables it reads:
// "$name..." paths in JSONPath fields, payload templates and intrinsic
// function arguments, and "$name" in JSONata expressions. It returns nil
// when no state reads a variable, or when the definition does not parse.
func variableReferencesOf(definition string) VariableReferences {
	m, _ := asl.Parse([]byte(definition))
	if m == nil {
		return nil
	}
	refs := VariableReferences{}
	collectMachine(m, refs)
	if len(refs) == 0 {
		return nil
	}
	return refs
}

func collectMachine(m *asl.StateMachine, refs VariableReferences) {
	for _, name := range m.Order {
		st := m.States[name]
		if st == nil {
			continue
		}
		c := &varCollector{seen: map[string]bool{}}
		c.state(st)
		if len(c.names) > 0 {
			slices.Sort(c.names)
			refs[st.Name] = c.names
		}
		for _, b := range st.Branches {
			collectMachine(b, refs)
		}
		if st.ItemProcessor != nil {
			collectMachine(st.ItemProcessor, refs)
		}
	}
}

type varCollector struct {
	names []string
	seen  map[string]bool
}

func (c *varCollector) add(name string) {
	if name != "" && !c.seen[name] {
		c.seen[name] = true
		c.names = append(c.names, name)
	}
}

func (c *varCollector) path(p *jsonpath.Path) {
	if p != nil && p.Root() == jsonpath.RootVariable {
		c.add(p.Variable())
	}
}

func (c *varCollector) pathField(f *asl.PathField) {
	if f != nil {
		c.path(f.Path)
	}
}

func (c *varCollector) expr(e *payload.Expr) {
	if e == nil {
		return
	}
	c.path(e.Path)
	if e.Call != nil {
		for _, p := range e.Call.Paths() {
			c.path(p)
		}
	}
}

func (c *varCollector) template(t *payload.Template) {
	if t != nil {
		t.Exprs(c.expr)
	}
}

func (c *varCollector) intField(f *asl.IntField) {
	if f == nil {
		return
	}
	c.path(f.Path)
	c.jsonata(f.Expr)
}

func (c *varCollector) state(st *asl.State) {
	c.pathField(st.InputPath)
	c.pathField(st.OutputPath)
	c.template(st.Parameters)
	c.template(st.ResultSelector)
	c.template(st.Assign)
	c.raw(st.Arguments, false)
	c.raw(st.Output, false)
	c.raw(st.AssignRaw, false)
	c.intField(st.Timeout)
	c.intField(st.Heartbeat)
	c.raw(st.Credentials, true)
	for _, k := range st.Catch {
		c.template(k.Assign)
		c.raw(k.AssignRaw, false)
		c.raw(k.Output, false)
	}
	for _, r := range st.Choices {
		c.rule(r)
	}
	c.path(st.SecondsPath)
	c.path(st.TimestampPath)
	c.jsonata(st.WaitExpr)
	c.expr(st.ErrorPath)
	c.expr(st.CausePath)
	if st.QueryLanguage == asl.JSONata {
		c.jsonata(st.Error)
		c.jsonata(st.Cause)
	}
	c.path(st.ItemsPath)
	c.raw(st.Items, false)
	c.template(st.ItemSelector)
	c.raw(st.ItemSelectorRaw, false)
	c.intField(st.MaxConcurrency)
	c.intField(st.ToleratedCount)
	c.intField(st.TolerancePercent)
	c.raw(st.ItemReader, true)
	c.raw(st.ItemBatcher, true)
	c.raw(st.ResultWriter, true)
}

func (c *varCollector) rule(r *asl.ChoiceRule) {
	if r == nil {
		return
	}
	c.path(r.Variable)
	c.path(r.OperandPath)
	c.jsonata(r.Condition)
	c.template(r.Assign)
	c.raw(r.AssignRaw, false)
	c.raw(r.Output, false)
	for _, x := range r.And {
		c.rule(x)
	}
	for _, x := range r.Or {
		c.rule(x)
	}
	c.rule(r.Not)
}

// raw walks a value kept as JSON: JSONata strings anywhere and, when
// jsonPath is set, the values of ".$" keys and of "...Path" keys.
func (c *varCollector) raw(v any, jsonPath bool) {
	switch t := v.(type) {
	case string:
		c.jsonata(t)
	case []any:
		for _, e := range t {
			c.raw(e, jsonPath)
		}
	case *jsonvalue.Object:
		for k, e := range t.All() {
			if s, ok := e.(string); ok && jsonPath && (strings.HasSuffix(k, ".$") || strings.HasSuffix(k, "Path")) {
				if x, err := payload.CompileExpr(s); err == nil {
					c.expr(x)
				}
				continue
			}
			c.raw(e, jsonPath)
		}
	}
}

var (
	jsonataVarRE    = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)(\s*\()?`)
	jsonataAssignRE = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)\s*:=`)
)

// jsonata collects "$name" in the JSONata expressions of s (best effort):
// function calls, $states and names bound inside the expression are not
// variables of the workflow.
func (c *varCollector) jsonata(s string) {
	for {
		start := strings.Index(s, "{%")
		if start < 0 {
			return
		}
		end := strings.Index(s[start:], "%}")
		if end < 0 {
			return
		}
		expr := stripJSONataStrings(s[start+2 : start+end])
		s = s[start+end+2:]
		local := map[string]bool{"states": true}
		for _, m := range jsonataAssignRE.FindAllStringSubmatch(expr, -1) {
			local[m[1]] = true
		}
		for _, m := range jsonataVarRE.FindAllStringSubmatch(expr, -1) {
			if m[2] != "" || local[m[1]] {
				continue
			}
			c.add(m[1])
		}
	}
}

// stripJSONataStrings blanks string literals, so that "$x" inside quotes
// is not taken for a variable.
func stripJSONataStrings(expr string) string {
	b := []byte(expr)
	var quote byte
	for i := 0; i < len(b); i++ {
		switch {
		case quote != 0 && b[i] == '\\' && i+1 < len(b):
			b[i], b[i+1] = ' ', ' '
			i++
		case quote != 0 && b[i] == quote:
			quote = 0
		case quote != 0:
			b[i] = ' '
		case b[i] == '"' || b[i] == '\'':
			quote = b[i]
		}
	}
	return string(b)
}
