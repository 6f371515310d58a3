package cli

import (
	"context"

	"github.com/spf13/cobra"

	"stepwise/awsjson"
)

type killCommand struct {
	*CommandBase
	flags operatorFlags
	state string
	err   string
	cause string
}

func (c *killCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kill EXECUTION_ARN --state NAME --error NAME [--cause TEXT]",
		Short: "Fail the running task of a Task state, and stop its work",
		Long: `Kill the running task of a Task state of a running execution: the task fails
with --error and --cause, as if it had failed so (the state's Retry and
Catch apply), and its work is stopped: a local function's process is
killed, a child execution stopped, a .sync job's stop is asked for, an
activity's task token is refused from then on.

  stepwise kill arn:aws:states:us-east-1:123456789012:execution:nightly:run-1 --state Load --error Ops.Killed --cause "stuck on a lock"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context(), args[0]) },
	}
	c.flags.add(cmd)
	cmd.Flags().StringVar(&c.state, "state", "", "the Task state's name (required)")
	cmd.Flags().StringVar(&c.err, "error", "", "the task's error name (required), as a Catch's ErrorEquals names it")
	cmd.Flags().StringVar(&c.cause, "cause", "", "the task's failure cause")
	return cmd
}

func (c *killCommand) run(ctx context.Context, arn string) error {
	if err := requireArn(arn, false); err != nil {
		return err
	}
	if err := requireState(c.state); err != nil {
		return err
	}
	if c.err == "" {
		return &UsageError{"--error NAME is required: the error the task fails with (as a Catch's ErrorEquals names it)"}
	}
	return callStepwise(ctx, &c.flags, "KillState", &awsjson.KillStateInput{ExecutionArn: arn, State: c.state, Error: c.err, Cause: c.cause}, nil)
}
