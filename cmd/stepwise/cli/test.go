package cli

import (
	"fmt"
	"os"
	"regexp"

	"github.com/spf13/cobra"

	"stepwise/workflowtest"
)

type testCommand struct {
	*CommandBase
	verbose  bool
	run      string
	junit    string
	cover    bool
	maxSteps int
}

func (c *testCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "test [FILE or DIR ...]",
		Short: "Run the test cases of workflows in-process, in virtual time",
		Long: `Run the cases of test files (*.test.json, *.test.yaml): each names a
definition and cases with an input, mocked Task responses and what the
execution must do (status, output or a part of it, error, cause, the path
of states). A directory is searched with its subdirectories; no argument
means the current directory. Cases run in-process on the interpreter in
virtual time, as "stepwise run" runs them: a Wait of days takes no time.
Every Task must be mocked; one that is not fails its case.

Prints "--- FAIL: <file>/<case>" with the first difference for each case
that failed ("--- PASS" too with -v), then "N passed, N failed".

Exit status: 0 when every case passed, 1 when some failed, 2 for bad usage
or a test file that cannot run (unreadable, invalid, an invalid
definition: diagnostics on stderr).`,
		RunE: func(cmd *cobra.Command, args []string) error { return c.runTests(args) },
	}
	f := cmd.Flags()
	f.BoolVarP(&c.verbose, "verbose", "v", false, "list passing cases too, and every state's count with --cover")
	f.StringVar(&c.run, "run", "", "run only the cases whose name (or <file>/<name>) matches this regular expression")
	f.StringVar(&c.junit, "junit", "", "also write the results to this file as JUnit XML")
	f.BoolVar(&c.cover, "cover", false, "report the states entered and the Choice rules taken, per definition")
	f.IntVar(&c.maxSteps, "max-steps", testrunner.DefaultMaxSteps, "stop an execution after this many steps (a guard against endless loops)")
	return cmd
}

func (c *testCommand) runTests(args []string) error {
	r := &testrunner.Runner{MaxSteps: c.maxSteps}
	if c.maxSteps <= 0 {
		return &UsageError{"--max-steps must be positive"}
	}
	if c.run != "" {
		re, err := regexp.Compile(c.run)
		if err != nil {
			return &UsageError{"--run: " + err.Error()}
		}
		r.Filter = re
	}
	files, err := testrunner.Find(args)
	if err != nil {
		return &UsageError{err.Error()}
	}
	var writeErr error
	rep := r.RunFiles(files, func(res *testrunner.Result, fe *testrunner.FileError) {
		if fe != nil {
			fmt.Fprintln(c.Err, fe.Error())
			return
		}
		if err := testrunner.WriteResult(c.Out, res, c.verbose); err != nil && writeErr == nil {
			writeErr = err
		}
	})
	if writeErr != nil {
		return writeErr
	}
	if c.cover {
		for _, cov := range rep.Coverage {
			if err := cov.Write(c.Out, c.verbose); err != nil {
				return err
			}
		}
	}
	if c.junit != "" {
		if err := c.writeJUnit(rep); err != nil {
			return &UsageError{err.Error()}
		}
	}
	if r.Filter != nil && len(rep.Results) == 0 && len(rep.Errors) == 0 {
		fmt.Fprintf(c.Err, "stepwise test: no case matches --run %q\n", c.run)
	}
	fmt.Fprintln(c.Out, testrunner.Summary(rep.Results))
	if len(rep.Errors) > 0 {
		return &ExitError{Code: 2}
	}
	if _, failed := testrunner.Counts(rep.Results); failed > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

func (c *testCommand) writeJUnit(rep *testrunner.Report) error {
	f, err := os.Create(c.junit)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := testrunner.WriteJUnit(f, rep.Results, rep.Errors); err != nil {
		f.Close()
		return fmt.Errorf("--junit: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}
