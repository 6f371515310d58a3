package asl

import (
	"math"
	"slices"

	"stepwise/failure"
	"stepwise/jsonvalue"
)

// Retrier defaults.
const (
	DefaultIntervalSeconds = 1
	DefaultMaxAttempts     = 3
	DefaultBackoffRate     = 2.0
	JitterNone             = "NONE"
	JitterFull             = "FULL"
)

// errorEquals reads an ErrorEquals array: non-empty, strings, with
// States.ALL alone.
func (p *parser) errorEquals(v any, loc string) []string {
	arr, ok := p.array(v, loc)
	if !ok {
		return nil
	}
	if len(arr) == 0 {
		p.add(errEmpty(loc, "ErrorEquals"))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		if s, ok := p.str(e, index(loc, i)); ok {
			out = append(out, s)
		}
	}
	if len(out) > 1 && slices.Contains(out, failure.All) {
		p.add(errStatesAllAlone(loc))
	}
	return out
}

// retry reads a Retry array.
func (p *parser) retry(v any, loc string) []*Retrier {
	arr, ok := p.array(v, loc)
	if !ok {
		return nil
	}
	out := make([]*Retrier, 0, len(arr))
	for i, e := range arr {
		rloc := index(loc, i)
		r := &Retrier{
			IntervalSeconds: DefaultIntervalSeconds,
			MaxAttempts:     DefaultMaxAttempts,
			BackoffRate:     DefaultBackoffRate,
			JitterStrategy:  JitterNone,
		}
		out = append(out, r)
		obj, ok := p.object(e, rloc)
		if !ok {
			continue
		}
		for key, fv := range obj.All() {
			floc := rloc + "/" + key
			switch key {
			case "ErrorEquals":
				r.ErrorEquals = p.errorEquals(fv, floc)
				if i < len(arr)-1 && slices.Contains(r.ErrorEquals, failure.All) {
					p.add(errStatesAllLast(floc, "Retry"))
				}
			case "IntervalSeconds":
				if n, ok := p.integer(fv, floc, 1, maxSeconds); ok {
					r.IntervalSeconds = n
				}
			case "MaxAttempts":
				if n, ok := p.integer(fv, floc, 0, maxSeconds); ok {
					r.MaxAttempts = n
				}
			case "BackoffRate":
				if f, ok := p.number(fv, floc, 1, math.Inf(1)); ok {
					r.BackoffRate = f
				}
			case "MaxDelaySeconds":
				if n, ok := p.integer(fv, floc, 1, maxDelaySeconds); ok {
					r.MaxDelaySeconds = &n
				}
			case "JitterStrategy":
				if s, ok := p.enum(fv, floc, JitterFull, JitterNone); ok {
					r.JitterStrategy = s
				}
			case "Comment":
				r.Comment, _ = p.str(fv, floc)
			default:
				p.add(errNotSupported(rloc, key))
			}
		}
		if !obj.Has("ErrorEquals") {
			p.add(errRequired(rloc, "ErrorEquals"))
		}
	}
	return out
}

// catch reads a Catch array.
func (p *parser) catch(v any, loc string, lang QueryLanguage) []*Catcher {
	arr, ok := p.array(v, loc)
	if !ok {
		return nil
	}
	out := make([]*Catcher, 0, len(arr))
	for i, e := range arr {
		cloc := index(loc, i)
		c := &Catcher{}
		out = append(out, c)
		obj, ok := p.object(e, cloc)
		if !ok {
			continue
		}
		for key, fv := range obj.All() {
			floc := cloc + "/" + key
			switch key {
			case "ErrorEquals":
				c.ErrorEquals = p.errorEquals(fv, floc)
				if i < len(arr)-1 && slices.Contains(c.ErrorEquals, failure.All) {
					p.add(errStatesAllLast(floc, "Catch"))
				}
			case "Next":
				c.Next = p.target(fv, floc)
			case "ResultPath":
				if lang != JSONPath {
					p.add(errWrongLanguage(cloc, lang, key))
					continue
				}
				c.ResultPath = p.pathField(fv, floc, key)
			case "Output":
				if lang != JSONata {
					p.add(errWrongLanguage(cloc, lang, key))
					continue
				}
				c.Output, c.HasOutput = fv, true
			case "Assign":
				c.Assign, c.AssignRaw = p.assign(fv, floc, lang)
			case "Comment":
				c.Comment, _ = p.str(fv, floc)
			default:
				p.add(errNotSupported(cloc, key))
			}
		}
		var missing []string
		for _, f := range []string{"ErrorEquals", "Next"} {
			if !obj.Has(f) {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			p.add(errRequired(cloc, missing...))
		}
	}
	return out
}

// operandKind says what a comparison operator compares.
type operandKind int

const (
	operandString operandKind = iota
	operandNumber
	operandBoolean
	operandTimestamp
	operandIs   // IsNull, IsPresent...: true or false
	operandPath // the ...Path forms
)

// comparisons maps every comparison operator to its operand.
var comparisons = map[string]operandKind{
	"StringEquals": operandString, "StringLessThan": operandString, "StringGreaterThan": operandString,
	"StringLessThanEquals": operandString, "StringGreaterThanEquals": operandString, "StringMatches": operandString,
	"NumericEquals": operandNumber, "NumericLessThan": operandNumber, "NumericGreaterThan": operandNumber,
	"NumericLessThanEquals": operandNumber, "NumericGreaterThanEquals": operandNumber,
	"BooleanEquals":   operandBoolean,
	"TimestampEquals": operandTimestamp, "TimestampLessThan": operandTimestamp, "TimestampGreaterThan": operandTimestamp,
	"TimestampLessThanEquals": operandTimestamp, "TimestampGreaterThanEquals": operandTimestamp,
	"IsNull": operandIs, "IsPresent": operandIs, "IsNumeric": operandIs, "IsString": operandIs,
	"IsBoolean": operandIs, "IsTimestamp": operandIs,
	"StringEqualsPath": operandPath, "StringLessThanPath": operandPath, "StringGreaterThanPath": operandPath,
	"StringLessThanEqualsPath": operandPath, "StringGreaterThanEqualsPath": operandPath,
	"NumericEqualsPath": operandPath, "NumericLessThanPath": operandPath, "NumericGreaterThanPath": operandPath,
	"NumericLessThanEqualsPath": operandPath, "NumericGreaterThanEqualsPath": operandPath,
	"BooleanEqualsPath":   operandPath,
	"TimestampEqualsPath": operandPath, "TimestampLessThanPath": operandPath, "TimestampGreaterThanPath": operandPath,
	"TimestampLessThanEqualsPath": operandPath, "TimestampGreaterThanEqualsPath": operandPath,
}

// choices reads a Choice state's Choices.
func (p *parser) choices(v any, loc string, lang QueryLanguage) []*ChoiceRule {
	arr, ok := p.array(v, loc)
	if !ok {
		return nil
	}
	if len(arr) == 0 {
		p.add(errEmpty(loc, "Choices"))
	}
	out := make([]*ChoiceRule, 0, len(arr))
	for i, e := range arr {
		rloc := index(loc, i)
		if lang == JSONata {
			out = append(out, p.conditionRule(e, rloc))
		} else {
			out = append(out, p.choiceRule(e, rloc, true))
		}
	}
	return out
}

// conditionRule reads a JSONata Choice rule: Condition, Next, Assign,
// Output, Comment.
func (p *parser) conditionRule(v any, loc string) *ChoiceRule {
	r := &ChoiceRule{}
	obj, ok := p.object(v, loc)
	if !ok {
		return r
	}
	for key, fv := range obj.All() {
		floc := loc + "/" + key
		switch key {
		case "Condition":
			switch t := fv.(type) {
			case bool:
				r.Condition = "{% " + jsonvalue.String(t) + " %}"
			case string:
				if !isExpr(t) {
					p.add(errJSONataExpr(floc, key))
					continue
				}
				r.Condition = t
			default:
				p.add(errType(floc, "STRING"))
			}
		case "Next":
			r.Next = p.target(fv, floc)
		case "Assign":
			r.Assign, r.AssignRaw = p.assign(fv, floc, JSONata)
		case "Output":
			r.Output, r.HasOutput = fv, true
		case "Comment":
			r.Comment, _ = p.str(fv, floc)
		case "Variable", "And", "Or", "Not":
			p.add(errWrongLanguage(loc, JSONata, key))
		default:
			if _, ok := comparisons[key]; ok {
				p.add(errWrongLanguage(loc, JSONata, key))
				continue
			}
			p.add(errNotSupported(loc, key))
		}
	}
	var missing []string
	for _, f := range []string{"Condition", "Next"} {
		if !obj.Has(f) {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		p.add(errRequired(loc, missing...))
	}
	return r
}

// choiceRule reads a JSONPath Choice rule. Top-level rules have Next (and
// may have Assign); nested ones, inside And, Or and Not, do not.
func (p *parser) choiceRule(v any, loc string, top bool) *ChoiceRule {
	r := &ChoiceRule{}
	obj, ok := p.object(v, loc)
	if !ok {
		return r
	}
	var kinds []string // And, Or, Not and comparison operators, in order
	for key, fv := range obj.All() {
		floc := loc + "/" + key
		switch key {
		case "Variable":
			r.Variable = p.path(fv, floc, key, false)
		case "And", "Or":
			kinds = append(kinds, key)
			arr, ok := p.array(fv, floc)
			if !ok {
				continue
			}
			if len(arr) == 0 {
				p.add(errEmpty(floc, key))
			}
			rules := make([]*ChoiceRule, 0, len(arr))
			for i, e := range arr {
				rules = append(rules, p.choiceRule(e, index(floc, i), false))
			}
			if key == "And" {
				r.And = rules
			} else {
				r.Or = rules
			}
		case "Not":
			kinds = append(kinds, key)
			r.Not = p.choiceRule(fv, floc, false)
		case "Next":
			if !top {
				p.add(errNotSupported(loc, key))
				continue
			}
			r.Next = p.target(fv, floc)
		case "Assign":
			if !top {
				p.add(errNotSupported(loc, key))
				continue
			}
			r.Assign, r.AssignRaw = p.assign(fv, floc, JSONPath)
		case "Comment":
			r.Comment, _ = p.str(fv, floc)
		case "Condition", "Output":
			p.add(errWrongLanguage(loc, JSONPath, key))
		default:
			kind, ok := comparisons[key]
			if !ok {
				p.add(errNotSupported(loc, key))
				continue
			}
			kinds = append(kinds, key)
			r.Operator = key
			p.operand(r, kind, key, fv, floc)
		}
	}
	switch {
	case len(kinds) == 0:
		p.add(errChoiceOperator(loc))
	case len(kinds) > 1:
		p.add(errChoiceOperators(loc, kinds...))
	case r.Operator != "" && !obj.Has("Variable"):
		p.add(errRequired(loc, "Variable"))
	case r.Operator == "" && obj.Has("Variable"):
		p.add(errChoiceOperator(loc))
	}
	if top && !obj.Has("Next") {
		p.add(errRequired(loc, "Next"))
	}
	return r
}

// operand checks and stores the operand of a comparison.
func (p *parser) operand(r *ChoiceRule, kind operandKind, op string, v any, loc string) {
	switch kind {
	case operandString:
		if s, ok := p.str(v, loc); ok {
			r.Operand = s
		}
	case operandNumber:
		if n, ok := v.(jsonvalue.Number); ok {
			r.Operand = n
		} else {
			p.add(errType(loc, "NUMBER"))
		}
	case operandBoolean:
		if b, ok := p.boolean(v, loc); ok {
			r.Operand = b
		}
	case operandTimestamp:
		s, ok := p.str(v, loc)
		if !ok {
			return
		}
		if _, ok := parseTimestamp(s); !ok {
			p.add(errTimestamp(loc))
			return
		}
		r.Operand = s
	case operandIs:
		if b, ok := v.(bool); ok {
			r.Operand = b
		} else {
			p.add(errIsOperand(loc))
		}
	case operandPath:
		r.OperandPath = p.path(v, loc, op, false)
	}
}
