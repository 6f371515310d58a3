package cli

import (
	"context"

	"github.com/spf13/cobra"

	"stepwise/awsjson"
)

type suspendCommand struct {
	*CommandBase
	flags operatorFlags
}

func (c *suspendCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "suspend EXECUTION_ARN",
		Short: "Suspend an execution: no state is entered until it is resumed",
		Long: `Suspend a running execution: every state it is about to enter waits until
the execution is resumed. What runs (tasks, waits, child executions) goes
on to its end. The execution stays RUNNING for AWS clients.

  stepwise suspend arn:aws:states:us-east-1:123456789012:execution:nightly:run-1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExecutionControl(cmd.Context(), &c.flags, args[0], "SuspendExecution")
		},
	}
	c.flags.add(cmd)
	return cmd
}

// runExecutionControl suspends or resumes (op) execution arn.
func runExecutionControl(ctx context.Context, f *operatorFlags, arn, op string) error {
	if err := requireArn(arn, false); err != nil {
		return err
	}
	return callStepwise(ctx, f, op, &awsjson.ExecutionControlInput{ExecutionArn: arn}, nil)
}
