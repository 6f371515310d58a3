// Package dataflow implements the JSONPath-mode input and output processing
// of a state:
//
//	raw input ─► InputPath ─► Parameters ─► (task) ─► ResultSelector ─► ResultPath ─► OutputPath ─► output
//	                                                                     ▲
//	raw input ───────────────────────────────────────────────────────────┘
//
// Each step is a small function over immutable values; the interpreter
// strings them together per state type. Failures are *failure.Failure
// values with the cause AWS gives (without the "An error occurred while
// executing the state ..." prefix, which the interpreter adds).
package dataflow

import (
	"errors"

	"stepwise/asl"
	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/failure"
	"stepwise/jsonvalue"
)

// DefaultPayloadLimit is the largest state input or output, in UTF-8 bytes
// of its serialized form: 256 KiB.
const DefaultPayloadLimit = 256 * 1024

// Select applies an InputPath or OutputPath field to value: absent keeps the
// value, null gives {}, and a path selects from it.
func Select(pf *asl.PathField, value any, env *jsonpath.Env) (any, error) {
	if pf == nil {
		return value, nil
	}
	if pf.Null {
		return jsonvalue.NewObject(0), nil
	}
	e := *env
	e.Input = value
	v, err := pf.Path.Eval(&e)
	if err != nil {
		return nil, InvalidPath(pf.Path, err)
	}
	return v, nil
}

// InvalidPath is the failure for a path (InputPath, OutputPath, ItemsPath,
// TimeoutSecondsPath, ...) that selects nothing.
func InvalidPath(p *jsonpath.Path, err error) error {
	var f *failure.Failure
	if errors.As(err, &f) {
		return f
	}
	return failure.Newf(failure.Runtime,
		"Invalid path '%s' : No results for path: %s", p.String(), p.Normalized())
}

// Template evaluates a payload template (Parameters, ResultSelector,
// ItemSelector) against value; a nil template keeps the value.
func Template(t *payload.Template, value any, env *jsonpath.Env) (any, error) {
	if t == nil {
		return value, nil
	}
	e := *env
	e.Input = value
	return t.Eval(&e)
}

// Merge applies a ResultPath field: absent gives the result, null keeps the
// raw input, and a path places the result inside the raw input.
func Merge(pf *asl.PathField, rawInput, result any) (any, error) {
	if pf == nil {
		return result, nil
	}
	if pf.Null {
		return rawInput, nil
	}
	v, err := pf.Path.Set(rawInput, result)
	if err != nil {
		var f *failure.Failure
		if errors.As(err, &f) {
			return nil, f
		}
		return nil, failure.Newf(failure.Runtime,
			"Unable to apply ResultPath '%s' to input '%s': %v", pf.Path.String(), jsonvalue.String(rawInput), err)
	}
	return v, nil
}

// Size returns the size in bytes of the serialized value.
func Size(v any) int { return len(jsonvalue.Marshal(v)) }
