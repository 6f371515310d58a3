package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"stepwise/convert/jp1"
	"stepwise/internal/boundedfile"
)

type importCommand struct {
	*CommandBase
	out      string
	timeZone string
	stack    string
}

func (c *importCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import jp1 FILE --out DIR",
		Short: "Convert JP1/AJS3 unit definitions into an app that deploys",
		Long: `Convert JP1/AJS3 unit definitions (what ajsprint -a prints) into a SAM
app in DIR: template.yaml, statemachine/*.asl.json (one a job net),
functions/runner.py (runs the jobs' command lines), calendars/*.txt (the
job groups' closed days, for serve --calendar) and report.md (every
parameter not carried over, and why). Deploy it with stepwise deploy
DIR/template.yaml.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context(), args) },
	}
	cmd.Flags().StringVar(&c.out, "out", "", "the folder to write the app into (required)")
	cmd.Flags().StringVar(&c.timeZone, "time-zone", jp1.DefaultTimeZone, "the zone of the schedules' times")
	cmd.Flags().StringVar(&c.stack, "name", "", "the app's name: its schedule group and runner function (default: the file's name)")
	return cmd
}

func (c *importCommand) run(ctx context.Context, args []string) error {
	if len(args) != 2 || args[0] != "jp1" {
		return &UsageError{Msg: "usage: stepwise import jp1 FILE --out DIR"}
	}
	if c.out == "" {
		return &UsageError{Msg: "import: --out DIR is required"}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	src, err := boundedfile.Read(ctx, args[1], 16<<20)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	units, err := jp1.Parse(src)
	if err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	stack := c.stack
	if stack == "" {
		base := filepath.Base(args[1])
		stack = base[:len(base)-len(filepath.Ext(base))]
	}
	app, err := jp1.Convert(units, jp1.Options{TimeZone: c.timeZone, Stack: stack})
	if err != nil {
		return fmt.Errorf("%s: %w", args[1], err)
	}
	paths := make([]string, 0, len(app.Files))
	for p := range app.Files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		full := filepath.Join(c.out, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		if err := os.WriteFile(full, app.Files[p], 0o644); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		fmt.Fprintf(c.Out, "wrote %s\n", full)
	}
	fmt.Fprintf(c.Out, "%d state machines, %d parameters not carried over (see report.md)\n", len(app.Nets), len(app.Findings))
	return nil
}
