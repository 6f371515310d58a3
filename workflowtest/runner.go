package workflowtest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"stepwise/asl/dataflow"
	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp"
)

// DefaultMaxSteps bounds the steps of each execution unless Runner says
// otherwise.
const DefaultMaxSteps = 1_000_000

// Runner runs test cases.
type Runner struct {
	// MaxSteps bounds the steps of each execution, a guard against
	// endless loops (0: DefaultMaxSteps).
	MaxSteps int
	// Now is the start of an execution whose case gives none (nil:
	// time.Now).
	Now func() time.Time
	// Filter, when set, selects the cases to run: those whose name, or
	// "<file>/<name>", it matches.
	Filter *regexp.Regexp
}

// Result is how a case went.
type Result struct {
	File *File
	Case *Case
	// Name is "<test file>/<case name>".
	Name   string
	Passed bool
	// Failure is the first difference from what the case expects, or why
	// it could not run; empty when it passed.
	Failure string
	// Got says what the execution did, to show beside a failure.
	Got      []string
	Duration time.Duration
	Outcome  *Outcome
	// Path is the sequence of top-level states entered.
	Path []string
	// Unmocked is the task that had no mocked response, if one had none.
	Unmocked *interp.TaskRequest
}

// Selected reports whether the runner runs the case.
func (r *Runner) Selected(f *File, c *Case) bool {
	return r.Filter == nil || r.Filter.MatchString(c.Name) || r.Filter.MatchString(f.Path+"/"+c.Name)
}

// Run runs one case of a file and checks what it expects.
func (r *Runner) Run(f *File, c *Case) (res *Result) {
	res = &Result{File: f, Case: c, Name: f.Path + "/" + c.Name}
	begin := time.Now()
	defer func() {
		res.Duration = time.Since(begin)
		if p := recover(); p != nil {
			res.Passed = false
			res.Failure = fmt.Sprintf("panic: %v", p)
			res.Got = strings.Split(strings.TrimSpace(string(debug.Stack())), "\n")
		}
	}()
	maxSteps := r.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	start := c.StartTime
	if start.IsZero() {
		now := time.Now
		if r.Now != nil {
			now = r.Now
		}
		start = now().UTC()
	}
	name := CleanName(c.Name)
	if name == "" {
		name = "test"
	}
	var unmocked *interp.TaskRequest
	e := &Exec{
		Machine:          f.Machine,
		StateMachineName: f.StateMachine,
		ExecutionName:    name,
		Input:            c.Input,
		InputText:        c.InputText,
		Start:            start,
		Resolver:         f.resolver(c, &unmocked),
		PayloadLimit:     dataflow.DefaultPayloadLimit,
		MaxSteps:         maxSteps,
		Halt:             func() bool { return unmocked != nil },
	}
	o := e.Run()
	res.Outcome = o
	res.Path = topLevelPath(f, o.Events)
	res.Got = got(o, res.Path)
	if unmocked != nil {
		res.Unmocked = unmocked
		res.Failure = unmockedMessage(f, c, unmocked)
		return res
	}
	res.Failure = check(&c.Expect, o, res.Path)
	res.Passed = res.Failure == ""
	return res
}

// resolver answers the Task states of a case: from its own mocks, then
// its test case of the mock configuration, then the file's mocks. A task none of
// them answers is recorded in unmocked (which halts the run) and fails.
// All of them number a state's responses by the task's invocation of it.
func (f *File) resolver(c *Case, unmocked **interp.TaskRequest) interp.Resolver {
	smArn := StateMachineArn(f.StateMachine)
	used := Used{}
	return interp.ResolverFunc(func(req *interp.TaskRequest) (any, *failure.Failure) {
		if out, fl, ok := c.Mocks.Answer(req, used); ok {
			return out, fl
		}
		if f.MockConfig != nil && c.TestCase != "" {
			if r, ok := f.MockConfig.Mocked(&task.Task{StateMachineArn: smArn, TestCase: c.TestCase, Request: req}); ok {
				return r.Output, r.Failure
			}
		}
		if out, fl, ok := f.Mocks.Answer(req, used); ok {
			return out, fl
		}
		if *unmocked == nil {
			*unmocked = req
		}
		return nil, failure.Newf(failure.TaskFailed, "the Task state '%s' has no mocked response", req.StateName)
	})
}

func unmockedMessage(f *File, c *Case, req *interp.TaskRequest) string {
	what := "Task state"
	if req.Reader != nil {
		what = "ItemReader of Map state"
	}
	if c.Mocks.Has(req.StateName) || f.Mocks.Has(req.StateName) {
		return fmt.Sprintf("%s %q (resource %s) has no mocked response for its input %s: its responses are for other inputs (\"Input\") or were used",
			what, req.StateName, req.Resource, show(req.Parameters))
	}
	where := `"mocks"`
	if c.TestCase != "" {
		where = fmt.Sprintf(`"mocks" or in test case %q of the mock configuration`, c.TestCase)
	} else if f.MockConfig != nil {
		where = `"mocks", or name a "testCase" of the mock configuration`
	}
	return fmt.Sprintf("%s %q (resource %s) has no mocked response: give it one in %s", what, req.StateName, req.Resource, where)
}

// topLevelPath is the sequence of the top-level states entered. State
// names are unique in the whole machine, so a name tells the level.
func topLevelPath(f *File, events []*history.Event) []string {
	path := []string{}
	for _, ev := range events {
		if d := ev.StateEnteredEventDetails; d != nil && f.Machine.States[d.Name] != nil {
			path = append(path, d.Name)
		}
	}
	return path
}

// got says what an execution did.
func got(o *Outcome, path []string) []string {
	var b strings.Builder
	fmt.Fprintf(&b, "got: %s", o.Status)
	if o.Status == history.StatusSucceeded {
		fmt.Fprintf(&b, ", output %s", show(o.Output))
	}
	if o.Error != nil {
		fmt.Fprintf(&b, ", error %q", *o.Error)
	}
	if o.Cause != nil {
		fmt.Fprintf(&b, ", cause %s", clip(fmt.Sprintf("%q", *o.Cause), maxShown))
	}
	return []string{b.String(), "path: " + showNames(path)}
}

// check returns the first way the outcome differs from what is expected.
func check(e *Expect, o *Outcome, path []string) string {
	if o.Status != e.Status {
		if o.Error != nil {
			return fmt.Sprintf("status: expected %s, got %s (error %q)", e.Status, o.Status, *o.Error)
		}
		return fmt.Sprintf("status: expected %s, got %s", e.Status, o.Status)
	}
	if e.Error != nil && (o.Error == nil || *o.Error != *e.Error) {
		return fmt.Sprintf("error: expected %q, got %s", *e.Error, quoted(o.Error))
	}
	if e.Cause != nil && (o.Cause == nil || *o.Cause != *e.Cause) {
		return fmt.Sprintf("cause: expected %s, got %s", clip(fmt.Sprintf("%q", *e.Cause), maxShown), clip(quoted(o.Cause), maxShown))
	}
	if e.CauseContains != nil && (o.Cause == nil || !strings.Contains(*o.Cause, *e.CauseContains)) {
		return fmt.Sprintf("causeContains: expected a cause containing %q, got %s", *e.CauseContains, clip(quoted(o.Cause), maxShown))
	}
	if e.Path != nil {
		if d := diffPath(e.Path, path); d != "" {
			return d
		}
	}
	if e.PathContains != nil {
		if d := diffPathContains(e.PathContains, path); d != "" {
			return d
		}
	}
	if e.HasOutput {
		if d := diffExact("output", e.Output, o.Output); d != "" {
			return d
		}
	}
	if e.HasOutputContains {
		if d := diffSubset("output", e.OutputContains, o.Output); d != "" {
			return d
		}
	}
	return ""
}

func quoted(s *string) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%q", *s)
}

func diffPath(want, got []string) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("path: expected %s, got %s (ended before %s)", showNames(want), showNames(got), want[i])
		case i >= len(want):
			return fmt.Sprintf("path: expected %s, got %s (went on to %s)", showNames(want), showNames(got), got[i])
		case want[i] != got[i]:
			return fmt.Sprintf("path: expected %s, got %s (state %d is %s, not %s)", showNames(want), showNames(got), i+1, got[i], want[i])
		}
	}
	return ""
}

func diffPathContains(want, got []string) string {
	j := 0
	for i, w := range want {
		for j < len(got) && got[j] != w {
			j++
		}
		if j == len(got) {
			if i == 0 {
				return fmt.Sprintf("pathContains: expected %s to be entered, got path %s", w, showNames(got))
			}
			return fmt.Sprintf("pathContains: expected %s to be entered after %s, got path %s", w, want[i-1], showNames(got))
		}
		j++
	}
	return ""
}

// Report is what running test files gave.
type Report struct {
	// Results are the cases run, in the order run.
	Results []*Result
	// Errors are the files that could not run.
	Errors []*FileError
	// Coverage is each definition's, in the order first tested.
	Coverage []*Coverage
}

// RunFiles loads each test file and runs its selected cases, one after
// the other; done, when set, is told of each result as it comes and of
// each file that cannot run.
func (r *Runner) RunFiles(paths []string, done func(*Result, *FileError)) *Report {
	rep := &Report{}
	covers := map[string]*Coverage{}
	for _, p := range paths {
		f, err := Load(p)
		if err != nil {
			fe, ok := err.(*FileError)
			if !ok {
				fe = &FileError{Path: p, Problems: []string{err.Error()}}
			}
			rep.Errors = append(rep.Errors, fe)
			if done != nil {
				done(nil, fe)
			}
			continue
		}
		key := f.Definition
		if abs, err := filepath.Abs(key); err == nil {
			key = abs
		}
		cov := covers[key]
		if cov == nil {
			cov = NewCoverage(f.Definition, f.Machine)
			covers[key] = cov
			rep.Coverage = append(rep.Coverage, cov)
		}
		for _, c := range f.Cases {
			if !r.Selected(f, c) {
				continue
			}
			res := r.Run(f, c)
			if res.Outcome != nil {
				cov.Add(res.Outcome.Events)
			}
			rep.Results = append(rep.Results, res)
			if done != nil {
				done(res, nil)
			}
		}
	}
	// Definitions none of whose cases ran have no coverage to show.
	kept := rep.Coverage[:0]
	for _, c := range rep.Coverage {
		if c.Executions > 0 {
			kept = append(kept, c)
		}
	}
	rep.Coverage = kept
	return rep
}
