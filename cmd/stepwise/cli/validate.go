package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"stepwise/asl"
	"stepwise/deploy"
	"stepwise/deploy/cfn"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	"stepwise/internal/boundedfile"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/workflowtest"
)

type validateCommand struct {
	*CommandBase
	format string
	typ    string
	tags   []string
	aws    bool

	substitutions []string
	templates     []string
	subs          map[string]any
	enc           *json.Encoder
}

func (c *validateCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate [FILE...] [--template TEMPLATE...]",
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

A FILE whose name ends in .yaml or .yml is read as YAML. --substitutions
gives the values of the definition's ${Name} placeholders, as a SAM
template's DefinitionSubstitutions does: a JSON or YAML file of names to
values, or NAME=VALUE. A placeholder left without a value is named:
an error when the definition does not validate, a warning otherwise.
--template validates each state machine of a CloudFormation or SAM
template (its Definition, DefinitionString or DefinitionUri file), named
TEMPLATE#LogicalId, with its DefinitionSubstitutions: a Ref or Fn::GetAtt
to a resource gives the name or ARN a deploy would give it.

--tag KEY=VALUE gives the state machine's tags: a failure policy tag
(stepwise:policy/<state> = finish-running and/or retry-failed-items) must
name a state it applies to. With --aws, each policy is also a warning:
the state fails unlike it would on AWS.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(args) },
	}
	cmd.Flags().StringVar(&c.format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&c.typ, "type", "STANDARD", "state machine type: STANDARD or EXPRESS")
	cmd.Flags().StringArrayVar(&c.tags, "tag", nil, "a tag of the state machine, KEY=VALUE (repeatable): its failure policies (stepwise:policy/<state>) are checked against the definition")
	cmd.Flags().StringArrayVar(&c.substitutions, "substitutions", nil, "values of the definition's ${Name} placeholders, as DefinitionSubstitutions gives them: a JSON or YAML file of names to values, or NAME=VALUE (repeatable)")
	cmd.Flags().StringArrayVar(&c.templates, "template", nil, "a CloudFormation or SAM template (JSON or YAML) whose state machines to validate, each with its DefinitionSubstitutions (repeatable)")
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
		why := ""
		if u.Why != "" {
			why = " (" + u.Why + ")"
		}
		fmt.Fprintf(c.Out, "%s: WARNING UNSERVED_RESOURCE %s: no integration runs %s%s: %s\n", file, u.Location, u.Resource, why, u.Consequence())
	}
}

func (c *validateCommand) run(files []string) error {
	if c.format != "text" && c.format != "json" {
		return &UsageError{"--format must be text or json"}
	}
	if c.typ != "STANDARD" && c.typ != "EXPRESS" {
		return &UsageError{"--type must be STANDARD or EXPRESS"}
	}
	if len(files) == 0 && len(c.templates) == 0 {
		return &UsageError{"validate needs a definition FILE or a --template FILE"}
	}
	subs, err := c.readSubstitutions()
	if err != nil {
		return err
	}
	c.subs = subs
	ctx := context.Background()
	failed := false
	c.enc = json.NewEncoder(c.Out)
	c.enc.SetEscapeHTML(false)
	for _, file := range files {
		src, err := readValidateDefinition(ctx, file)
		if err != nil {
			return &UsageError{err.Error()}
		}
		bad, err := c.validateOne(src)
		if err != nil {
			return err
		}
		failed = failed || bad
	}
	for _, tpl := range c.templates {
		bad, err := c.validateTemplate(ctx, tpl)
		if err != nil {
			return err
		}
		failed = failed || bad
	}
	if failed {
		return &ExitError{Code: 1}
	}
	return nil
}

// validateSource is one definition to validate: label names it in the
// output (the file, or TEMPLATE#LogicalId); def is its JSON text; raw
// the file's text as written, where a placeholder's line is looked for
// (nil: none); problem, when set, is why there is no definition (YAML
// that does not parse, a template's state machine that cannot be read).
type validateSource struct {
	label   string
	def     []byte
	raw     []byte
	rawName string // the file raw is, when not label
	problem *asl.Diagnostic
	// fromTemplate: the placeholders left are those the template's
	// DefinitionSubstitutions do not give.
	fromTemplate bool
}

// Codes of the diagnostics validate adds to AWS's.
const (
	codeMissingSubstitution = "MISSING_SUBSTITUTION"
	codeInvalidYAML         = "INVALID_YAML"
	codeInvalidDefinition   = "INVALID_DEFINITION"
)

// readValidateDefinition reads a definition file: JSON, or YAML (as
// stepwise test reads it) when its name ends in .yaml or .yml.
func readValidateDefinition(ctx context.Context, file string) (*validateSource, error) {
	data, err := boundedfile.Read(ctx, file, maxDefinitionFile)
	if err != nil {
		return nil, err
	}
	src := &validateSource{label: file, def: data, raw: data}
	if ext := strings.ToLower(filepath.Ext(file)); ext == ".yaml" || ext == ".yml" {
		v, err := workflowtest.ParseYAML(data)
		if err != nil {
			src.problem = &asl.Diagnostic{Severity: asl.SeverityError, Code: codeInvalidYAML, Message: err.Error()}
			return src, nil
		}
		src.def = jsonvalue.Marshal(v)
	}
	return src, nil
}

// validateOne validates one definition and prints what it found; it says
// whether the definition has an error.
func (c *validateCommand) validateOne(src *validateSource) (bool, error) {
	file, def := src.label, src.def
	var diags []asl.Diagnostic
	var left []string
	if src.problem != nil {
		diags = []asl.Diagnostic{*src.problem}
	} else {
		text, err := deploy.SubstituteDefinition(string(def), c.subs)
		if err != nil {
			return false, &UsageError{"--substitutions: " + strings.TrimPrefix(err.Error(), "Properties.DefinitionSubstitutions: ")}
		}
		def = []byte(text)
		left = deploy.Placeholders(text)
		diags = asl.Validate(def, asl.Options{Type: c.typ})
		if !asl.HasErrors(diags) {
			if m, _ := asl.ParseWith(def, asl.Options{Type: c.typ}); m != nil {
				diags = append(diags, awssdk.Diagnostics(m)...)
				diags = append(diags, c.policyDiagnostics(m)...)
			}
		}
	}
	// A placeholder left is an error when the definition does not
	// validate (it is most likely why), a warning otherwise.
	severity := asl.SeverityWarning
	if asl.HasErrors(diags) {
		severity = asl.SeverityError
	}
	var missing []asl.Diagnostic
	for _, name := range left {
		msg := fmt.Sprintf("${%s} has no value; give it with --substitutions %s=VALUE", name, name)
		if src.fromTemplate {
			msg = fmt.Sprintf("${%s} has no value: the template's DefinitionSubstitutions do not give it; give it with --substitutions %s=VALUE", name, name)
		}
		missing = append(missing, asl.Diagnostic{Severity: severity, Code: codeMissingSubstitution, Message: msg})
	}
	resp := validateResponse{File: file, Result: "OK", Diagnostics: []validateDiagnostic{}}
	if asl.HasErrors(diags) {
		resp.Result = "FAIL"
	}
	for i, d := range missing {
		if c.format == "text" {
			line, col, ok := placeholderAt(src.raw, left[i])
			switch {
			case ok && src.rawName == "":
				fmt.Fprintf(c.Out, "%s:%d:%d: %s %s: %s\n", file, line, col, d.Severity, d.Code, d.Message)
			case ok:
				fmt.Fprintf(c.Out, "%s: %s %s: %s (%s:%d:%d)\n", file, d.Severity, d.Code, d.Message, src.rawName, line, col)
			default:
				fmt.Fprintf(c.Out, "%s: %s %s: %s\n", file, d.Severity, d.Code, d.Message)
			}
		}
		resp.Diagnostics = append(resp.Diagnostics, validateDiagnostic{Severity: string(d.Severity), Code: d.Code, Message: d.Message})
	}
	var hints [][]string
	if src.problem == nil {
		hints = asl.Hints(def, diags)
	} else {
		hints = make([][]string, len(diags))
	}
	for i, d := range diags {
		if c.format == "text" {
			c.printDiagnostic(file, def, d, hints[i])
		}
		resp.Diagnostics = append(resp.Diagnostics, validateDiagnostic{
			Severity: string(d.Severity), Code: d.Code, Message: d.Message, Location: d.Location, Hints: hints[i],
		})
	}
	if c.format == "text" && src.problem == nil {
		c.printHidden(file, def, diags)
	}
	if c.format == "text" && !asl.HasErrors(diags) {
		c.warnUnserved(file, def)
	}
	if c.format == "json" {
		if err := c.enc.Encode(resp); err != nil {
			return false, err
		}
	}
	return asl.HasErrors(diags), nil
}

// placeholderAt is the line and column where ${name} first comes in a
// file's text.
func placeholderAt(raw []byte, name string) (int, int, bool) {
	i := bytes.Index(raw, []byte("${"+name+"}"))
	if i < 0 {
		return 0, 0, false
	}
	line := 1 + bytes.Count(raw[:i], []byte("\n"))
	col := 1 + utf8.RuneCount(raw[bytes.LastIndexByte(raw[:i], '\n')+1:i])
	return line, col, true
}

// validateTemplate validates each state machine of a CloudFormation or
// SAM template, named TEMPLATE#LogicalId, its definition as a deploy
// would make it (deploy.PreviewStateMachines); it says whether one has
// an error.
func (c *validateCommand) validateTemplate(ctx context.Context, path string) (bool, error) {
	data, err := boundedfile.Read(ctx, path, maxTemplateFile)
	if err != nil {
		return false, &UsageError{"--template: " + err.Error()}
	}
	t, err := cfn.Parse(data)
	if err != nil {
		return false, &UsageError{fmt.Sprintf("--template %s: %v", path, err)}
	}
	base := filepath.Dir(path)
	// Its AWS::Include files spliced in, as a deploy does.
	if t, err = t.Include(ctx, base); err != nil {
		return false, &UsageError{fmt.Sprintf("--template %s: %v", path, err)}
	}
	sms, err := deploy.PreviewStateMachines(ctx, t, deploy.Options{BaseDir: base})
	if err != nil {
		return false, &UsageError{fmt.Sprintf("--template %s: %v", path, err)}
	}
	if len(sms) == 0 {
		return false, &UsageError{fmt.Sprintf("--template %s: no AWS::StepFunctions::StateMachine or AWS::Serverless::StateMachine in it", path)}
	}
	failed := false
	for _, sm := range sms {
		src := &validateSource{label: path + "#" + sm.LogicalID, def: []byte(sm.Definition), fromTemplate: true}
		switch {
		case sm.Err != nil:
			src.problem = &asl.Diagnostic{Severity: asl.SeverityError, Code: codeInvalidDefinition, Message: sm.Err.Error()}
		case sm.From != "":
			full := sm.From
			if !filepath.IsAbs(full) {
				full = filepath.Join(base, full)
			}
			src.raw, _ = boundedfile.Read(ctx, full, maxDefinitionFile)
			src.rawName = full
		}
		bad, err := c.validateOne(src)
		if err != nil {
			return false, err
		}
		failed = failed || bad
	}
	return failed, nil
}

// readSubstitutions reads the --substitutions: each a file (a JSON or
// YAML object of names to values) or NAME=VALUE; a later one wins.
func (c *validateCommand) readSubstitutions() (map[string]any, error) {
	subs := map[string]any{}
	for _, s := range c.substitutions {
		if info, err := os.Stat(s); err == nil && !info.IsDir() || !strings.Contains(s, "=") {
			m, err := readSubstitutionsFile(s)
			if err != nil {
				return nil, &UsageError{"--substitutions " + s + ": " + err.Error()}
			}
			for k, v := range m {
				subs[k] = v
			}
			continue
		}
		k, v, _ := strings.Cut(s, "=")
		if k == "" {
			return nil, &UsageError{fmt.Sprintf("--substitutions %s: NAME=VALUE needs a name", s)}
		}
		subs[k] = v
	}
	return subs, nil
}

// readSubstitutionsFile reads a JSON or YAML object of names to values
// (strings, numbers, booleans), as a template's DefinitionSubstitutions
// gives them.
func readSubstitutionsFile(path string) (map[string]any, error) {
	data, err := boundedfile.Read(context.Background(), path, maxDefinitionFile)
	if err != nil {
		return nil, err
	}
	v, err := cfn.Decode(data)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("an object of names to values, got %s", cfn.TypeName(v))
	}
	for k, v := range m {
		switch v.(type) {
		case string, json.Number, bool:
		default:
			return nil, fmt.Errorf("%s: a value is a string, a number or a boolean, got %s", k, cfn.TypeName(v))
		}
	}
	return m, nil
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
