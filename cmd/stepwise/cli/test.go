package cli

import (
	"context"
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
	record   string
	endpoint string
	out      string
	// recordRun is the run of a redriven execution --record records.
	recordRun int
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
definition: diagnostics on stderr).

With --record EXECUTION_ARN --endpoint URL --out FILE, writes a test file
of an execution read from a server instead: its definition inline, its
input, every task's result or error (with the input it was given), and
its status, output or error, and path as expectations. "stepwise test
FILE" passes on it; "stepwise replay --recording FILE" replays it on an
edited definition. Of a redriven execution, its latest run is recorded
(the execution as that run ended), or the run --record-run N names (1 for
the first); the output and the case's name say which ("run 2 of 2").`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if c.record != "" || c.endpoint != "" || c.out != "" {
				return c.recordExecution(args)
			}
			return c.runTests(args)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&c.verbose, "verbose", "v", false, "list passing cases too, and every state's count with --cover")
	f.StringVar(&c.run, "run", "", "run only the cases whose name (or <file>/<name>) matches this regular expression")
	f.StringVar(&c.junit, "junit", "", "also write the results to this file as JUnit XML")
	f.BoolVar(&c.cover, "cover", false, "report the states entered and the Choice rules taken, per definition")
	f.IntVar(&c.maxSteps, "max-steps", workflowtest.DefaultMaxSteps, "stop an execution after this many steps (a guard against endless loops)")
	f.StringVar(&c.record, "record", "", "record this execution (its ARN) as a test file, from the server at --endpoint, into --out")
	f.StringVar(&c.endpoint, "endpoint", "", "with --record: the server's URL (its Step Functions API)")
	f.StringVar(&c.out, "out", "", "with --record: the test file to write (*.test.json)")
	f.IntVar(&c.recordRun, "record-run", 0, "with --record: the run of a redriven execution to record (1 for the first); the latest by default")
	return cmd
}

func (c *testCommand) recordExecution(args []string) error {
	switch {
	case len(args) > 0:
		return &UsageError{"--record takes no test files"}
	case c.record == "" || c.endpoint == "" || c.out == "":
		return &UsageError{"give --record EXECUTION_ARN, --endpoint URL and --out FILE together"}
	}
	if c.recordRun < 0 {
		return &UsageError{"--record-run is a run's number, 1 for the first"}
	}
	data, which, err := recordFromServer(context.Background(), c.endpoint, c.record, c.recordRun)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.out, data, 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if which != "" {
		which = " (" + which + ")"
	}
	fmt.Fprintf(c.Err, "recorded %s%s in %s\n", c.record, which, c.out)
	return nil
}

func (c *testCommand) runTests(args []string) error {
	r := &workflowtest.Runner{MaxSteps: c.maxSteps}
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
	files, err := workflowtest.Find(args)
	if err != nil {
		return &UsageError{err.Error()}
	}
	var writeErr error
	rep := r.RunFiles(files, func(res *workflowtest.Result, fe *workflowtest.FileError) {
		if fe != nil {
			fmt.Fprintln(c.Err, fe.Error())
			return
		}
		if err := workflowtest.WriteResult(c.Out, res, c.verbose); err != nil && writeErr == nil {
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
	fmt.Fprintln(c.Out, workflowtest.Summary(rep.Results))
	if len(rep.Errors) > 0 {
		return &ExitError{Code: 2}
	}
	if _, failed := workflowtest.Counts(rep.Results); failed > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

func (c *testCommand) writeJUnit(rep *workflowtest.Report) error {
	f, err := os.Create(c.junit)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := workflowtest.WriteJUnit(f, rep.Results, rep.Errors); err != nil {
		f.Close()
		return fmt.Errorf("--junit: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}
