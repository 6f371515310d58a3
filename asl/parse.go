package asl

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/jsonvalue"
)

// Machine types, for Options.Type.
const (
	TypeStandard = "STANDARD"
	TypeExpress  = "EXPRESS"
)

// Limits Step Functions puts on definitions.
const (
	MaxStateNameLength = 80
	maxSeconds         = 99999999 // TimeoutSeconds, HeartbeatSeconds, Seconds, IntervalSeconds, MaxAttempts
	maxDelaySeconds    = 31622400 // MaxDelaySeconds: one year
)

// Options tune ParseWith and Validate.
type Options struct {
	// Type is the state machine type: TypeStandard (the default) or
	// TypeExpress. EXPRESS machines may not use the ".sync" and
	// ".waitForTaskToken" integration patterns.
	Type string
	// MaxDiagnostics caps the number of diagnostics collected. Zero means
	// DefaultMaxDiagnostics. To learn whether a list was truncated, as
	// ValidateStateMachineDefinition reports, ask for one more than needed.
	MaxDiagnostics int
}

// Parse parses and validates a definition. On any ERROR diagnostic it
// returns a nil machine and all diagnostics.
func Parse(definition []byte) (*StateMachine, []Diagnostic) {
	return ParseWith(definition, Options{})
}

// ParseWith is Parse with options.
func ParseWith(definition []byte, opts Options) (*StateMachine, []Diagnostic) {
	sm, diags := parse(definition, opts)
	if HasErrors(diags) {
		return nil, diags
	}
	return sm, diags
}

// Validate returns every diagnostic for a definition, up to the cap, nil
// when there is none.
func Validate(definition []byte, opts Options) []Diagnostic {
	_, diags := parse(definition, opts)
	return diags
}

// parser builds the model and collects diagnostics in one walk.
type parser struct {
	c *collector
	// lang is the language of the whole machine. States that declare none
	// use it, at any depth: a Map's or Parallel's own QueryLanguage does not
	// reach the states inside it.
	lang QueryLanguage
	// express is set while the states being read run as an EXPRESS
	// workflow.
	express bool
	// names maps every state name seen so far, at any depth, to its
	// location: names are unique in the whole machine.
	names map[string]string
	// dupStates counts, by States object, the extra times a state name is
	// written in it (the JSON parser keeps one of them).
	dupStates map[*jsonvalue.Object]map[string]int
}

func (p *parser) add(d Diagnostic) { p.c.add(d) }

func parse(definition []byte, opts Options) (*StateMachine, []Diagnostic) {
	c := newCollector(opts.MaxDiagnostics)
	if isBlank(definition) {
		c.add(errNotAnObjectDefinition())
		return nil, c.diags
	}
	dups := make(map[*jsonvalue.Object]map[string]int)
	v, err := jsonvalue.ParseWith(definition, jsonvalue.Options{OnDuplicate: func(o *jsonvalue.Object, name string) {
		if dups[o] == nil {
			dups[o] = make(map[string]int)
		}
		dups[o][name]++
	}})
	if err != nil {
		c.add(jsonSyntaxDiagnostic(definition, err))
		return nil, c.diags
	}
	root, ok := v.(*jsonvalue.Object)
	if !ok {
		c.add(errNotAnObjectDefinition())
		return nil, c.diags
	}
	p := &parser{
		c:         c,
		express:   opts.Type == TypeExpress,
		names:     make(map[string]string),
		dupStates: dups,
	}
	sm := p.machine(root, "", machineTop)
	p.compileJSONata(sm, "")
	if len(c.diags) == 0 {
		return sm, nil
	}
	return sm, c.diags
}

func isBlank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}

// at returns loc, or "/" for the root.
func at(loc string) string {
	if loc == "" {
		return "/"
	}
	return loc
}

func index(loc string, i int) string { return loc + "[" + strconv.Itoa(i) + "]" }

type machineKind int

const (
	machineTop       machineKind = iota
	machineBranch                // one of a Parallel state's Branches
	machineProcessor             // a Map state's ItemProcessor or Iterator
)

// machine reads a state machine object at loc ("" for the root).
func (p *parser) machine(obj *jsonvalue.Object, loc string, kind machineKind) *StateMachine {
	sm := &StateMachine{States: make(map[string]*State)}
	if kind == machineTop {
		p.lang = p.topLanguage(obj)
	}
	sm.QueryLanguage = p.lang

	var missing []string
	if !obj.Has("States") {
		missing = append(missing, "States")
	}
	if !obj.Has("StartAt") {
		missing = append(missing, "StartAt")
	}
	if len(missing) > 0 {
		p.add(errRequired(at(loc), missing...))
	}

	var states *jsonvalue.Object
	hasStartAt := false
	for key, v := range obj.All() {
		floc := loc + "/" + key
		switch key {
		case "Comment":
			sm.Comment, _ = p.str(v, floc)
		case "StartAt":
			sm.StartAt, hasStartAt = p.str(v, floc)
		case "States":
			o, ok := v.(*jsonvalue.Object)
			if !ok {
				p.add(errType(floc, "OBJECT"))
				continue
			}
			states = o
		case "TimeoutSeconds", "Version", "QueryLanguage":
			if kind != machineTop {
				p.add(errNotSupported(at(loc), key))
				continue
			}
			switch key {
			case "TimeoutSeconds":
				if n, ok := p.integer(v, floc, 0, maxSeconds); ok {
					sm.TimeoutSeconds = &n
				}
			case "Version":
				sm.Version, _ = p.str(v, floc)
			}
		case "ProcessorConfig":
			if kind != machineProcessor {
				p.add(errNotSupported(at(loc), key))
			}
			// Read by the Map state.
		default:
			p.add(errNotSupported(at(loc), key))
		}
		if p.c.full() {
			return sm
		}
	}

	if states != nil {
		for name, v := range states.All() {
			sloc := loc + "/States/" + name
			if utf8.RuneCountInString(name) > MaxStateNameLength {
				p.add(errStateNameTooLong(sloc, name))
			}
			if _, seen := p.names[name]; seen {
				p.add(errDuplicateState(sloc, name))
			} else {
				p.names[name] = sloc
			}
			for range p.dupStates[states][name] {
				p.add(errDuplicateState(sloc, name))
			}
			st := p.state(name, v, sloc)
			sm.States[name] = st
			sm.Order = append(sm.Order, name)
			if p.c.full() {
				return sm
			}
		}
		p.transitions(sm, loc, kind == machineTop, hasStartAt)
	}
	return sm
}

// topLanguage reads the QueryLanguage of the whole machine. The language is
// JSONPath when the field is absent or exactly "JSONPath"; any other value
// selects JSONata (and is reported).
func (p *parser) topLanguage(obj *jsonvalue.Object) QueryLanguage {
	v, ok := obj.Get("QueryLanguage")
	if !ok {
		return JSONPath
	}
	p.checkLanguageValue(v, "/QueryLanguage")
	if v == string(JSONPath) {
		return JSONPath
	}
	return JSONata
}

func (p *parser) checkLanguageValue(v any, loc string) {
	s, ok := v.(string)
	switch {
	case !ok:
		p.add(errType(loc, "STRING"))
	case s != string(JSONPath) && s != string(JSONata):
		p.add(errEnum(loc, string(JSONPath), string(JSONata)))
	}
}

// Typed readers. Each reports a type error at loc and returns ok=false.

func (p *parser) str(v any, loc string) (string, bool) {
	s, ok := v.(string)
	if !ok {
		p.add(errType(loc, "STRING"))
	}
	return s, ok
}

// target reads a transition target (Next, Default). The empty name can
// never be found, and the model keeps "" for "no transition", so it is
// reported here rather than with the other missing targets.
func (p *parser) target(v any, loc string) string {
	s, ok := p.str(v, loc)
	if ok && s == "" {
		p.add(errMissingTarget(loc, s))
	}
	return s
}

func (p *parser) boolean(v any, loc string) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		p.add(errType(loc, "BOOLEAN"))
	}
	return b, ok
}

func (p *parser) object(v any, loc string) (*jsonvalue.Object, bool) {
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		p.add(errType(loc, "OBJECT"))
	}
	return o, ok
}

func (p *parser) array(v any, loc string) ([]any, bool) {
	a, ok := v.([]any)
	if !ok {
		p.add(errType(loc, "ARRAY"))
	}
	return a, ok
}

// integer reads an integer in [min, max].
func (p *parser) integer(v any, loc string, min, max int64) (int64, bool) {
	n, ok := v.(jsonvalue.Number)
	if !ok || !n.IsInteger() {
		p.add(errType(loc, "INTEGER"))
		return 0, false
	}
	i, ok := n.Int64()
	switch {
	case !ok && strings.HasPrefix(string(n), "-"):
		p.add(errMinimum(loc, strconv.FormatInt(min, 10)))
		return 0, false
	case !ok:
		p.add(errMaximum(loc, strconv.FormatInt(max, 10)))
		return 0, false
	case i < min:
		p.add(errMinimum(loc, strconv.FormatInt(min, 10)))
		return 0, false
	case i > max:
		p.add(errMaximum(loc, strconv.FormatInt(max, 10)))
		return 0, false
	}
	return i, true
}

// number reads a number in [min, max].
func (p *parser) number(v any, loc string, min, max float64) (float64, bool) {
	n, ok := v.(jsonvalue.Number)
	if !ok {
		p.add(errType(loc, "NUMBER"))
		return 0, false
	}
	f := n.Float64()
	switch {
	case f < min:
		p.add(errMinimum(loc, formatFloat(min)))
		return 0, false
	case f > max:
		p.add(errMaximum(loc, formatFloat(max)))
		return 0, false
	}
	return f, true
}

func formatFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// isExpr reports whether s is a JSONata expression, "{% ... %}".
func isExpr(s string) bool {
	return len(s) >= 4 && strings.HasPrefix(s, "{%") && strings.HasSuffix(s, "%}")
}

// intField reads a count given as a literal or, in JSONata, as an
// expression.
func (p *parser) intField(v any, loc, field string, lang QueryLanguage, min, max int64) *IntField {
	if s, ok := v.(string); ok && lang == JSONata {
		if !isExpr(s) {
			p.add(errJSONataExpr(loc, field))
			return nil
		}
		return &IntField{Expr: s}
	}
	n, ok := p.integer(v, loc, min, max)
	if !ok {
		return nil
	}
	f := float64(n)
	return &IntField{Value: &n, Number: &f}
}

// pathIntField reads the "...Path" form of a count.
func (p *parser) pathIntField(v any, loc, field string) *IntField {
	if path := p.path(v, loc, field, true); path != nil {
		return &IntField{Path: path}
	}
	return nil
}

// path compiles a path field. reference asks for a reference path (one
// that selects a single node).
func (p *parser) path(v any, loc, field string, reference bool) *jsonpath.Path {
	s, ok := p.str(v, loc)
	if !ok {
		return nil
	}
	path, err := jsonpath.Compile(s)
	if err != nil || (reference && !path.IsReference()) {
		p.add(errPath(loc, field))
		return nil
	}
	return path
}

// pathField reads InputPath, OutputPath or ResultPath, which may be null.
func (p *parser) pathField(v any, loc, field string) *PathField {
	if v == nil {
		return &PathField{Null: true}
	}
	reference := field == "ResultPath"
	path := p.path(v, loc, field, reference)
	if path == nil {
		return nil
	}
	if reference && path.Root() != jsonpath.RootInput {
		p.add(errPath(loc, field))
		return nil
	}
	return &PathField{Path: path}
}

// template compiles a JSONPath payload template (Parameters, ResultSelector,
// ItemSelector, Assign). Problems with ".$" keys are reported at loc, the
// template's own location, as AWS does.
func (p *parser) template(v any, loc, field string) *payload.Template {
	obj, ok := p.object(v, loc)
	if !ok {
		return nil
	}
	before := len(p.c.diags)
	p.checkTemplate(obj, loc)
	if len(p.c.diags) > before {
		return nil
	}
	t, errs := payload.Compile(obj)
	for _, err := range errs {
		key := field
		if ce, ok := err.(*payload.CompileError); ok {
			key = ce.Pointer[strings.LastIndexByte(ce.Pointer, '/')+1:]
			key = strings.NewReplacer("~1", "/", "~0", "~").Replace(key)
		}
		p.add(errPayloadExpr(loc, key))
	}
	return t
}

// checkTemplate reports ".$" keys whose value is not a path or an
// intrinsic function call, and keys given both with and without ".$".
func (p *parser) checkTemplate(v any, loc string) {
	switch t := v.(type) {
	case *jsonvalue.Object:
		for k, e := range t.All() {
			name, dollar := strings.CutSuffix(k, ".$")
			if !dollar {
				p.checkTemplate(e, loc)
				continue
			}
			if t.Has(name) {
				p.add(errDollarDuplicate(loc, name))
			}
			s, ok := e.(string)
			if !ok {
				p.add(errPayloadExpr(loc, k))
				continue
			}
			if _, err := payload.CompileExpr(s); err != nil {
				p.add(errPayloadExpr(loc, k))
			}
		}
	case []any:
		for _, e := range t {
			p.checkTemplate(e, loc)
		}
	}
}

// checkResource validates a Task's Resource ARN.
func (p *parser) checkResource(resource, loc string) {
	if !strings.HasPrefix(resource, "arn:") || strings.Count(resource, ":") < 5 {
		p.add(errResource(loc, resource))
		return
	}
	if rest, ok := integrationResource(resource); ok && !knownIntegration(rest) {
		p.add(errResource(loc, resource))
		return
	}
	if !p.express {
		return
	}
	switch {
	case isActivityArn(resource):
		p.add(errExpressActivity(loc))
	case strings.HasSuffix(resource, ".sync") || strings.HasSuffix(resource, ".sync:2"):
		p.add(errExpress(loc, ".sync"))
	case strings.HasSuffix(resource, ".waitForTaskToken"):
		p.add(errExpress(loc, ".waitForTaskToken"))
	}
}
