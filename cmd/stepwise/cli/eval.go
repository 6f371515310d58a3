package cli

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"stepwise/asl/intrinsic"
	"stepwise/asl/jsonata"
	"stepwise/asl/jsonatafn"
	"stepwise/asl/jsonpath"
	"stepwise/failure"
	"stepwise/internal/boundedfile"
	"stepwise/jsonvalue"
)

type evalCommand struct {
	*CommandBase
	jsonata   string
	jsonpath  string
	intrinsic string
	input     string
	inputFile string
	vars      []string
}

func (c *evalCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval (--jsonata EXPR | --jsonpath PATH | --intrinsic CALL)",
		Short: "Evaluate a JSONata expression, a JSONPath or an intrinsic function against an input",
		Long: `Evaluate one expression against an input and print one JSON object:
{"value": <result>}, {} when a JSONata result is undefined, or
{"error": "<code>", "message": "..."} with exit status 1 when it fails.

--jsonata takes a JSONata expression, bare or written "{% ... %}". The input
is bound as $ and as $states.input, the Step Functions functions ($partition,
$range, $hash, $random, $uuid, $parse) are available, and errors carry
JSONata's codes (S0201, T2001, ...); the Step Functions functions fail with
States.QueryEvaluationError.

--jsonpath takes a path such as $.a[0] and --intrinsic a call such as
States.Format('{}', $.a); a path that selects nothing or a failing call is
States.Runtime, a malformed one InvalidDefinition.

--var NAME=JSON binds the variable $NAME in all three. Without --input or
--input-file, JSONata has no input ($ is undefined) and JSONPath reads {}.
Exit status 2 is bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.run() },
	}
	f := cmd.Flags()
	f.StringVar(&c.jsonata, "jsonata", "", "JSONata expression")
	f.StringVar(&c.jsonpath, "jsonpath", "", "JSONPath, as in a JSONPath-mode state")
	f.StringVar(&c.intrinsic, "intrinsic", "", "intrinsic function call, such as States.Format('{}', $.a)")
	f.StringVar(&c.input, "input", "", "input as JSON text")
	f.StringVar(&c.inputFile, "input-file", "", "read the input from this file")
	f.StringArrayVar(&c.vars, "var", nil, "bind the variable $NAME to a JSON value: NAME=JSON (repeatable)")
	return cmd
}

// evalResult is what eval prints; Value is set only when defined.
type evalResult struct {
	value   any
	defined bool
	code    string
	message string
}

func (c *evalCommand) run() error {
	set := 0
	for _, s := range []string{c.jsonata, c.jsonpath, c.intrinsic} {
		if s != "" {
			set++
		}
	}
	if set != 1 {
		return &UsageError{"give exactly one of --jsonata, --jsonpath, --intrinsic"}
	}
	if c.input != "" && c.inputFile != "" {
		return &UsageError{"use --input or --input-file, not both"}
	}
	input, hasInput, err := c.readInput()
	if err != nil {
		return err
	}
	vars, err := parseVars(c.vars)
	if err != nil {
		return err
	}
	var res evalResult
	switch {
	case c.jsonata != "":
		res = evalJSONata(c.jsonata, input, hasInput, vars)
	case c.jsonpath != "":
		if !hasInput {
			input = jsonvalue.NewObject(0)
		}
		res = evalJSONPath(c.jsonpath, input, vars)
	default:
		if !hasInput {
			input = jsonvalue.NewObject(0)
		}
		res = evalIntrinsic(c.intrinsic, input, vars)
	}
	out := jsonvalue.NewObject(2)
	switch {
	case res.code != "":
		out.Set("error", res.code)
		out.Set("message", res.message)
	case res.defined:
		out.Set("value", res.value)
	}
	if _, err := c.Out.Write(append(jsonvalue.Marshal(out), '\n')); err != nil {
		return err
	}
	if res.code != "" {
		return &ExitError{Code: 1}
	}
	return nil
}

func (c *evalCommand) readInput() (any, bool, error) {
	text := c.input
	if c.inputFile != "" {
		b, err := boundedfile.Read(context.Background(), c.inputFile, maxDataFile)
		if err != nil {
			return nil, false, &UsageError{err.Error()}
		}
		text = string(b)
	} else if text == "" {
		return nil, false, nil
	}
	v, err := jsonvalue.ParseString(text)
	if err != nil {
		return nil, false, &UsageError{"invalid input: " + err.Error()}
	}
	return v, true, nil
}

// parseVars reads NAME=JSON bindings; a later binding of a name wins.
func parseVars(specs []string) (map[string]any, error) {
	vars := make(map[string]any, len(specs))
	for _, s := range specs {
		name, text, ok := strings.Cut(s, "=")
		name = strings.TrimPrefix(name, "$")
		if !ok || name == "" {
			return nil, &UsageError{"--var wants NAME=JSON, got " + s}
		}
		v, err := jsonvalue.ParseString(text)
		if err != nil {
			return nil, &UsageError{"--var " + name + ": invalid JSON: " + err.Error()}
		}
		vars[name] = v
	}
	return vars, nil
}

func evalJSONata(src string, input any, hasInput bool, vars map[string]any) evalResult {
	if t := strings.TrimSpace(src); strings.HasPrefix(t, "{%") && strings.HasSuffix(t, "%}") && len(t) >= 4 {
		src = t[2 : len(t)-2]
	}
	e, err := jsonata.Compile(src)
	if err != nil {
		return errorResult(err)
	}
	states := jsonvalue.NewObject(1)
	if hasInput {
		states.Set("input", input)
	}
	bound := map[string]any{"states": states}
	for k, v := range vars {
		bound[k] = v
	}
	v, ok, err := e.EvalWith(input, hasInput, &jsonata.Options{
		Vars:  bound,
		Funcs: jsonatafn.Funcs(jsonatafn.Env{}),
	})
	if err != nil {
		return errorResult(err)
	}
	return evalResult{value: v, defined: ok}
}

func pathEnv(input any, vars map[string]any) *jsonpath.Env {
	return &jsonpath.Env{
		Input:   input,
		Context: jsonvalue.NewObject(0),
		Vars: func(name string) (any, bool) {
			v, ok := vars[name]
			return v, ok
		},
	}
}

func evalJSONPath(src string, input any, vars map[string]any) evalResult {
	p, err := jsonpath.Compile(src)
	if err != nil {
		return errorResult(err)
	}
	v, err := p.Eval(pathEnv(input, vars))
	if err != nil {
		return errorResult(err)
	}
	return evalResult{value: v, defined: true}
}

func evalIntrinsic(src string, input any, vars map[string]any) evalResult {
	call, err := intrinsic.Parse(src)
	if err != nil {
		return errorResult(err)
	}
	v, err := call.Eval(pathEnv(input, vars))
	if err != nil {
		return errorResult(err)
	}
	return evalResult{value: v, defined: true}
}

// errorResult names an evaluation error by the code its kind carries.
func errorResult(err error) evalResult {
	var (
		je *jsonata.Error
		fe *jsonatafn.Error
		f  *failure.Failure
		nf *jsonpath.NotFoundError
		ps *jsonpath.SyntaxError
		is *intrinsic.SyntaxError
	)
	switch {
	case errors.As(err, &je):
		return evalResult{code: je.Code, message: je.Message}
	case errors.As(err, &fe):
		return evalResult{code: failure.QueryEvaluationError, message: fe.Message}
	case errors.As(err, &f):
		return evalResult{code: f.Name, message: f.Cause}
	case errors.As(err, &nf):
		return evalResult{code: failure.Runtime, message: nf.Error()}
	case errors.As(err, &ps), errors.As(err, &is):
		return evalResult{code: "InvalidDefinition", message: err.Error()}
	}
	return evalResult{code: failure.Runtime, message: err.Error()}
}
