// Package conformance reads the recorded AWS conformance cases (kept in
// ../shared/conformance beside the repository, never copied into it) and
// compares results with them, honouring the placeholders the recordings use
// for run-specific values.
package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"

	"stepwise/jsonvalue"
)

// EnvDir names the environment variable that overrides where the corpus is.
const EnvDir = "STEPWISE_CONFORMANCE_DIR"

// Dir returns the corpus directory (the one holding cases/), looking at
// $STEPWISE_CONFORMANCE_DIR, then ../shared/conformance from the module
// root. ok is false when there is none.
func Dir() (string, bool) {
	if d := os.Getenv(EnvDir); d != "" {
		_, err := os.Stat(filepath.Join(d, "cases"))
		return d, err == nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			c := filepath.Join(filepath.Dir(d), "shared", "conformance")
			_, err := os.Stat(filepath.Join(c, "cases"))
			return c, err == nil
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// SharedDir returns a folder beside the corpus in the shared folder
// (../shared/NAME from the module root, or beside $STEPWISE_CONFORMANCE_DIR):
// the JSONata test suite, the corpora's runners. ok is false when there is
// none.
func SharedDir(name string) (string, bool) {
	dir, ok := Dir()
	if !ok {
		return "", false
	}
	d := filepath.Join(filepath.Dir(dir), name)
	_, err := os.Stat(d)
	return d, err == nil
}

// Case is one recorded case.
type Case struct {
	File             string          `json:"-"`
	Name             string          `json:"name"`
	Kind             string          `json:"kind"`
	StateMachineType string          `json:"state_machine_type"`
	Definition       json.RawMessage `json:"definition"`
	DefinitionString *string         `json:"definition_string"`
	Features         []string        `json:"features"`
	Input            json.RawMessage `json:"input"`
	InputString      *string         `json:"input_string"`
	// Operation is the API operation of api_error and
	// describe_state_machine cases; Request holds its parameters as the
	// case gives them.
	Operation    string          `json:"operation"`
	Request      json.RawMessage `json:"request"`
	RecordedDate string          `json:"recorded_date"`
	Expected     struct {
		Status string          `json:"status"`
		Output json.RawMessage `json:"output"`
		// Error is the error name of an execution, or the error code of
		// an api_error case.
		Error  *string         `json:"error"`
		Cause  json.RawMessage `json:"cause"`
		Events []string        `json:"events"`
		// Message is the error message of an api_error case.
		Message *string `json:"message"`
		// Response is the recorded response of describe_state_machine,
		// validate_definition and test_state cases.
		Response json.RawMessage `json:"response"`
	} `json:"expected"`
	History              []json.RawMessage         `json:"history"`
	Placeholders         struct{ Tokens []string } `json:"placeholders"`
	UnverifiedPaths      []string                  `json:"unverified_paths"`
	ParallelEventsSorted bool                      `json:"parallel_events_sorted"`
	DistributedMapRun    bool                      `json:"distributed_map_run"`
	CauseIsJSON          bool                      `json:"cause_is_json"`
}

// HasFeature reports whether the case is tagged with feature f.
func (c *Case) HasFeature(f string) bool { return slices.Contains(c.Features, f) }

// DefinitionText is the definition to send.
func (c *Case) DefinitionText() string {
	if c.DefinitionString != nil {
		return *c.DefinitionString
	}
	return string(c.Definition)
}

// InputText is the execution input to send: input_string when the case
// gives one, else the input written as the recording's client wrote it
// (Python's json.dumps: ", " and ": " separators, non-ASCII escaped).
func (c *Case) InputText() string {
	if c.InputString != nil {
		return *c.InputString
	}
	if len(c.Input) == 0 || string(c.Input) == "null" {
		return "{}"
	}
	v, err := jsonvalue.Parse(c.Input)
	if err != nil {
		return string(c.Input)
	}
	return string(pythonDumps(nil, v))
}

func pythonDumps(dst []byte, v any) []byte {
	switch t := v.(type) {
	case []any:
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = pythonDumps(dst, e)
		}
		return append(dst, ']')
	case *jsonvalue.Object:
		dst = append(dst, '{')
		for i, k := range t.Keys() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = pythonString(dst, k)
			dst = append(dst, ": "...)
			e, _ := t.Get(k)
			dst = pythonDumps(dst, e)
		}
		return append(dst, '}')
	case string:
		return pythonString(dst, t)
	default:
		return jsonvalue.Append(dst, v)
	}
}

func pythonString(dst []byte, s string) []byte {
	q := jsonvalue.AppendString(nil, s)
	for _, r := range string(q) {
		if r < 0x80 {
			dst = append(dst, byte(r))
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			dst = fmt.Appendf(dst, "\\u%04x", u)
		}
	}
	return dst
}

// Load reads every case of the given kind ("" for all) from dir/cases, in
// file name order.
func Load(dir, kind string) ([]*Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "cases", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*Case
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c := &Case{File: filepath.Base(f)}
		if err := json.Unmarshal(data, c); err != nil {
			return nil, fmt.Errorf("parse %s: %w", f, err)
		}
		if kind == "" || c.Kind == kind {
			out = append(out, c)
		}
	}
	return out, nil
}

// commonTokens are the placeholders any recording may hold (the corpus
// README's table).
var commonTokens = []string{
	"<ArnPart_0idx>", "<ExecArnPart_0idx>", "<SyncExecArn_Part1_0idx>", "<SyncExecArn_Part2_0idx>",
	"<MapRunArnPart0_0idx>", "<MapRunArnPart1_0idx>", "<region>", "<partition>", "111111111111",
	"snf_role_arn", "sfn_role_arn", "date", "datetime", "timestamp", "entered-time", "start-time",
}

var tokenRE = regexp.MustCompile(`<[A-Za-z_\-]+:\d+>`)

// Matcher compares actual values with a case's expected values.
type Matcher struct {
	tokens     []string
	unverified map[string]bool // member names whose values are not checked
}

// NewMatcher returns the matcher for case c.
func (c *Case) NewMatcher() *Matcher {
	m := &Matcher{tokens: append(slices.Clone(commonTokens), c.Placeholders.Tokens...), unverified: map[string]bool{}}
	for _, p := range c.UnverifiedPaths {
		if name, ok := strings.CutPrefix(p, "$.."); ok {
			m.unverified[name] = true
		}
	}
	// Longer tokens first, so "datetime" wins over "date".
	sort.Slice(m.tokens, func(i, j int) bool { return len(m.tokens[i]) > len(m.tokens[j]) })
	return m
}

func (m *Matcher) isToken(s string) bool {
	return slices.Contains(m.tokens, s) || tokenRE.MatchString(s) && tokenRE.FindString(s) == s
}

// MatchString reports whether actual matches expected, where each
// placeholder in expected stands for any text.
func (m *Matcher) MatchString(expected, actual string) bool {
	if expected == actual || m.isToken(expected) {
		return true
	}
	pattern := regexp.QuoteMeta(expected)
	hasToken := false
	for _, t := range m.tokens {
		q := regexp.QuoteMeta(t)
		if strings.Contains(pattern, q) {
			pattern = strings.ReplaceAll(pattern, q, "\x00")
			hasToken = true
		}
	}
	if tokenRE.MatchString(expected) {
		pattern = tokenRE.ReplaceAllString(pattern, "\x00")
		hasToken = true
	}
	if !hasToken {
		return false
	}
	pattern = "^(?s)" + strings.ReplaceAll(pattern, "\x00", ".*?") + "$"
	re, err := regexp.Compile(pattern)
	return err == nil && re.MatchString(actual)
}

// Match compares JSON values: objects by members, numbers by value,
// strings with placeholders. It returns a description of the first
// difference, or "" when they match.
func (m *Matcher) Match(expected, actual any) string { return m.match("$", expected, actual) }

func (m *Matcher) match(at string, expected, actual any) string {
	if s, ok := expected.(string); ok && m.isToken(s) {
		return ""
	}
	switch e := expected.(type) {
	case string:
		a, ok := actual.(string)
		if !ok || !m.MatchString(e, a) && !sameJSONText(m, e, a) {
			return fmt.Sprintf("%s: expected %s, got %s", at, jsonvalue.String(expected), jsonvalue.String(actual))
		}
		return ""
	case *jsonvalue.Object:
		a, ok := actual.(*jsonvalue.Object)
		if !ok {
			return fmt.Sprintf("%s: expected an object, got %s", at, jsonvalue.String(actual))
		}
		for k, ev := range e.All() {
			if m.unverified[k] {
				continue
			}
			av, ok := a.Get(k)
			if !ok {
				return fmt.Sprintf("%s: missing member %q", at, k)
			}
			if d := m.match(at+"."+k, ev, av); d != "" {
				return d
			}
		}
		for _, k := range a.Keys() {
			if !e.Has(k) && !m.unverified[k] {
				return fmt.Sprintf("%s: unexpected member %q", at, k)
			}
		}
		return ""
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(e) {
			return fmt.Sprintf("%s: expected %s, got %s", at, jsonvalue.String(expected), jsonvalue.String(actual))
		}
		for i := range e {
			if d := m.match(fmt.Sprintf("%s[%d]", at, i), e[i], a[i]); d != "" {
				return d
			}
		}
		return ""
	default:
		if !jsonvalue.Equal(expected, actual) {
			return fmt.Sprintf("%s: expected %s, got %s", at, jsonvalue.String(expected), jsonvalue.String(actual))
		}
		return ""
	}
}

// sameJSONText reports whether two strings hold the same JSON array or
// object text, written with different spacing: the recordings keep JSON
// text as their client re-serialised it (", " separators).
func sameJSONText(m *Matcher, e, a string) bool {
	if !strings.HasPrefix(e, "[") && !strings.HasPrefix(e, "{") {
		return false
	}
	ev, err1 := jsonvalue.ParseString(e)
	av, err2 := jsonvalue.ParseString(a)
	return err1 == nil && err2 == nil && m.Match(ev, av) == ""
}

// Result is what an execution ended with.
type Result struct {
	Status string
	Output string  // JSON text (SUCCEEDED)
	Error  *string // nil when absent
	Cause  *string // nil when absent
	Events []string
}

// CheckExecution compares an execution's result with the case's expected
// status, output, error, cause and event types. It returns "" when they
// match.
func (c *Case) CheckExecution(r *Result) string {
	m := c.NewMatcher()
	e := &c.Expected
	if e.Status != r.Status {
		return fmt.Sprintf("status: expected %s, got %s (error %s, cause %s)", e.Status, r.Status, deref(r.Error), deref(r.Cause))
	}
	if e.Status == "SUCCEEDED" {
		want, err := jsonvalue.Parse(e.Output)
		if err != nil {
			return "expected output: " + err.Error()
		}
		got, err := jsonvalue.ParseString(r.Output)
		if err != nil {
			return "output: " + err.Error()
		}
		if d := m.Match(want, got); d != "" {
			return "output " + d
		}
	}
	if (e.Error == nil) != (r.Error == nil) || e.Error != nil && !m.MatchString(*e.Error, *r.Error) {
		return fmt.Sprintf("error: expected %s, got %s", deref(e.Error), deref(r.Error))
	}
	if d := c.checkCause(m, r.Cause); d != "" {
		return d
	}
	if e.Events != nil {
		ok := slices.Equal(e.Events, r.Events)
		if c.ParallelEventsSorted {
			ok = sortedParallelMatch(e.Events, r.Events)
		}
		if !ok {
			return fmt.Sprintf("events:\n  expected %v\n  got      %v", e.Events, r.Events)
		}
	}
	return ""
}

// sortedParallelMatch compares the event types of a case whose Parallel
// branch events were re-sorted by the recording tool, which also dropped
// ParallelStateSucceeded events (and, in nested Parallels, the inner
// ParallelStateExited): the multisets must agree but for those.
func sortedParallelMatch(want, got []string) bool {
	count := map[string]int{}
	for _, t := range got {
		count[t]++
	}
	for _, t := range want {
		count[t]--
	}
	for t, n := range count {
		switch {
		case n == 0:
		case n > 0 && (t == "ParallelStateSucceeded" || t == "ParallelStateExited"):
		default:
			return false
		}
	}
	return true
}

func (c *Case) checkCause(m *Matcher, got *string) string {
	raw := c.Expected.Cause
	if len(raw) == 0 || string(raw) == "null" {
		if got != nil {
			return fmt.Sprintf("cause: expected none, got %q", *got)
		}
		return ""
	}
	if got == nil {
		return fmt.Sprintf("cause: expected %s, got none", raw)
	}
	if c.CauseIsJSON {
		want, err := jsonvalue.Parse(raw)
		if err != nil {
			return "expected cause: " + err.Error()
		}
		have, err := jsonvalue.ParseString(*got)
		if err != nil {
			return fmt.Sprintf("cause: expected JSON, got %q", *got)
		}
		if d := m.Match(want, have); d != "" {
			return "cause " + d
		}
		return ""
	}
	var want string
	if err := json.Unmarshal(raw, &want); err != nil {
		return "expected cause: " + err.Error()
	}
	if !m.MatchString(want, *got) {
		return fmt.Sprintf("cause:\n  expected %q\n  got      %q", want, *got)
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

// CheckHistory compares a history, given as the JSON array GetExecutionHistory
// returns, with the recorded one event by event: ids, previousEventId and
// details. Payload strings holding a JSON object are compared parsed, as the
// recording stores them. Cases whose Parallel events were re-sorted are not
// comparable event by event and always match. It returns "" on a match.
func (c *Case) CheckHistory(eventsJSON []byte) string {
	if len(c.History) == 0 || c.ParallelEventsSorted {
		return ""
	}
	v, err := jsonvalue.Parse(eventsJSON)
	if err != nil {
		return "history: " + err.Error()
	}
	got, _ := v.([]any)
	m := c.NewMatcher()
	if len(got) != len(c.History) {
		return fmt.Sprintf("history: expected %d events, got %d", len(c.History), len(got))
	}
	for i, raw := range c.History {
		want, err := jsonvalue.Parse(raw)
		if err != nil {
			return "recorded history: " + err.Error()
		}
		ev, _ := got[i].(*jsonvalue.Object)
		if d := m.Match(want, normalizeEvent(want, ev)); d != "" {
			return fmt.Sprintf("history event %d: %s", i+1, d)
		}
	}
	return ""
}

// normalizeEvent makes an event comparable with a recorded one: payload
// strings (input, output, assigned variables) are parsed wherever the
// recording stored the payload parsed rather than as text.
func normalizeEvent(want any, ev *jsonvalue.Object) *jsonvalue.Object {
	wantObj, _ := want.(*jsonvalue.Object)
	out := ev.Clone()
	for k, d := range ev.All() {
		det, ok := d.(*jsonvalue.Object)
		if !ok {
			continue
		}
		wd, _ := wantObj.Get(k)
		wdet, _ := wd.(*jsonvalue.Object)
		det = det.Clone()
		for _, field := range []string{"input", "output"} {
			if s, ok := det.Get(field); ok {
				w, _ := wdet.Get(field)
				det.Set(field, parseLike(w, s))
			}
		}
		if av, ok := det.Get("assignedVariables"); ok {
			if ao, ok := av.(*jsonvalue.Object); ok {
				w, _ := wdet.Get("assignedVariables")
				wao, _ := w.(*jsonvalue.Object)
				ao = ao.Clone()
				for name, s := range ao.All() {
					wv, _ := wao.Get(name)
					ao.Set(name, parseLike(wv, s))
				}
				det.Set("assignedVariables", ao)
			}
		}
		out.Set(k, det)
	}
	return out
}

// parseLike parses the JSON text actual when the recorded value want is not
// itself a string.
func parseLike(want, actual any) any {
	s, ok := actual.(string)
	if _, wantString := want.(string); !ok || wantString {
		return actual
	}
	if p, err := jsonvalue.ParseString(s); err == nil {
		return p
	}
	return actual
}

// CheckAPIError compares an API error (code and message) with an api_error
// case's expected error. It returns "" when they match.
func (c *Case) CheckAPIError(code, message string) string {
	m := c.NewMatcher()
	e := &c.Expected
	if e.Error == nil || *e.Error != code {
		return fmt.Sprintf("error code: expected %s, got %s (%s)", deref(e.Error), code, message)
	}
	if e.Message != nil && !m.MatchString(*e.Message, message) {
		return fmt.Sprintf("message:\n  expected %q\n  got      %q", *e.Message, message)
	}
	return ""
}

// CheckResponse compares an API response, given as the JSON the API
// returned, with the case's recorded response. Strings of the response
// that hold JSON where the recording stored the value parsed (a
// definition, an input) are compared parsed. It returns "" on a match.
func (c *Case) CheckResponse(responseJSON []byte) string {
	want, err := jsonvalue.Parse(c.Expected.Response)
	if err != nil {
		return "recorded response: " + err.Error()
	}
	got, err := jsonvalue.Parse(responseJSON)
	if err != nil {
		return "response: " + err.Error()
	}
	return c.NewMatcher().Match(want, parseLikeDeep(want, got))
}

// parseLikeDeep is parseLike applied at every level of a response.
func parseLikeDeep(want, actual any) any {
	switch w := want.(type) {
	case *jsonvalue.Object:
		if s, ok := actual.(string); ok {
			return parseLike(want, s)
		}
		a, ok := actual.(*jsonvalue.Object)
		if !ok {
			return actual
		}
		out := a.Clone()
		for k, av := range a.All() {
			if wv, ok := w.Get(k); ok {
				out.Set(k, parseLikeDeep(wv, av))
			}
		}
		return out
	case []any:
		if s, ok := actual.(string); ok {
			return parseLike(want, s)
		}
		a, ok := actual.([]any)
		if !ok || len(a) != len(w) {
			return actual
		}
		out := make([]any, len(a))
		for i := range a {
			out[i] = parseLikeDeep(w[i], a[i])
		}
		return out
	default:
		return parseLike(want, actual)
	}
}
