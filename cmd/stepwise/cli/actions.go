package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"stepwise/awsjson"
)

type actionsCommand struct {
	*CommandBase
	flags operatorFlags
}

func (c *actionsCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "actions EXECUTION_ARN",
		Short: "List the operator actions of an execution",
		Long: `List the operator actions of an execution (its holds, releases, suspends,
resumes, skips, kills, reruns and redrives), oldest first: when, who, what,
the state, and a skip's output, a kill's error and cause, or a rerun's mode
and output.

  stepwise actions arn:aws:states:us-east-1:123456789012:execution:nightly:run-1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context(), args[0]) },
	}
	c.flags.add(cmd)
	return cmd
}

func (c *actionsCommand) run(ctx context.Context, arn string) error {
	if err := requireArn(arn, false); err != nil {
		return err
	}
	var out awsjson.ListOperatorActionsOutput
	if err := callStepwise(ctx, &c.flags, "ListOperatorActions", &awsjson.ExecutionControlInput{ExecutionArn: arn}, &out); err != nil {
		return err
	}
	w := tabwriter.NewWriter(c.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WHEN\tWHO\tACTION\tSTATE\tDETAIL")
	for _, a := range out.Actions {
		detail := a.Output
		switch a.Action {
		case "Kill":
			detail = a.Error
			if a.Cause != "" {
				detail += ": " + a.Cause
			}
		case "Rerun":
			detail = strings.TrimSpace(a.Mode + " " + a.Output)
			if a.Definition != "" {
				detail += " (corrected definition)"
			}
		}
		state := a.State
		if state == "" {
			state = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", time.Time(a.Date).UTC().Format(time.RFC3339), a.By, a.Action, state, detail)
	}
	return w.Flush()
}
