package asl

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"stepwise/jsonvalue"
)

// Hints say what a definition's author probably meant where a diagnostic
// points: a field or a state type written in the wrong case or misspelled,
// a field written in the wrong place, a transition naming a state that
// does not exist but one nearly does. They never change a diagnostic: the
// diagnostics keep the words AWS uses, and the hints come beside them.

// Hints returns the hints for each of diags, the diagnostics Validate
// returned for definition: hints[i] are those of diags[i], nil when there
// are none.
func Hints(definition []byte, diags []Diagnostic) [][]string {
	out := make([][]string, len(diags))
	root, ok := parseRoot(definition)
	if !ok {
		return out
	}
	h := &hinter{root: root}
	for i, d := range diags {
		out[i] = h.hints(d)
	}
	return out
}

// Corrected applies the fixes the hints of diags are sure of (a field, a
// state type or a transition's target that differs from a valid one only by
// case or a small typo, where nothing else claims the name) and returns the corrected
// definition, re-encoded, or false when there is nothing to correct.
// Validating the corrected definition finds the errors the first ones hid:
// the states inside a misspelled "States" or under an unknown "Type".
func Corrected(definition []byte, diags []Diagnostic) ([]byte, bool) {
	root, ok := parseRoot(definition)
	if !ok {
		return nil, false
	}
	h := &hinter{root: root}
	changed := false
	for _, d := range diags {
		if h.fix(d) {
			changed = true
		}
	}
	if !changed {
		return nil, false
	}
	return jsonvalue.Marshal(root), true
}

func parseRoot(definition []byte) (*jsonvalue.Object, bool) {
	v, err := jsonvalue.Parse(definition)
	if err != nil {
		return nil, false
	}
	root, ok := v.(*jsonvalue.Object)
	return root, ok
}

// place is what kind of object a location names.
type place int

const (
	placeOther place = iota
	placeMachine
	placeBranch
	placeProcessor
	placeStates // a States object: its keys are state names
	placeState
	placeRetrier
	placeCatcher
	placeRule
	placeProcessorConfig
)

// spot is what a location resolves to.
type spot struct {
	value any
	place place
	// parent is the object holding value, and key its name there.
	parent *jsonvalue.Object
	key    string
	// machine is the nearest state machine object at or above the
	// location.
	machine *jsonvalue.Object
}

type hinter struct {
	root *jsonvalue.Object
}

// resolve walks loc (in the form Diagnostic.Location has) from the root.
// State names are not escaped in locations, so a key is matched as the
// longest one the rest of the location starts with.
func (h *hinter) resolve(loc string) (spot, bool) {
	s := spot{value: h.root, place: placeMachine, machine: h.root}
	if loc == "/" || loc == "" {
		return s, true
	}
	rest := loc
	for rest != "" {
		switch rest[0] {
		case '/':
			obj, ok := s.value.(*jsonvalue.Object)
			if !ok {
				return s, false
			}
			key, ok := longestKey(obj, rest[1:])
			if !ok {
				return s, false
			}
			v, _ := obj.Get(key)
			s.parent, s.key = obj, key
			s.value = v
			s.place = child(s.place, key)
			rest = rest[1+len(key):]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return s, false
			}
			i, err := strconv.Atoi(rest[1:end])
			arr, ok := s.value.([]any)
			if err != nil || !ok || i < 0 || i >= len(arr) {
				return s, false
			}
			s.value = arr[i]
			s.place = element(s.place, s.key)
			rest = rest[end+1:]
		default:
			return s, false
		}
		if s.place == placeMachine || s.place == placeBranch || s.place == placeProcessor {
			if obj, ok := s.value.(*jsonvalue.Object); ok {
				s.machine = obj
			}
		}
	}
	return s, true
}

// longestKey finds the longest key of obj that rest starts with, followed
// by the end, "/" or "[".
func longestKey(obj *jsonvalue.Object, rest string) (string, bool) {
	best, found := "", false
	for key := range obj.All() {
		if !strings.HasPrefix(rest, key) {
			continue
		}
		if len(rest) > len(key) && rest[len(key)] != '/' && rest[len(key)] != '[' {
			continue
		}
		if !found || len(key) > len(best) {
			best, found = key, true
		}
	}
	return best, found
}

// child is the place of the field key of an object at place p.
func child(p place, key string) place {
	switch p {
	case placeMachine, placeBranch, placeProcessor:
		if key == "States" {
			return placeStates
		}
	case placeStates:
		return placeState
	case placeState:
		switch key {
		case "ItemProcessor", "Iterator":
			return placeProcessor
		}
	case placeRule:
		if key == "Not" {
			return placeRule
		}
	}
	if key == "ProcessorConfig" && (p == placeState || p == placeProcessor) {
		return placeProcessorConfig
	}
	return placeOther
}

// element is the place of an element of the array field key of an object
// at place p (p is already the array's place, placeOther, so the key
// decides).
func element(p place, key string) place {
	switch key {
	case "Branches":
		return placeBranch
	case "Retry":
		return placeRetrier
	case "Catch":
		return placeCatcher
	case "Choices", "And", "Or":
		return placeRule
	}
	return p
}

var (
	topFields       = []string{"Comment", "StartAt", "States", "TimeoutSeconds", "Version", "QueryLanguage"}
	branchFields    = []string{"Comment", "StartAt", "States"}
	processorFields = []string{"Comment", "StartAt", "States", "ProcessorConfig"}
	retrierFields   = []string{"ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "JitterStrategy", "Comment"}
	catcherFields   = []string{"ErrorEquals", "Next", "ResultPath", "Output", "Assign", "Comment"}
	configFields    = []string{"Mode", "ExecutionType"}
	stateTypes      = []string{"Task", "Wait", "Pass", "Succeed", "Fail", "Choice", "Parallel", "Map"}
)

func ruleFields() []string {
	fs := []string{"Variable", "And", "Or", "Not", "Next", "Assign", "Output", "Comment", "Condition"}
	for op := range comparisons {
		fs = append(fs, op)
	}
	sort.Strings(fs)
	return fs
}

// stateFieldsOf lists the fields a state of type t takes; every state
// field when t is not a type.
func stateFieldsOf(t string) []string {
	bits, ok := typeBits[StateType(t)]
	if !ok {
		bits = setAll
	}
	fs := []string{"Type", "QueryLanguage"}
	for f, spec := range stateFields {
		if spec.types&bits != 0 {
			fs = append(fs, f)
		}
	}
	sort.Strings(fs)
	return fs
}

// fieldsAt lists the fields valid in the object at s, nil when unknown.
func fieldsAt(s spot) []string {
	switch s.place {
	case placeMachine:
		return topFields
	case placeBranch:
		return branchFields
	case placeProcessor:
		return processorFields
	case placeState:
		obj, _ := s.value.(*jsonvalue.Object)
		t := ""
		if obj != nil {
			v, _ := obj.Get("Type")
			t, _ = v.(string)
		}
		return stateFieldsOf(t)
	case placeRetrier:
		return retrierFields
	case placeCatcher:
		return catcherFields
	case placeRule:
		return ruleFields()
	case placeProcessorConfig:
		return configFields
	}
	return nil
}

func (h *hinter) hints(d Diagnostic) []string {
	s, ok := h.resolve(d.Location)
	if !ok {
		return nil
	}
	switch {
	case strings.HasPrefix(d.Message, "Field '") && strings.HasSuffix(d.Message, "' is not supported"):
		field := strings.TrimSuffix(strings.TrimPrefix(d.Message, "Field '"), "' is not supported")
		return h.unsupported(s, field)
	case strings.HasPrefix(d.Message, "These fields are required: ["):
		return required(s, strings.Split(strings.TrimSuffix(strings.TrimPrefix(d.Message, "These fields are required: ["), "]"), ", "))
	case d.Message == errStateType("").Message:
		if t, ok := s.value.(string); ok {
			if m, caseOnly, ok := closest(t, stateTypes); ok {
				return []string{didYouMean(m, caseOnly, "state types")}
			}
		}
	case d.Code == CodeMissingTransitionTarget && strings.HasPrefix(d.Message, "Missing 'Next' target: "):
		return h.target(s, strings.TrimPrefix(d.Message, "Missing 'Next' target: "))
	case strings.HasPrefix(d.Message, enumPrefix):
		if v, ok := s.value.(string); ok {
			if m, caseOnly, ok := closest(v, enumValues(d.Message)); ok {
				return []string{didYouMean(m, caseOnly, "values")}
			}
		}
	case d.Code == CodeMissingTransitionTarget && s.place == placeState && d.Message == errUnreachable("", s.key).Message:
		if so, ok := s.value.(*jsonvalue.Object); !ok || !so.Has("Type") {
			return wrongType(s, "OBJECT")
		}
	case strings.HasPrefix(d.Message, "Expected value of type ["):
		return wrongType(s, strings.TrimSuffix(strings.TrimPrefix(d.Message, "Expected value of type ["), "]"))
	}
	return nil
}

// enumPrefix starts the message of a value outside a fixed set.
var enumPrefix = strings.SplitN(errEnum("").Message, "[", 2)[0] + "["

// enumValues lists the values an enum diagnostic's message names.
func enumValues(msg string) []string {
	return strings.Split(strings.TrimSuffix(strings.TrimPrefix(msg, enumPrefix), "]"), ", ")
}

// unsupported hints at what a field the object at s does not take was
// meant to be, or where it belongs.
func (h *hinter) unsupported(s spot, field string) []string {
	obj, _ := s.value.(*jsonvalue.Object)
	valid := fieldsAt(s)
	if m, caseOnly, ok := closest(field, valid); ok && (obj == nil || !obj.Has(m)) {
		return []string{didYouMean(m, caseOnly, "field names")}
	}
	if s.place == placeMachine || s.place == placeBranch || s.place == placeProcessor {
		if v, ok := obj.Get(field); ok {
			if so, ok := v.(*jsonvalue.Object); ok && so.Has("Type") {
				return []string{"'" + field + "' looks like a state: states belong inside \"States\""}
			}
		}
	}
	if where := belongs(field); where != "" {
		return []string{where + here(s)}
	}
	// A misspelling of a field that belongs elsewhere.
	if m, caseOnly, ok := closest(field, allFields()); ok {
		return []string{didYouMean(m, caseOnly, "field names"), belongs(m) + here(s)}
	}
	return nil
}

// here says what the object at s is, to follow where a field belongs.
func here(s spot) string {
	switch s.place {
	case placeMachine:
		return ", not at the top level of the state machine"
	case placeBranch:
		return ", not at the top level of a branch"
	case placeProcessor:
		return ", not at the top level of an ItemProcessor"
	case placeState:
		if obj, ok := s.value.(*jsonvalue.Object); ok {
			if t, ok := obj.Get("Type"); ok {
				if ts, ok := t.(string); ok && typeBits[StateType(ts)] != 0 {
					return "; '" + s.key + "' is a " + ts + " state"
				}
			}
		}
	}
	return ""
}

// belongs says where field belongs, "" when it is no field of a
// definition.
func belongs(field string) string {
	if spec, ok := stateFields[field]; ok {
		where := "'" + field + "' belongs in " + typeList(spec.types)
		if spec.lang != "" {
			where += " (with QueryLanguage " + string(spec.lang) + ")"
		}
		return where
	}
	switch {
	case field == "StartAt" || field == "States":
		return "'" + field + "' belongs at the top level of a state machine, a branch or an ItemProcessor"
	case field == "Version" || field == "QueryLanguage":
		return "'" + field + "' belongs at the top level of the state machine"
	case field == "ProcessorConfig":
		return "'ProcessorConfig' belongs in a Map state's ItemProcessor"
	case contains(retrierFields, field):
		return "'" + field + "' belongs in a retrier, an element of a state's \"Retry\" array"
	case contains(catcherFields, field):
		return "'" + field + "' belongs in a catcher, an element of a state's \"Catch\" array"
	case contains(configFields, field):
		return "'" + field + "' belongs in the ProcessorConfig of a Map state's ItemProcessor"
	case contains(ruleFields(), field):
		return "'" + field + "' belongs in a Choice rule, an element of a Choice state's \"Choices\" array"
	}
	return ""
}

// allFields lists every field name a definition's objects take.
func allFields() []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{topFields, stateFieldsOf(""), retrierFields, catcherFields, configFields, ruleFields()} {
		for _, f := range list {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	sort.Strings(out)
	return out
}

// typeList words a set of state types: "a Task, Parallel or Map state".
func typeList(set typeSet) string {
	var names []string
	for _, t := range stateTypes {
		if typeBits[StateType(t)]&set != 0 {
			names = append(names, t)
		}
	}
	switch len(names) {
	case len(stateTypes):
		return "a state"
	case 1:
		return "a " + names[0] + " state"
	}
	return "a " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1] + " state"
}

// required hints at a field written for one of the missing ones.
func required(s spot, missing []string) []string {
	obj, ok := s.value.(*jsonvalue.Object)
	if !ok {
		return nil
	}
	var out []string
	for _, m := range missing {
		for key := range obj.All() {
			if key == m || contains(fieldsAt(s), key) {
				continue
			}
			if c, caseOnly, ok := closest(key, []string{m}); ok && c == m {
				hint := "did you mean '" + m + "' for '" + key + "'?"
				if caseOnly {
					hint += " Field names are case-sensitive."
				}
				out = append(out, hint)
				break
			}
		}
	}
	return out
}

// target hints at the state a transition that names no state of its
// machine was meant to name.
func (h *hinter) target(s spot, name string) []string {
	states := statesOf(s.machine)
	if m, caseOnly, ok := closest(name, states); ok {
		return []string{didYouMean(m, caseOnly, "state names")}
	}
	if loc, ok := h.findState(h.root, "", name); ok {
		return []string{"'" + name + "' is a state of " + at(loc) + ": a transition can only name a state of its own \"States\""}
	}
	return nil
}

func statesOf(machine *jsonvalue.Object) []string {
	if machine == nil {
		return nil
	}
	v, _ := machine.Get("States")
	states, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil
	}
	return states.Keys()
}

// findState finds the machine (by location) whose States has name, at or
// under the machine m at loc.
func (h *hinter) findState(m *jsonvalue.Object, loc string, name string) (string, bool) {
	v, _ := m.Get("States")
	states, ok := v.(*jsonvalue.Object)
	if !ok {
		return "", false
	}
	if states.Has(name) {
		return loc, true
	}
	for sname, sv := range states.All() {
		st, ok := sv.(*jsonvalue.Object)
		if !ok {
			continue
		}
		sloc := loc + "/States/" + sname
		for _, key := range []string{"ItemProcessor", "Iterator"} {
			if p, ok := st.Get(key); ok {
				if po, ok := p.(*jsonvalue.Object); ok {
					if l, ok := h.findState(po, sloc+"/"+key, name); ok {
						return l, true
					}
				}
			}
		}
		if b, ok := st.Get("Branches"); ok {
			arr, _ := b.([]any)
			for i, bv := range arr {
				if bo, ok := bv.(*jsonvalue.Object); ok {
					if l, ok := h.findState(bo, index(sloc+"/Branches", i), name); ok {
						return l, true
					}
				}
			}
		}
	}
	return "", false
}

// wrongType hints at a field of the wrong JSON type: a field written
// inside "States", where it reads as a state, a list written as one
// element, a boolean or a number written as a string.
func wrongType(s spot, want string) []string {
	if s.parent == nil {
		return nil
	}
	if want == "OBJECT" && s.place == placeState {
		if where := belongs(s.key); where != "" {
			return []string{"'" + s.key + "' is written inside \"States\", so it reads as a state; " + where}
		}
	}
	if str, ok := s.value.(string); ok {
		switch {
		case want == "BOOLEAN" && (str == "true" || str == "false"):
			return []string{"write " + str + " without quotes: \"" + s.key + "\": " + str}
		case want == "INTEGER" || want == "NUMBER":
			if _, err := strconv.ParseFloat(str, 64); err == nil && jsonvalue.Valid([]byte(str)) {
				return []string{"write the number without quotes: \"" + s.key + "\": " + str}
			}
		}
	}
	if want == "ARRAY" {
		switch s.key {
		case "Retry":
			return []string{`"Retry" takes a list of retriers: "Retry": [{"ErrorEquals": ["States.ALL"], ...}]`}
		case "Catch":
			return []string{`"Catch" takes a list of catchers: "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "..."}]`}
		case "ErrorEquals":
			return []string{`"ErrorEquals" takes a list of error names: "ErrorEquals": ["States.ALL"]`}
		case "Branches":
			return []string{`"Branches" takes a list of state machines: "Branches": [{"StartAt": "...", "States": {...}}]`}
		case "Choices":
			return []string{`"Choices" takes a list of Choice rules: "Choices": [{..., "Next": "..."}]`}
		}
	}
	return nil
}

func didYouMean(m string, caseOnly bool, what string) string {
	hint := "did you mean '" + m + "'?"
	if caseOnly {
		hint += " " + strings.ToUpper(what[:1]) + what[1:] + " are case-sensitive."
	}
	return hint
}

// closest finds the candidate s was probably meant to be: one equal to it
// but for case, else the nearest by edit distance (ignoring case) when
// close enough for a typo. caseOnly says the difference is only case.
func closest(s string, candidates []string) (match string, caseOnly, ok bool) {
	for _, c := range candidates {
		if c != s && strings.EqualFold(c, s) {
			return c, true, true
		}
	}
	ls := strings.ToLower(s)
	best, bestDist := "", -1
	for _, c := range candidates {
		if c == s {
			return "", false, false
		}
		d := distance(ls, strings.ToLower(c))
		if d > maxTypos(s, c) {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 {
		return "", false, false
	}
	return best, false, true
}

// maxTypos is how many edits still make a a typo of b: none for the
// shortest words, one up to five characters, two beyond.
func maxTypos(a, b string) int {
	switch n := max(utf8.RuneCountInString(a), utf8.RuneCountInString(b)); {
	case n <= 3:
		return 0
	case n <= 5:
		return 1
	default:
		return 2
	}
}

// distance is the Damerau-Levenshtein (optimal string alignment) distance
// between a and b, over runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 200 || len(rb) > 200 {
		return 1 << 30
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fix applies the correction the hints of d are sure of (a field renamed,
// a state type or a transition's target set to the one meant); it reports
// whether it changed the definition.
func (h *hinter) fix(d Diagnostic) bool {
	s, ok := h.resolve(d.Location)
	if !ok {
		return false
	}
	obj, _ := s.value.(*jsonvalue.Object)
	switch {
	case strings.HasPrefix(d.Message, "Field '") && strings.HasSuffix(d.Message, "' is not supported") && obj != nil:
		field := strings.TrimSuffix(strings.TrimPrefix(d.Message, "Field '"), "' is not supported")
		if m, _, ok := closest(field, fieldsAt(s)); ok && !obj.Has(m) {
			if v, ok := obj.Get(field); ok {
				rename(obj, field, m, v)
				return true
			}
		}
	case strings.HasPrefix(d.Message, "These fields are required: [") && obj != nil:
		missing := strings.Split(strings.TrimSuffix(strings.TrimPrefix(d.Message, "These fields are required: ["), "]"), ", ")
		changed := false
		for _, m := range missing {
			for _, key := range append([]string(nil), obj.Keys()...) {
				if key == m || contains(fieldsAt(s), key) || obj.Has(m) {
					continue
				}
				if c, _, ok := closest(key, []string{m}); ok && c == m {
					v, _ := obj.Get(key)
					rename(obj, key, m, v)
					changed = true
				}
			}
		}
		return changed
	case d.Message == errStateType("").Message && s.parent != nil:
		if t, ok := s.value.(string); ok {
			if m, _, ok := closest(t, stateTypes); ok {
				s.parent.Set("Type", m)
				return true
			}
		}
	case strings.HasPrefix(d.Message, enumPrefix) && s.parent != nil:
		if v, ok := s.value.(string); ok {
			if m, _, ok := closest(v, enumValues(d.Message)); ok {
				s.parent.Set(s.key, m)
				return true
			}
		}
	case d.Code == CodeMissingTransitionTarget && strings.HasPrefix(d.Message, "Missing 'Next' target: ") && s.parent != nil:
		if t, ok := s.value.(string); ok {
			if m, _, ok := closest(t, statesOf(s.machine)); ok {
				s.parent.Set(s.key, m)
				return true
			}
		}
	}
	return false
}

// rename renames the field from of obj to to, keeping its place.
func rename(obj *jsonvalue.Object, from, to string, v any) {
	keys := append([]string(nil), obj.Keys()...)
	vals := make([]any, len(keys))
	for i, k := range keys {
		vals[i], _ = obj.Get(k)
		obj.Delete(k)
	}
	for i, k := range keys {
		if k == from {
			obj.Set(to, v)
			continue
		}
		obj.Set(k, vals[i])
	}
}
