package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"stepwise/asl"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	"stepwise/internal/boundedfile"
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
in the words AWS uses. Hints follow on their own lines, indented: "did you
mean" for a field, a state type or a state name written in the wrong case
or misspelled, and where a misplaced field belongs. The errors such a
mistake hides (the states under a misspelled "States" or an unknown
"Type") are listed as well, after them. Malformed JSON is reported as
FILE:LINE:COLUMN: message, with the line and a caret under the column.
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
	// Hints are what the author probably meant; never in AWS's response.
	Hints []string `json:"hints,omitempty"`
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
		def, err := boundedfile.Read(context.Background(), file, maxDefinitionFile)
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
		hints := asl.Hints(def, diags)
		for i, d := range diags {
			if c.format == "text" {
				c.printDiagnostic(file, def, d, hints[i])
			}
			resp.Diagnostics = append(resp.Diagnostics, validateDiagnostic{
				Severity: string(d.Severity), Code: d.Code, Message: d.Message, Location: d.Location, Hints: hints[i],
			})
		}
		if c.format == "text" {
			c.printHidden(file, def, diags)
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

// printDiagnostic prints one diagnostic and its hints. Malformed JSON is
// printed as FILE:LINE:COLUMN: message, with the line and a caret under
// the column, rather than with the whole text AWS quotes.
func (c *validateCommand) printDiagnostic(file string, def []byte, d asl.Diagnostic, hints []string) {
	if d.Code == asl.CodeInvalidJSON {
		if se, ok := asl.JSONSyntaxError(def); ok {
			fmt.Fprintf(c.Out, "%s:%d:%d: %s %s: %s\n", file, se.Line, se.Column, d.Severity, d.Code, se.Message)
			text, caret := caretExcerpt(se.LineText, se.Column)
			fmt.Fprintf(c.Out, "    %s\n    %s\n", text, caret)
			return
		}
	}
	fmt.Fprintf(c.Out, "%s: %s %s %s: %s\n", file, d.Severity, d.Code, locationOrRoot(d.Location), d.Message)
	for _, h := range hints {
		fmt.Fprintf(c.Out, "    hint: %s\n", h)
	}
}

// printHidden lists the errors that the definition's mistakes hid and
// that the hints' corrections bring out: the states under a misspelled
// "States" or under an unknown "Type" are not looked at otherwise.
func (c *validateCommand) printHidden(file string, def []byte, diags []asl.Diagnostic) {
	seen := map[asl.Diagnostic]bool{}
	for _, d := range diags {
		seen[d] = true
	}
	header := false
	// Each round of corrections can bring out more errors, deeper down; a
	// few rounds suffice for the nesting definitions have in practice.
	for range maxHiddenRounds {
		next, ok := asl.Corrected(def, diags)
		if !ok {
			return
		}
		def, diags = next, asl.Validate(next, asl.Options{Type: c.typ})
		var hidden []asl.Diagnostic
		for _, d := range diags {
			if !seen[d] {
				seen[d] = true
				hidden = append(hidden, d)
			}
		}
		hints := asl.Hints(def, hidden)
		for i, d := range hidden {
			if !header {
				fmt.Fprintf(c.Out, "%s: once the hints above are followed, these errors remain:\n", file)
				header = true
			}
			c.printDiagnostic(file, def, d, hints[i])
		}
	}
}

// maxHiddenRounds bounds the rounds of corrections printHidden makes.
const maxHiddenRounds = 8

// caretMaxWidth is how much of a long line the caret excerpt shows.
const caretMaxWidth = 100

// caretExcerpt returns the line (or, when long, the part of it around the
// column, with "..." where it is cut) and a line with a caret under the
// column. Tabs are kept in the caret line so that it lines up.
func caretExcerpt(line string, column int) (string, string) {
	runes := []rune(line)
	col := column - 1
	if col > len(runes) {
		col = len(runes)
	}
	start, end := 0, len(runes)
	prefix, suffix := "", ""
	if len(runes) > caretMaxWidth {
		start = max(0, col-caretMaxWidth/2)
		end = min(len(runes), start+caretMaxWidth)
		start = max(0, end-caretMaxWidth)
		if start > 0 {
			prefix = "..."
		}
		if end < len(runes) {
			suffix = "..."
		}
	}
	var caret strings.Builder
	caret.WriteString(strings.Repeat(" ", len(prefix)))
	for _, r := range runes[start:col] {
		if r == '\t' {
			caret.WriteByte('\t')
		} else {
			caret.WriteByte(' ')
		}
	}
	caret.WriteByte('^')
	return prefix + string(runes[start:end]) + suffix, caret.String()
}
