package workflowtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/history"
	"stepwise/integration/mock"
	"stepwise/internal/boundedfile"
	"stepwise/jsonvalue"
)

// File is a loaded test file: a definition and its cases.
type File struct {
	// Path is the test file's path as it was found.
	Path string
	// Definition is the definition's path (relative to the test file's
	// directory in the file, joined to it here).
	Definition string
	// StateMachine is the state machine's name: what the mock
	// configuration's test cases are looked up under.
	StateMachine string
	Machine      *asl.StateMachine
	// MockConfig is the Step Functions Local mock configuration, if any.
	MockConfig *mock.Config
	// Mocks are mocked responses by state name for every case.
	Mocks *StateMocks
	Cases []*Case
}

// Case is one test case.
type Case struct {
	Name      string
	Input     any
	InputText string
	// TestCase names a test case of the file's mock configuration.
	TestCase string
	// Mocks are this case's mocked responses by state name, over the
	// file's.
	Mocks *StateMocks
	// StartTime is the execution's start, zero for the time of the run.
	StartTime time.Time
	Expect    Expect
}

// Expect is what a case expects of its execution. Every expectation given
// must hold.
type Expect struct {
	// Status is SUCCEEDED, FAILED, TIMED_OUT or ABORTED.
	Status history.ExecutionStatus
	// Output is the exact output (HasOutput when given).
	Output    any
	HasOutput bool
	// OutputContains is a part of the output: objects match member by
	// member, recursively, and arrays element by element.
	OutputContains    any
	HasOutputContains bool
	// Error, Cause and CauseContains are the failure's.
	Error, Cause, CauseContains *string
	// Path is the exact sequence of top-level states entered; PathContains
	// states that must be entered in that order, not necessarily one
	// right after the other.
	Path, PathContains []string
}

// FileError says why a test file cannot run: each problem on a line of
// its own, prefixed with the file's path.
type FileError struct {
	Path     string
	Problems []string
}

func (e *FileError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Path + ": " + p)
	}
	return b.String()
}

// loader reads one test file, collecting what is wrong with it.
type loader struct {
	path, dir string
	problems  []string
	// hasMockConfig is set when the file gives a mock configuration,
	// valid or not.
	hasMockConfig bool
	// data, when set, is the file's content (LoadData).
	data []byte
}

func (l *loader) fail(at, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if at != "" {
		msg = at + ": " + msg
	}
	l.problems = append(l.problems, msg)
}

// Load reads a test file (JSON, or YAML when its name ends in .yaml or
// .yml), its definition and its mocks. A file that cannot run is a
// *FileError naming every problem found.
func Load(path string) (*File, error) {
	l := &loader{path: path, dir: filepath.Dir(path)}
	f := l.load()
	if len(l.problems) > 0 {
		return nil, &FileError{Path: path, Problems: l.problems}
	}
	return f, nil
}

// LoadData is Load of a test file's content; path names it (its
// extension says whether it is YAML) and is what relative paths in it
// are relative to.
func LoadData(path string, data []byte) (*File, error) {
	l := &loader{path: path, dir: filepath.Dir(path), data: data}
	f := l.load()
	if len(l.problems) > 0 {
		return nil, &FileError{Path: path, Problems: l.problems}
	}
	return f, nil
}

var (
	fileMembers   = []string{"definition", "stateMachine", "mockConfig", "mocks", "startTime", "cases"}
	caseMembers   = []string{"name", "input", "inputFile", "testCase", "mocks", "startTime", "expect"}
	expectMembers = []string{"status", "output", "outputContains", "error", "cause", "causeContains", "path", "pathContains"}
)

func (l *loader) load() *File {
	var v any
	var err error
	if l.data != nil {
		v, err = parseValue(l.path, l.data)
	} else {
		v, err = readValue(l.path)
	}
	if err != nil {
		l.fail("", "%s", readError(err))
		return nil
	}
	root, ok := v.(*jsonvalue.Object)
	if !ok {
		l.fail("", "a test file must hold an object with \"definition\" and \"cases\"")
		return nil
	}
	l.members(root, "", fileMembers)
	f := &File{Path: l.path}
	if inline, ok := root.Get("definition"); ok {
		if o, isObj := inline.(*jsonvalue.Object); isObj {
			f.Definition = l.path
			f.Machine = l.parseDefinition("the inline definition", jsonvalue.Marshal(o))
		} else if defName, ok := l.str(root, "", "definition", true); ok {
			f.Definition = l.rel(defName)
			f.Machine = l.definition(f.Definition)
		}
	} else {
		l.fail("", "%q is missing", "definition")
	}
	f.StateMachine = CleanName(TrimExt(filepath.Base(f.Definition)))
	if sm, ok := l.str(root, "", "stateMachine", false); ok {
		f.StateMachine = sm
	}
	if v, ok := root.Get("mockConfig"); ok {
		l.hasMockConfig = true
		f.MockConfig = l.mockConfig(v)
	}
	if v, ok := root.Get("mocks"); ok {
		f.Mocks = l.mocks(v, "mocks", f.Machine)
	}
	var start time.Time
	if s, ok := l.str(root, "", "startTime", false); ok {
		start = l.time("startTime", s)
	}
	cv, ok := root.Get("cases")
	cases, isArr := cv.([]any)
	switch {
	case !ok:
		l.fail("", "\"cases\" is missing")
	case !isArr:
		l.fail("cases", "must be an array of cases")
	case len(cases) == 0:
		l.fail("cases", "has no case")
	}
	names := map[string]bool{}
	for i, c := range cases {
		at := fmt.Sprintf("cases[%d]", i)
		tc := l.testCase(f, at, c, start)
		if tc == nil {
			continue
		}
		if names[tc.Name] {
			l.fail(at+".name", "%q names another case too", tc.Name)
		}
		names[tc.Name] = true
		f.Cases = append(f.Cases, tc)
	}
	return f
}

// readError words an error reading a file.
func readError(err error) string {
	var se *jsonvalue.SyntaxError
	if errors.As(err, &se) {
		return "invalid JSON: " + err.Error()
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return "cannot read: " + pe.Err.Error()
	}
	// The path is said before the error.
	var nr *boundedfile.NotRegularError
	if errors.As(err, &nr) {
		return "cannot read: " + strings.TrimPrefix(err.Error(), nr.Path+" is ")
	}
	var tl *boundedfile.TooLargeError
	if errors.As(err, &tl) {
		return "cannot read: larger than " + boundedfile.Size(tl.Limit) + ", the most read of such a file"
	}
	return err.Error()
}

// rel resolves a path written in the test file.
func (l *loader) rel(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir, p)
}

func (l *loader) members(o *jsonvalue.Object, at string, allowed []string) {
	for k := range o.All() {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			where := k
			if at != "" {
				where = at + "." + k
			}
			l.fail(where, "unknown member (%s are)", strings.Join(allowed, ", "))
		}
	}
}

// str reads a string member.
func (l *loader) str(o *jsonvalue.Object, at, key string, required bool) (string, bool) {
	where := key
	if at != "" {
		where = at + "." + key
	}
	v, ok := o.Get(key)
	if !ok {
		if required {
			l.fail(at, "%q is missing", key)
		}
		return "", false
	}
	s, ok := v.(string)
	if !ok || s == "" {
		l.fail(where, "must be a non-empty string")
		return "", false
	}
	return s, true
}

func (l *loader) time(at, s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		l.fail(at, "not a time in RFC 3339 form (2025-06-30T00:00:00Z)")
	}
	return t.UTC()
}

func (l *loader) definition(path string) *asl.StateMachine {
	data, err := readFile(path, MaxDefinitionSize)
	if err != nil {
		l.fail("definition", "%s: %s", path, readError(err))
		return nil
	}
	if isYAML(path) {
		v, err := ParseYAML(data)
		if err != nil {
			l.fail("definition", "%s: %s", path, err)
			return nil
		}
		data = jsonvalue.Marshal(v)
	}
	return l.parseDefinition(path, data)
}

// parseDefinition parses a definition; what names it in messages.
func (l *loader) parseDefinition(what string, data []byte) *asl.StateMachine {
	m, diags := asl.Parse(data)
	if m == nil {
		for _, d := range diags {
			loc := d.Location
			if loc == "" {
				loc = "/"
			}
			l.fail("definition", "%s: %s %s %s: %s", what, d.Severity, d.Code, loc, d.Message)
		}
	}
	return m
}

// mockConfig reads a MockConfigFile: a path, or the object inline.
func (l *loader) mockConfig(v any) *mock.Config {
	var data []byte
	where := "mockConfig"
	switch t := v.(type) {
	case string:
		p := l.rel(t)
		mv, err := readValue(p)
		if err != nil {
			l.fail(where, "%s: %s", p, readError(err))
			return nil
		}
		data, where = jsonvalue.Marshal(mv), where+" ("+p+")"
	case *jsonvalue.Object:
		data = jsonvalue.Marshal(t)
	default:
		l.fail(where, "must be the path of a mock configuration or one inline")
		return nil
	}
	c, err := mock.Parse(data)
	if err != nil {
		l.fail(where, "%s", err)
		return nil
	}
	return c
}

// mocks reads mocked responses by state name: a path, or the object
// inline.
func (l *loader) mocks(v any, at string, m *asl.StateMachine) *StateMocks {
	where := at
	if p, ok := v.(string); ok {
		p = l.rel(p)
		mv, err := readValue(p)
		if err != nil {
			l.fail(at, "%s: %s", p, readError(err))
			return nil
		}
		v, where = mv, at+" ("+p+")"
	}
	if o, ok := v.(*jsonvalue.Object); ok && (o.Has("StateMachines") || o.Has("MockedResponses")) {
		l.fail(where, "this is a mock configuration (StateMachines, MockedResponses): give it as \"mockConfig\"")
		return nil
	}
	sm, err := ParseStateMocks(v)
	if err != nil {
		l.fail(where, "%s", err)
		return nil
	}
	if m != nil {
		all := allStates(m)
		for _, name := range sm.States() {
			if all[name] == nil {
				l.fail(where, "no state %q in the definition", name)
			} else if t := all[name].Type; t != asl.TypeTask && t != asl.TypeMap {
				l.fail(where, "state %q is a %s state: only Task states (and a Map's ItemReader) are mocked", name, t)
			}
		}
	}
	return sm
}

func (l *loader) testCase(f *File, at string, v any, start time.Time) *Case {
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		l.fail(at, "must be an object")
		return nil
	}
	l.members(o, at, caseMembers)
	c := &Case{StartTime: start, Input: jsonvalue.NewObject(0)}
	c.Name, _ = l.str(o, at, "name", true)
	if c.Name != "" && strings.ContainsAny(c.Name, "\n\r") {
		l.fail(at+".name", "must be one line")
	}
	in, hasIn := o.Get("input")
	if p, ok := l.str(o, at, "inputFile", false); ok {
		if hasIn {
			l.fail(at, "give \"input\" or \"inputFile\", not both")
		}
		p = l.rel(p)
		data, err := readFile(p, MaxFileSize)
		if err == nil {
			in, err = parseValue(p, data)
			if err == nil && !isYAML(p) {
				c.InputText = string(data)
			}
		}
		if err != nil {
			l.fail(at+".inputFile", "%s: %s", p, readError(err))
		}
		hasIn = true
	}
	if hasIn {
		c.Input = in
	}
	if c.InputText == "" {
		c.InputText = jsonvalue.String(c.Input)
	}
	if len(c.InputText) > dataflow.DefaultPayloadLimit {
		l.fail(at+".input", "%d bytes, more than the payload limit of %d bytes", len(c.InputText), dataflow.DefaultPayloadLimit)
	}
	if tc, ok := l.str(o, at, "testCase", false); ok {
		c.TestCase = tc
		switch {
		case f.MockConfig == nil:
			if !l.hasMockConfig {
				l.fail(at+".testCase", "there is no \"mockConfig\" to take test case %q from", tc)
			}
		case !f.MockConfig.HasTestCase(f.StateMachine, tc):
			l.fail(at+".testCase", "the mock configuration has no test case %q for state machine %q (see \"stateMachine\")", tc, f.StateMachine)
		}
	}
	if mv, ok := o.Get("mocks"); ok {
		c.Mocks = l.mocks(mv, at+".mocks", f.Machine)
	}
	if s, ok := l.str(o, at, "startTime", false); ok {
		c.StartTime = l.time(at+".startTime", s)
	}
	ev, ok := o.Get("expect")
	if !ok {
		ev = jsonvalue.NewObject(0)
	}
	eo, ok := ev.(*jsonvalue.Object)
	if !ok {
		l.fail(at+".expect", "must be an object")
		return c
	}
	l.expect(f, at+".expect", eo, &c.Expect)
	return c
}

var statuses = []history.ExecutionStatus{history.StatusSucceeded, history.StatusFailed, history.StatusTimedOut, history.StatusAborted}

func (l *loader) expect(f *File, at string, o *jsonvalue.Object, e *Expect) {
	l.members(o, at, expectMembers)
	if s, ok := l.str(o, at, "status", false); ok {
		e.Status = history.ExecutionStatus(s)
		valid := false
		for _, st := range statuses {
			valid = valid || st == e.Status
		}
		if !valid {
			l.fail(at+".status", "%q is not SUCCEEDED, FAILED, TIMED_OUT or ABORTED", s)
		}
	}
	e.Output, e.HasOutput = o.Get("output")
	e.OutputContains, e.HasOutputContains = o.Get("outputContains")
	for _, m := range []struct {
		key string
		p   **string
	}{{"error", &e.Error}, {"cause", &e.Cause}, {"causeContains", &e.CauseContains}} {
		key, p := m.key, m.p
		if v, ok := o.Get(key); ok {
			s, isStr := v.(string)
			if !isStr {
				l.fail(at+"."+key, "must be a string")
				continue
			}
			*p = &s
		}
	}
	if e.Status == "" {
		e.Status = history.StatusSucceeded
		if e.Error != nil || e.Cause != nil || e.CauseContains != nil {
			e.Status = history.StatusFailed
		}
	}
	if e.Status != history.StatusSucceeded && (e.HasOutput || e.HasOutputContains) {
		l.fail(at, "expects an output of an execution that does not succeed (status %s)", e.Status)
	}
	if e.Status == history.StatusSucceeded && (e.Error != nil || e.Cause != nil || e.CauseContains != nil) {
		l.fail(at, "expects an error of an execution that succeeds")
	}
	e.Path = l.statePath(f, at+".path", o, "path")
	e.PathContains = l.statePath(f, at+".pathContains", o, "pathContains")
}

func (l *loader) statePath(f *File, at string, o *jsonvalue.Object, key string) []string {
	v, ok := o.Get(key)
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		l.fail(at, "must be an array of state names")
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			l.fail(fmt.Sprintf("%s[%d]", at, i), "must be a state name")
			continue
		}
		if f.Machine != nil && f.Machine.States[s] == nil {
			if allStates(f.Machine)[s] != nil {
				l.fail(fmt.Sprintf("%s[%d]", at, i), "%q is not a top-level state: the path lists the states of the top level only", s)
			} else {
				l.fail(fmt.Sprintf("%s[%d]", at, i), "no state %q at the top level of the definition", s)
			}
		}
		out = append(out, s)
	}
	return out
}

// allStates maps the name of every state of a machine, at any depth, to
// it.
func allStates(m *asl.StateMachine) map[string]*asl.State {
	all := map[string]*asl.State{}
	walkStates(m, 0, func(s *asl.State, _ int, _ bool) { all[s.Name] = s })
	return all
}

// walkStates calls fn for each state in definition order, depth first:
// its depth, and whether it runs in a distributed Map's child executions.
func walkStates(m *asl.StateMachine, depth int, fn func(s *asl.State, depth int, child bool)) {
	walk(m, depth, false, fn)
}

func walk(m *asl.StateMachine, depth int, child bool, fn func(*asl.State, int, bool)) {
	if m == nil {
		return
	}
	for _, name := range m.Order {
		s := m.States[name]
		if s == nil {
			continue
		}
		fn(s, depth, child)
		for _, b := range s.Branches {
			walk(b, depth+1, child, fn)
		}
		if s.ItemProcessor != nil {
			walk(s.ItemProcessor, depth+1, child || s.ProcessorMode == "DISTRIBUTED", fn)
		}
	}
}

// TrimExt is a file's name without any of its extensions
// (order.asl.json: order), the name a workflow goes by.
func TrimExt(name string) string {
	for ext := filepath.Ext(name); ext != ""; ext = filepath.Ext(name) {
		name = name[:len(name)-len(ext)]
	}
	return name
}

// testFileName matches the names of test files.
var testFileName = regexp.MustCompile(`\.test\.(json|ya?ml)$`)

// IsTestFile reports whether a file's name makes it a test file
// (*.test.json, *.test.yaml, *.test.yml).
func IsTestFile(name string) bool { return testFileName.MatchString(filepath.Base(name)) }

// Find lists the test files of args: a file is taken as it is, a
// directory is searched, with its subdirectories, for test files (skipping
// those whose names start with "." or "_", and testdata). No args means
// the current directory.
func Find(args []string) ([]string, error) {
	if len(args) == 0 {
		args = []string{"."}
	}
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		found := 0
		err = filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				n := d.Name()
				if p != a && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if IsTestFile(p) {
				files = append(files, p)
				found++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if found == 0 {
			return nil, fmt.Errorf("no test files (*.test.json, *.test.yaml) in %s", a)
		}
	}
	return files, nil
}
