package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"stepwise/asl"
	"stepwise/integration"
	"stepwise/integration/awssdk"
)

type validateCommand struct {
	*CommandBase
	format string
	typ    string
}

func (c *validateCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Validate state machine definitions",
		Long: `Validate state machine definitions and print one line per diagnostic:
FILE: SEVERITY CODE LOCATION: message
With --format json, print the ValidateStateMachineDefinition response for
each file instead. Exit status 1 if any definition has an error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(args) },
	}
	cmd.Flags().StringVar(&c.format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&c.typ, "type", "STANDARD", "state machine type: STANDARD or EXPRESS")
	return cmd
}

type validateDiagnostic struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Location string `json:"location,omitempty"`
}

type validateResponse struct {
	File        string               `json:"file,omitempty"`
	Result      string               `json:"result"`
	Diagnostics []validateDiagnostic `json:"diagnostics"`
	Truncated   bool                 `json:"truncated"`
}

// warnUnserved says which Task states nothing would run: they would fail
// with States.TaskFailed.
func (c *validateCommand) warnUnserved(file string, def []byte) {
	m, _ := asl.ParseWith(def, asl.Options{Type: c.typ})
	for _, u := range integration.UnservedTasks(m) {
		fmt.Fprintf(c.Out, "%s: WARNING UNSERVED_RESOURCE %s: no integration runs %s: %s\n", file, u.Location, u.Resource, u.Consequence())
	}
}

func (c *validateCommand) run(files []string) error {
	if c.format != "text" && c.format != "json" {
		return &UsageError{"--format must be text or json"}
	}
	if c.typ != "STANDARD" && c.typ != "EXPRESS" {
		return &UsageError{"--type must be STANDARD or EXPRESS"}
	}
	failed := false
	enc := json.NewEncoder(c.Out)
	enc.SetEscapeHTML(false)
	for _, file := range files {
		def, err := os.ReadFile(file)
		if err != nil {
			return &UsageError{err.Error()}
		}
		diags := asl.Validate(def, asl.Options{Type: c.typ})
		if !asl.HasErrors(diags) {
			if m, _ := asl.ParseWith(def, asl.Options{Type: c.typ}); m != nil {
				diags = append(diags, awssdk.Diagnostics(m)...)
			}
		}
		resp := validateResponse{File: file, Result: "OK", Diagnostics: []validateDiagnostic{}}
		if asl.HasErrors(diags) {
			resp.Result = "FAIL"
			failed = true
		}
		for _, d := range diags {
			if c.format == "text" {
				fmt.Fprintf(c.Out, "%s: %s %s %s: %s\n", file, d.Severity, d.Code, locationOrRoot(d.Location), d.Message)
			}
			resp.Diagnostics = append(resp.Diagnostics, validateDiagnostic{
				Severity: string(d.Severity), Code: d.Code, Message: d.Message, Location: d.Location,
			})
		}
		if c.format == "text" && !asl.HasErrors(diags) {
			c.warnUnserved(file, def)
		}
		if c.format == "json" {
			if err := enc.Encode(resp); err != nil {
				return err
			}
		}
	}
	if failed {
		return &ExitError{Code: 1}
	}
	return nil
}
