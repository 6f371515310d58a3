package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"stepwise/awsjson"
)

type skipCommand struct {
	*CommandBase
	flags  operatorFlags
	state  string
	output string
}

func (c *skipCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skip EXECUTION_ARN --state NAME --output JSON",
		Short: "End a Task state as succeeded with the given output",
		Long: `Skip a Task state of a running execution: a task that runs is cancelled (its
result, if it comes, is dropped), a retry's wait is cancelled, a held state
is entered; the state ends as succeeded with --output as its output (Retry,
Catch, ResultSelector, ResultPath and OutputPath do not apply) and the
execution goes on to its next state.

  stepwise skip arn:aws:states:us-east-1:123456789012:execution:nightly:run-1 --state Load --output '{"rows": 0}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context(), args[0]) },
	}
	c.flags.add(cmd)
	cmd.Flags().StringVar(&c.state, "state", "", "the Task state's name (required)")
	cmd.Flags().StringVar(&c.output, "output", "{}", "the state's output, JSON")
	return cmd
}

func (c *skipCommand) run(ctx context.Context, arn string) error {
	if err := requireArn(arn, false); err != nil {
		return err
	}
	if err := requireState(c.state); err != nil {
		return err
	}
	if !json.Valid([]byte(c.output)) {
		var v any
		err := json.Unmarshal([]byte(c.output), &v)
		return &UsageError{fmt.Sprintf("--output is not JSON: %v", err)}
	}
	return callStepwise(ctx, &c.flags, "SkipState", &awsjson.SkipStateInput{ExecutionArn: arn, State: c.state, Output: c.output}, nil)
}
