package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"stepwise/awsjson"
	"stepwise/internal/boundedfile"
)

type rerunCommand struct {
	*CommandBase
	flags      operatorFlags
	from       string
	output     string
	definition string
	revision   int64
	dryRun     bool
}

func (c *rerunCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rerun EXECUTION_ARN --from FAILED|NEXT|TOP|WARNINGS|STATE:NAME [--output JSON] [--definition FILE | --revision N] [--dry-run]",
		Short: "Run an ended execution again, from where you say",
		Long: `Run a FAILED, TIMED_OUT or ABORTED execution again, as the same execution
(its history goes on, its redrive count goes up), from:

  FAILED        the states that did not succeed, as a redrive
  NEXT          the state after the failed one: the failed state is taken
                as done with --output as its output ({} when left out)
  STATE:NAME    a state at the top level, entered again with the input it had
  TOP           the first state, with the execution's input
  WARNINGS      each state that ended with warning, then as FAILED

on a corrected definition (--definition FILE) or a published version of the
state machine (--revision N), or on the one it ran on. The preview is printed:
the states that run again, those that keep their results, and the states the
definition adds, removes and changes. --dry-run only prints the preview.

  stepwise rerun arn:aws:states:us-east-1:123456789012:execution:nightly:run-1 --from NEXT --output '{"rows": 0}' --dry-run
  stepwise rerun arn:aws:states:us-east-1:123456789012:execution:nightly:run-1 --from STATE:Load --definition fixed.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context(), args[0]) },
	}
	c.flags.add(cmd)
	cmd.Flags().StringVar(&c.from, "from", "", "where the execution runs again: FAILED, NEXT, TOP, WARNINGS or STATE:NAME (required)")
	cmd.Flags().StringVar(&c.output, "output", "", "the failed state's output for NEXT, JSON ({} when left out)")
	cmd.Flags().StringVar(&c.definition, "definition", "", "a corrected definition's file to run on")
	cmd.Flags().Int64Var(&c.revision, "revision", 0, "the number of a published version of the state machine to run on")
	cmd.Flags().BoolVar(&c.dryRun, "dry-run", false, "only print the preview; change nothing")
	return cmd
}

func (c *rerunCommand) run(ctx context.Context, arn string) error {
	if err := requireArn(arn, false); err != nil {
		return err
	}
	from := strings.TrimSpace(c.from)
	switch {
	case from == "":
		return &UsageError{"--from is required: FAILED, NEXT, TOP, WARNINGS or STATE:NAME"}
	case from == "FAILED", from == "NEXT", from == "TOP", from == "WARNINGS":
	case strings.HasPrefix(from, "STATE:") && strings.TrimSpace(from[len("STATE:"):]) != "":
	case from == "STATE", from == "STATE:":
		return &UsageError{"--from STATE:NAME names the state, as in the definition"}
	default:
		return &UsageError{fmt.Sprintf("--from %q: want FAILED, NEXT, TOP, WARNINGS or STATE:NAME", c.from)}
	}
	if c.output != "" {
		if from != "NEXT" {
			return &UsageError{"--output is given only with --from NEXT"}
		}
		var v any
		if err := json.Unmarshal([]byte(c.output), &v); err != nil {
			return &UsageError{fmt.Sprintf("--output is not JSON: %v", err)}
		}
	}
	if c.definition != "" && c.revision != 0 {
		return &UsageError{"use --definition or --revision, not both"}
	}
	if c.revision < 0 {
		return &UsageError{fmt.Sprintf("--revision %d: a version's number is 1 or more", c.revision)}
	}
	in := &awsjson.RerunExecutionInput{ExecutionArn: arn, From: from, Output: c.output, Revision: c.revision, DryRun: c.dryRun}
	if c.definition != "" {
		if ctx == nil {
			ctx = context.Background()
		}
		def, err := boundedfile.Read(ctx, c.definition, maxDefinitionFile)
		if err != nil {
			return &UsageError{fmt.Sprintf("--definition: %v", err)}
		}
		in.Definition = string(def)
	}
	var out awsjson.RerunExecutionOutput
	if err := callStepwise(ctx, &c.flags, "RerunExecution", in, &out); err != nil {
		return err
	}
	return c.print(&out)
}

// print writes a rerun's preview as a table of one row a line.
func (c *rerunCommand) print(out *awsjson.RerunExecutionOutput) error {
	list := func(l []string) string {
		if len(l) == 0 {
			return "-"
		}
		return strings.Join(l, ", ")
	}
	start := out.StartState
	if start == "" {
		start = "(the failed states)"
	}
	w := tabwriter.NewWriter(c.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "MODE\t%s\n", out.Mode)
	fmt.Fprintf(w, "START\t%s\n", start)
	fmt.Fprintf(w, "RERUN\t%s\n", list(out.RerunStates))
	fmt.Fprintf(w, "KEEP\t%s\n", list(out.KeptStates))
	fmt.Fprintf(w, "ADDED\t%s\n", list(out.AddedStates))
	fmt.Fprintf(w, "REMOVED\t%s\n", list(out.RemovedStates))
	fmt.Fprintf(w, "CHANGED\t%s\n", list(out.ChangedStates))
	if out.RedriveDate != nil {
		fmt.Fprintf(w, "REDRIVEN\t%s\n", time.Time(*out.RedriveDate).UTC().Format(time.RFC3339))
		fmt.Fprintf(w, "REDRIVES\t%d\n", out.RedriveCount)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if out.DryRun {
		_, err := fmt.Fprintln(c.Out, "Dry run: nothing was changed.")
		return err
	}
	return nil
}
