// Package warnrule holds warning thresholds: the rules that say a Task
// that succeeded "ended with warning", as operators of job nets judge a
// job's return code (0 normal, 1-8 warning, 9 and above abnormal).
//
// A rule lives in a state machine's tags, one tag a state,
//
//	stepwise:warning/<state name> = rc:1-8
//	stepwise:warning/<state name> = rc:$.Payload.code:1-8,20
//	stepwise:warning/<state name> = jsonata:<expression>
//
// and is judged on the Task's result (its TaskSucceeded output) outside
// the interpreter: a warning changes neither the run nor its history.
// An execution keeps the rules its state machine had when it started;
// they are stored with its failure policies (Embed, FromPolicies).
package warnrule

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"stepwise/asl/budget"
	"stepwise/asl/jsonata"
	"stepwise/asl/jsonpath"
	"stepwise/jsonvalue"
)

// TagPrefix is the prefix of the tags that set warning rules.
const TagPrefix = "stepwise:warning/"

// MaxRuleLen bounds a rule's text (a tag value is at most 256
// characters on AWS).
const MaxRuleLen = 256

// DefaultPaths are where an rc rule without a path reads the return
// code, the first that is there: the result's rc field, then that of
// a lambda:invoke result's Payload.
var DefaultPaths = []string{"$.rc", "$.Payload.rc"}

var defaultPaths = func() []*jsonpath.Path {
	ps := make([]*jsonpath.Path, len(DefaultPaths))
	for i, p := range DefaultPaths {
		ps[i] = jsonpath.MustCompile(p)
	}
	return ps
}()

// Range is a range of return codes, both ends included.
type Range struct{ From, To int64 }

// Rule is one state's warning rule.
type Rule struct {
	text   string
	path   *jsonpath.Path // nil: DefaultPaths
	ranges Codes          // an rc rule
	expr   *jsonata.Expression
}

// String is the rule as written.
func (r *Rule) String() string { return r.text }

// Parse reads a rule, or says what is wrong with it.
func Parse(text string) (*Rule, error) {
	if len(text) > MaxRuleLen {
		return nil, fmt.Errorf("the rule is %d characters long: at most %d", len(text), MaxRuleLen)
	}
	kind, rest, ok := strings.Cut(text, ":")
	switch {
	case ok && kind == "rc":
		return parseRC(text, rest)
	case ok && kind == "jsonata":
		src := strings.TrimSpace(rest)
		if src == "" {
			return nil, errors.New("the jsonata rule has no expression: write jsonata:<expression>")
		}
		e, err := jsonata.Compile(src)
		if err != nil {
			return nil, fmt.Errorf("the jsonata rule's expression: %w", err)
		}
		return &Rule{text: text, expr: e}, nil
	}
	return nil, fmt.Errorf("the rule %q is neither rc:<codes> (rc:1-8), rc:<path>:<codes> (rc:$.Payload.code:1-8) nor jsonata:<expression>", text)
}

func parseRC(text, rest string) (*Rule, error) {
	r := &Rule{text: text}
	codes := rest
	if strings.HasPrefix(rest, "$") {
		i := strings.LastIndexByte(rest, ':')
		if i < 0 {
			return nil, fmt.Errorf("the rule %q names a path but no codes: write rc:<path>:<codes>, such as rc:$.Payload.code:1-8", text)
		}
		p, err := jsonpath.Compile(rest[:i])
		if err != nil {
			return nil, fmt.Errorf("the rule's path %q: %w", rest[:i], err)
		}
		if !p.IsDefinite() || p.Root() != jsonpath.RootInput {
			return nil, fmt.Errorf("the rule's path %q must name one value of the result ($.field.field)", rest[:i])
		}
		r.path, codes = p, rest[i+1:]
	}
	if strings.TrimSpace(codes) == "" {
		return nil, fmt.Errorf("the rule %q has no codes: write them as 1-8 or 1-8,20", text)
	}
	cs, err := ParseCodes(codes)
	if err != nil {
		return nil, fmt.Errorf("the rule %q: %w", text, err)
	}
	r.ranges = cs
	return r, nil
}

func parseCode(s string) (int64, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || n < 0 || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%q is not a return code (a whole number from 0)", s)
	}
	return n, nil
}

// Judgment is what a rule says of a Task's result.
type Judgment struct {
	// Warning says the Task ended with warning.
	Warning bool
	// RC is the return code the result carries (read where the rule
	// reads it; for a jsonata rule, at DefaultPaths), when HasRC.
	RC    int64
	HasRC bool
}

// evalLimits bound a jsonata rule's evaluation.
var evalLimits = budget.Limits{Steps: 100_000, Bytes: 1 << 20, Time: -1}

// Judge judges a Task's result (a parsed JSON value). A result that has
// no return code where the rule reads it, or whose expression is not
// true or fails, is no warning.
func (r *Rule) Judge(result any) Judgment {
	var j Judgment
	if r.path != nil {
		j.RC, j.HasRC = rcAt(result, r.path)
	} else {
		for _, p := range defaultPaths {
			if j.RC, j.HasRC = rcAt(result, p); j.HasRC {
				break
			}
		}
	}
	if r.expr != nil {
		v, defined, err := r.expr.EvalWith(result, true, &jsonata.Options{Budget: budget.New(evalLimits, nil, nil)})
		j.Warning = err == nil && defined && v == true
		return j
	}
	j.Warning = j.HasRC && r.ranges.Contain(j.RC)
	return j
}

func rcAt(result any, p *jsonpath.Path) (int64, bool) {
	v, err := p.Apply(result)
	if err != nil {
		return 0, false
	}
	n, ok := v.(jsonvalue.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// Rules are the warning rules of an execution's states, by state name.
type Rules map[string]*Rule

// FromTags reads the rules a state machine's tags set, or says what is
// wrong with a warning tag.
func FromTags(tags map[string]string) (Rules, error) {
	var rs Rules
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		state, ok := strings.CutPrefix(k, TagPrefix)
		if !ok {
			continue
		}
		if state == "" {
			return nil, fmt.Errorf("the tag %q names no state: write %s<state name>", k, TagPrefix)
		}
		r, err := Parse(tags[k])
		if err != nil {
			return nil, fmt.Errorf("the tag %q: %w", k, err)
		}
		if rs == nil {
			rs = Rules{}
		}
		rs[state] = r
	}
	return rs, nil
}

// embedKey is the key the rules are stored under in an execution's
// policies text: no state is named "" (a name has 1 to 80 characters),
// and the policies' reader takes only arrays.
const embedKey = ""

// Embed adds rs to an execution's policies text (a JSON object of
// arrays by state name, "" for none) under a key no state has.
func Embed(policies string, rs Rules) (string, error) {
	if len(rs) == 0 {
		return policies, nil
	}
	o := jsonvalue.NewObject(1)
	if policies != "" {
		v, err := jsonvalue.ParseString(policies)
		if err != nil {
			return "", fmt.Errorf("policies: %w", err)
		}
		if o, _ = v.(*jsonvalue.Object); o == nil {
			return "", errors.New("policies: not an object")
		}
	}
	w := jsonvalue.NewObject(len(rs))
	names := make([]string, 0, len(rs))
	for n := range rs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w.Set(n, rs[n].text)
	}
	o.Set(embedKey, w)
	return jsonvalue.String(o), nil
}

// FromPolicies reads the rules Embed stored in an execution's policies
// text: none when it has none.
func FromPolicies(policies string) (Rules, error) {
	if policies == "" || !strings.Contains(policies, `"":`) {
		return nil, nil
	}
	v, err := jsonvalue.ParseString(policies)
	if err != nil {
		return nil, fmt.Errorf("policies: %w", err)
	}
	o, _ := v.(*jsonvalue.Object)
	if o == nil {
		return nil, errors.New("policies: not an object")
	}
	raw, ok := o.Get(embedKey)
	if !ok {
		return nil, nil
	}
	w, _ := raw.(*jsonvalue.Object)
	if w == nil {
		return nil, errors.New("policies: the warning rules are not an object")
	}
	rs := Rules{}
	for n, t := range w.All() {
		s, _ := t.(string)
		r, err := Parse(s)
		if err != nil {
			return nil, fmt.Errorf("policies: the warning rule of %q: %w", n, err)
		}
		rs[n] = r
	}
	return rs, nil
}

// Codes are return codes, as ranges.
type Codes []Range

// ParseCodes reads return codes written as an rc rule writes them:
// "1-8", "3", "1-8,20".
func ParseCodes(s string) (Codes, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no codes: write them as 1-8 or 1-8,20")
	}
	var cs Codes
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		from, err := parseCode(lo)
		if err != nil {
			return nil, err
		}
		to := from
		if isRange {
			if to, err = parseCode(hi); err != nil {
				return nil, err
			}
			if to < from {
				return nil, fmt.Errorf("the range %s ends before it starts", part)
			}
		}
		cs = append(cs, Range{from, to})
	}
	return cs, nil
}

// Contain says whether n is one of the codes.
func (cs Codes) Contain(n int64) bool {
	for _, r := range cs {
		if n >= r.From && n <= r.To {
			return true
		}
	}
	return false
}
