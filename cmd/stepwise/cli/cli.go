// Package cli holds the stepwise command line: one file per subcommand,
// each embedding CommandBase so tests can capture what it prints.
package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"stepwise/config"
)

// CommandBase is embedded by every subcommand.
type CommandBase struct {
	Logger *slog.Logger
	Out    io.Writer
	Err    io.Writer
	// LookupEnv reads the environment.
	LookupEnv func(name string) (string, bool)
}

// ExitError ends the program with Code after printing nothing more.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// UsageError is bad usage: exit status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// CLI is the stepwise program.
type CLI struct {
	Out io.Writer
	Err io.Writer
	// LookupEnv reads the environment (os.LookupEnv when nil): the
	// STEPWISE_ variables of serve's flags, Step Functions Local's.
	LookupEnv func(name string) (string, bool)
}

// Execute runs the program with args (without the program name) and returns
// the exit status.
func (c *CLI) Execute(args []string) int {
	base := &CommandBase{
		Logger:    slog.New(slog.NewTextHandler(c.Err, nil)),
		Out:       c.Out,
		Err:       c.Err,
		LookupEnv: c.LookupEnv,
	}
	if base.LookupEnv == nil {
		base.LookupEnv = os.LookupEnv
	}
	root := &cobra.Command{
		Use:           "stepwise",
		Short:         "A self-hosted engine for the Amazon States Language",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetOut(c.Out)
	root.SetErr(c.Err)
	serverLog := config.DefaultServerLog()
	root.PersistentFlags().StringVar(&serverLog.Format, "log-format", serverLog.Format, "format of the log lines on stderr: text or json")
	root.PersistentFlags().StringVar(&serverLog.Level, "log-level", serverLog.Level, "least level of the log lines on stderr: debug (adds a line per request), info, warn or error")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		// The flags the command line left are read from their
		// variables, the global ones (--log-level) included.
		if cmd.Annotations[envAnnotation] != "" {
			if err := applyEnv(cmd.Flags(), base.LookupEnv); err != nil {
				return err
			}
		}
		log, err := newLogger(c.Err, serverLog)
		if err != nil {
			return &UsageError{err.Error()}
		}
		base.Logger = log
		return nil
	}
	root.AddCommand(
		(&runCommand{CommandBase: base}).command(),
		(&validateCommand{CommandBase: base}).command(),
		(&serveCommand{CommandBase: base}).command(),
		(&benchCommand{CommandBase: base}).command(),
		(&evalCommand{CommandBase: base}).command(),
		(&backupCommand{CommandBase: base}).command(),
		(&testCommand{CommandBase: base}).command(),
		(&replayCommand{CommandBase: base}).command(),
		(&deployCommand{CommandBase: base}).command(),
		(&clockCommand{CommandBase: base}).command(),
		(&importCommand{CommandBase: base}).command(),
		(&holdNextCommand{CommandBase: base}).command(),
		(&holdCommand{CommandBase: base}).command(),
		(&releaseCommand{CommandBase: base}).command(),
		(&suspendCommand{CommandBase: base}).command(),
		(&resumeCommand{CommandBase: base}).command(),
		(&skipCommand{CommandBase: base}).command(),
		(&killCommand{CommandBase: base}).command(),
		(&actionsCommand{CommandBase: base}).command(),
		(&rerunCommand{CommandBase: base}).command(),
		(&healthCommand{CommandBase: base}).command(),
	)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	fmt.Fprintln(c.Err, "stepwise:", err)
	var usage *UsageError
	if errors.As(err, &usage) || isCobraUsage(err) {
		return 2
	}
	return 1
}

// newLogger makes the server's logger: text or JSON lines on w, from the
// level given up.
func newLogger(w io.Writer, l config.ServerLog) (*slog.Logger, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	level, _ := l.SlogLevel()
	opts := &slog.HandlerOptions{Level: level}
	if l.Format == config.LogFormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// isCobraUsage reports whether cobra rejected the command line.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument", "flag needs an argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
