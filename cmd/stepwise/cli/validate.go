package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"stepwise/asl"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	"stepwise/interp"
)

type validateCommand struct {
	*CommandBase
	format string
	typ    string
	tags   []string
	aws    bool
}

func (c *validateCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Validate state machine definitions",
		Long: `Validate state machine definitions and print one line per diagnostic:
FILE: SEVERITY CODE LOCATION: message
With --format json, print the ValidateStateMachineDefinition response for
each file instead. Exit status 1 if any definition has an error.

--tag KEY=VALUE gives the state machine's tags: a failure policy tag
(stepwise:policy/<state> = finish-running and/or retry-failed-items) must
name a state it applies to. With --aws, each policy is also a warning:
the state fails unlike it would on AWS.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(args) },
	}
	cmd.Flags().StringVar(&c.format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&c.typ, "type", "STANDARD", "state machine type: STANDARD or EXPRESS")
	cmd.Flags().StringArrayVar(&c.tags, "tag", nil, "a tag of the state machine, KEY=VALUE (repeatable): its failure policies (stepwise:policy/<state>) are checked against the definition")
	cmd.Flags().BoolVar(&c.aws, "aws", false, "warn of what would run differently on AWS: the failure policies the tags set")
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
				diags = append(diags, c.policyDiagnostics(m)...)
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

// policyDiagnostics checks the failure policies the --tag flags set
// against the definition: each must name a state it applies to (an error
// otherwise); with --aws each is a warning too, as AWS has no such thing.
func (c *validateCommand) policyDiagnostics(m *asl.StateMachine) []asl.Diagnostic {
	if len(c.tags) == 0 {
		return nil
	}
	tags := map[string]string{}
	for _, t := range c.tags {
		k, v, _ := strings.Cut(t, "=")
		tags[k] = v
	}
	var out []asl.Diagnostic
	ps, err := interp.PoliciesFromTags(tags)
	if err != nil {
		return []asl.Diagnostic{{Severity: asl.SeverityError, Code: "INVALID_POLICY", Message: err.Error()}}
	}
	states := map[string]*asl.State{}
	var walk func(*asl.StateMachine)
	walk = func(sm *asl.StateMachine) {
		for _, name := range sm.Order {
			s := sm.States[name]
			states[name] = s
			if s.ItemProcessor != nil {
				walk(s.ItemProcessor)
			}
			for _, b := range s.Branches {
				walk(b)
			}
		}
	}
	walk(m)
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		s := states[name]
		for _, p := range ps[name] {
			loc := "/States/" + name
			switch {
			case s == nil:
				out = append(out, asl.Diagnostic{Severity: asl.SeverityError, Code: "INVALID_POLICY",
					Message: fmt.Sprintf("the tag %s%s names no state of the definition", interp.PolicyTagPrefix, name)})
				continue
			case p == interp.PolicyFinishRunning && s.Type != asl.TypeParallel && s.Type != asl.TypeMap:
				out = append(out, asl.Diagnostic{Severity: asl.SeverityError, Code: "INVALID_POLICY", Location: loc,
					Message: fmt.Sprintf("%s applies to Parallel and Map states; %s is a %s state", p, name, s.Type)})
				continue
			case p == interp.PolicyRetryFailedItems && s.Type != asl.TypeMap:
				out = append(out, asl.Diagnostic{Severity: asl.SeverityError, Code: "INVALID_POLICY", Location: loc,
					Message: fmt.Sprintf("%s applies to Map states; %s is a %s state", p, name, s.Type)})
				continue
			}
			if c.aws {
				why := "when a branch or iteration fails, AWS stops the others running at once"
				if p == interp.PolicyRetryFailedItems {
					why = "when its Retry fires, AWS runs every item again"
				}
				out = append(out, asl.Diagnostic{Severity: asl.SeverityWarning, Code: "NOT_AWS", Location: loc,
					Message: fmt.Sprintf("%s runs with the failure policy %s, which AWS does not have: %s", name, p, why)})
			}
		}
	}
	return out
}
