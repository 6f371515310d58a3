package cli

import (
	"github.com/spf13/cobra"
)

type releaseCommand struct {
	*CommandBase
}

func (c *releaseCommand) command() *cobra.Command {
	h := &holdCommand{CommandBase: c.CommandBase}
	cmd := &cobra.Command{
		Use:   "release ARN --state NAME",
		Short: "Release a held state of an execution, or of every execution of a state machine",
		Long: `Release a state that hold held: the execution's frames waiting before it enter it
now. Of a state machine's ARN, its hold is removed (executions started from
now on do not wait) and every running execution of it is released. Prints
the executions released.

  stepwise release arn:aws:states:us-east-1:123456789012:execution:nightly:run-1 --state Load`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return h.run(cmd.Context(), args[0], "ReleaseState") },
	}
	h.flags.add(cmd)
	cmd.Flags().StringVar(&h.state, "state", "", "the state's name (required)")
	return cmd
}
