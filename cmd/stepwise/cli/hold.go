package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"stepwise/awsjson"
)

type holdCommand struct {
	*CommandBase
	flags   operatorFlags
	state   string
	release bool
}

func (c *holdCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hold ARN --state NAME",
		Short: "Hold a state of an execution, or of every execution of a state machine",
		Long: `Hold a state: a running execution that is about to enter it waits before
it (nothing runs, nothing is written to its history) until the state is
released. Of a state machine's ARN, every running execution of it is held
and every execution started until the release starts with the state held.
A state that runs already goes on; the hold applies to its next entries.
Prints the executions held.

  stepwise hold arn:aws:states:us-east-1:123456789012:execution:nightly:run-1 --state Load
  stepwise hold arn:aws:states:us-east-1:123456789012:stateMachine:nightly --state Load`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context(), args[0], "HoldState") },
	}
	c.flags.add(cmd)
	cmd.Flags().StringVar(&c.state, "state", "", "the state's name (required)")
	return cmd
}

// run holds (or releases, with op ReleaseState) the state of arn.
func (c *holdCommand) run(ctx context.Context, arn, op string) error {
	if err := requireArn(arn, true); err != nil {
		return err
	}
	if err := requireState(c.state); err != nil {
		return err
	}
	var out struct {
		Executions []string `json:"executionArns"`
	}
	if err := callStepwise(ctx, &c.flags, op, &awsjson.StateControlInput{Arn: arn, State: c.state}, &out); err != nil {
		return err
	}
	for _, x := range out.Executions {
		fmt.Fprintln(c.Out, x)
	}
	return nil
}
