package cli

import (
	"github.com/spf13/cobra"
)

type resumeCommand struct {
	*CommandBase
	flags operatorFlags
}

func (c *resumeCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "resume EXECUTION_ARN",
		Short: "Resume a suspended execution",
		Long: `Resume a suspended execution: the states it waited to enter are entered
now (but those held, which wait for their release).

  stepwise resume arn:aws:states:us-east-1:123456789012:execution:nightly:run-1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExecutionControl(cmd.Context(), &c.flags, args[0], "ResumeExecution")
		},
	}
	c.flags.add(cmd)
	return cmd
}
