package interp

import (
	"errors"
	"strings"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/asl/jsonpath"
	"stepwise/jsonvalue"
)

// evalRule evaluates a Choice rule (or a nested boolean expression) in env.
// Comparisons of values of the wrong type are false, as AWS has them.
func evalRule(r *asl.ChoiceRule, env *jsonpath.Env) (bool, error) {
	switch {
	case r.And != nil:
		for _, c := range r.And {
			ok, err := evalRule(c, env)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case r.Or != nil:
		for _, c := range r.Or {
			ok, err := evalRule(c, env)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case r.Not != nil:
		ok, err := evalRule(r.Not, env)
		return !ok, err
	}
	if r.Variable == nil {
		return false, nil
	}
	v, err := r.Variable.Eval(env)
	found := err == nil
	if err != nil && !errors.Is(err, jsonpath.ErrNotFound) {
		return false, err
	}
	op := r.Operator
	if op == "IsPresent" {
		want, _ := r.Operand.(bool)
		return found == want, nil
	}
	if !found {
		return false, dataflow.InvalidPath(r.Variable, err)
	}
	operand := r.Operand
	if base, isPath := strings.CutSuffix(op, "Path"); isPath {
		op = base
		ov, err := r.OperandPath.Eval(env)
		if err != nil {
			return false, dataflow.InvalidPath(r.OperandPath, err)
		}
		operand = ov
	}
	switch op {
	case "IsNull":
		want, _ := operand.(bool)
		return (v == nil) == want, nil
	case "IsNumeric":
		want, _ := operand.(bool)
		_, is := v.(jsonvalue.Number)
		return is == want, nil
	case "IsString":
		want, _ := operand.(bool)
		_, is := v.(string)
		return is == want, nil
	case "IsBoolean":
		want, _ := operand.(bool)
		_, is := v.(bool)
		return is == want, nil
	case "IsTimestamp":
		want, _ := operand.(bool)
		s, is := v.(string)
		if is {
			_, is = ParseTimestamp(s)
		}
		return is == want, nil
	case "BooleanEquals":
		a, ok1 := v.(bool)
		b, ok2 := operand.(bool)
		return ok1 && ok2 && a == b, nil
	case "StringMatches":
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		return ok1 && ok2 && wildcardMatch(b, a), nil
	}
	if cmp, ok := strings.CutPrefix(op, "String"); ok {
		a, ok1 := v.(string)
		b, ok2 := operand.(string)
		if !ok1 || !ok2 {
			return false, nil
		}
		return compareResult(cmp, strings.Compare(a, b)), nil
	}
	if cmp, ok := strings.CutPrefix(op, "Numeric"); ok {
		a, ok1 := v.(jsonvalue.Number)
		b, ok2 := operand.(jsonvalue.Number)
		if !ok1 || !ok2 {
			return false, nil
		}
		return compareResult(cmp, jsonvalue.CompareNumbers(a, b)), nil
	}
	if cmp, ok := strings.CutPrefix(op, "Timestamp"); ok {
		as, ok1 := v.(string)
		bs, ok2 := operand.(string)
		if !ok1 || !ok2 {
			return false, nil
		}
		a, ok1 := ParseTimestamp(as)
		b, ok2 := ParseTimestamp(bs)
		if !ok1 || !ok2 {
			return false, nil
		}
		return compareResult(cmp, a.Compare(b)), nil
	}
	return false, nil
}

func compareResult(cmp string, c int) bool {
	switch cmp {
	case "Equals":
		return c == 0
	case "LessThan":
		return c < 0
	case "GreaterThan":
		return c > 0
	case "LessThanEquals":
		return c <= 0
	case "GreaterThanEquals":
		return c >= 0
	}
	return false
}

// wildcardMatch matches s against a StringMatches pattern: "*" matches any
// run of characters, "\*" a literal star and "\\" a backslash.
func wildcardMatch(pattern, s string) bool {
	type tok struct {
		star bool
		lit  string
	}
	var toks []tok
	var lit strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern):
			i++
			lit.WriteByte(pattern[i])
		case c == '*':
			toks = append(toks, tok{lit: lit.String()}, tok{star: true})
			lit.Reset()
		default:
			lit.WriteByte(c)
		}
	}
	toks = append(toks, tok{lit: lit.String()})
	// Greedy match with backtracking on the last star.
	pos := 0
	starAt := -1
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.star {
			starAt = i
			continue
		}
		if starAt < 0 {
			if !strings.HasPrefix(s[pos:], t.lit) {
				return false
			}
			pos += len(t.lit)
			continue
		}
		if i == len(toks)-1 {
			return strings.HasSuffix(s[pos:], t.lit)
		}
		j := strings.Index(s[pos:], t.lit)
		if j < 0 {
			return false
		}
		pos += j + len(t.lit)
	}
	return pos == len(s) || starAt == len(toks)-1
}
