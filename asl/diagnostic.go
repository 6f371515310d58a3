package asl

import (
	"fmt"
	"strings"
)

// Severity says whether a diagnostic makes a definition unusable.
type Severity string

const (
	SeverityError   Severity = "ERROR"
	SeverityWarning Severity = "WARNING"
)

// Diagnostic codes, as ValidateStateMachineDefinition returns them.
const (
	CodeInvalidJSON             = "INVALID_JSON_DESCRIPTION"
	CodeSchemaValidationFailed  = "SCHEMA_VALIDATION_FAILED"
	CodeMissingTransitionTarget = "MISSING_TRANSITION_TARGET"
	CodeMissingEndState         = "MISSING_END_STATE"
	CodeDuplicateStateName      = "DUPLICATE_STATE_NAME"
	CodeInvalidStateName        = "INVALID_STATE_NAME"
)

// DefaultMaxDiagnostics is the cap on the number of diagnostics collected
// when Options.MaxDiagnostics is zero. It matches the default maxResults of
// ValidateStateMachineDefinition.
const DefaultMaxDiagnostics = 100

// Diagnostic is one problem found in a definition.
type Diagnostic struct {
	Severity Severity
	Code     string
	Message  string
	// Location is where the problem is, in the form AWS uses: a JSON
	// pointer over field names ("/States/Wait/Next", "/" for the root) in
	// which array elements are written as "[i]" after the array's name
	// ("/States/P/Branches[0]/States/A") and names are not escaped. It is
	// empty when AWS gives no location (malformed JSON text aside, a
	// workflow with no terminal state).
	Location string
}

// String renders the diagnostic the way AWS renders it inside the message
// of an InvalidDefinition error: "CODE: message at location", with "null"
// for a missing location.
func (d Diagnostic) String() string {
	loc := d.Location
	if loc == "" {
		loc = "null"
	}
	return d.Code + ": " + d.Message + " at " + loc
}

// InvalidDefinitionMessage renders the ERROR diagnostics as the message of
// the InvalidDefinition error CreateStateMachine and UpdateStateMachine
// return: "Invalid State Machine Definition: '<d1>, <d2>'".
func InvalidDefinitionMessage(diags []Diagnostic) string {
	var b strings.Builder
	b.WriteString("Invalid State Machine Definition: '")
	n := 0
	for _, d := range diags {
		if d.Severity != SeverityError {
			continue
		}
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.String())
		n++
	}
	b.WriteString("'")
	return b.String()
}

// HasErrors reports whether diags holds an ERROR diagnostic.
func HasErrors(diags []Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// collector gathers diagnostics up to a cap, in the order they are found.
type collector struct {
	diags []Diagnostic
	max   int
}

func newCollector(max int) *collector {
	if max <= 0 {
		max = DefaultMaxDiagnostics
	}
	return &collector{max: max}
}

func (c *collector) add(d Diagnostic) {
	if len(c.diags) < c.max {
		c.diags = append(c.diags, d)
	}
}

// full reports whether the cap is reached; the parser stops looking then.
func (c *collector) full() bool { return len(c.diags) >= c.max }

func schemaError(loc, format string, args ...any) Diagnostic {
	return Diagnostic{Severity: SeverityError, Code: CodeSchemaValidationFailed, Message: fmt.Sprintf(format, args...), Location: loc}
}

// The constructors below give every message one place. Where the wording
// is AWS's (seen in recorded responses or error messages), it is kept
// exactly, trailing spaces included.

// errNotAnObjectDefinition: the definition is not a JSON object (AWS).
func errNotAnObjectDefinition() Diagnostic {
	return schemaError("", "Definition must be a valid JSON object")
}

// errRequired: required fields are absent (AWS).
func errRequired(loc string, fields ...string) Diagnostic {
	return schemaError(loc, "These fields are required: [%s]", strings.Join(fields, ", "))
}

// errNotSupported: a field that this object does not take (AWS).
func errNotSupported(loc, field string) Diagnostic {
	return schemaError(loc, "Field '%s' is not supported", field)
}

// errType: a field of the wrong JSON type (AWS for [STRING]; the other
// type names follow the same pattern).
func errType(loc, want string) Diagnostic {
	return schemaError(loc, "Expected value of type [%s]", want)
}

// errEnum: a value outside a fixed set (AWS, for QueryLanguage).
func errEnum(loc string, values ...string) Diagnostic {
	return schemaError(loc, "Value should be one of the following: [%s]", strings.Join(values, ", "))
}

// errStateType: an unknown state Type (AWS).
func errStateType(loc string) Diagnostic {
	return schemaError(loc, "The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map]")
}

// errMinimum / errMaximum: a number out of range (AWS words the minimum
// this way; the maximum follows it).
func errMinimum(loc, min string) Diagnostic {
	return schemaError(loc, "Minimum value is %s", min)
}

func errMaximum(loc, max string) Diagnostic {
	return schemaError(loc, "Maximum value is %s", max)
}

// errTimestamp: a literal timestamp that is not RFC 3339 (AWS).
func errTimestamp(loc string) Diagnostic {
	return schemaError(loc, "String does not match RFC3339 timestamp")
}

// errDowngrade: a state declares JSONPath in a JSONata machine (AWS).
func errDowngrade(loc string) Diagnostic {
	return schemaError(loc, "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine")
}

// errWrongLanguage: a field of the other query language (AWS).
func errWrongLanguage(loc string, lang QueryLanguage, field string) Diagnostic {
	other := JSONata
	if lang == JSONata {
		other = JSONPath
	}
	return schemaError(loc, "The QueryLanguage is set to '%s', but field '%s' is only supported for the '%s' QueryLanguage", lang, field, other)
}

// errExpress: a service integration pattern EXPRESS machines lack (AWS,
// including the trailing space).
func errExpress(loc, pattern string) Diagnostic {
	return schemaError(loc, "Express state machine does not support '%s' service integration ", pattern)
}

// errExpressActivity: an activity in an EXPRESS machine (AWS).
func errExpressActivity(loc string) Diagnostic {
	return schemaError(loc, "Express state machine does not support Activity ARN")
}

// errPayloadExpr: a ".$" value that is neither a path nor an intrinsic
// function call (AWS). Also used for ErrorPath and CausePath.
func errPayloadExpr(loc, field string) Diagnostic {
	return schemaError(loc, "The value for the field '%s' must be a valid JSONPath or a valid intrinsic function call", field)
}

// errPath: a field that must hold a JSONPath (wording modelled on the
// payload message above).
func errPath(loc, field string) Diagnostic {
	return schemaError(loc, "The value for the field '%s' must be a valid JSONPath", field)
}

// errResource: a Task resource that is not an ARN (AWS).
func errResource(loc, resource string) Diagnostic {
	return schemaError(loc, "The resource provided %s is not recognized. The value is not a valid resource ARN, or the resource is not available in this region.", resource)
}

// The messages below have no AWS wording that we could find.

func errExactlyOne(loc string, fields ...string) Diagnostic {
	return schemaError(loc, "Exactly one of these fields is required: [%s]", strings.Join(fields, ", "))
}

func errExclusive(loc string, fields ...string) Diagnostic {
	return schemaError(loc, "These fields cannot be specified together: [%s]", strings.Join(fields, ", "))
}

func errDollarDuplicate(loc, key string) Diagnostic {
	return schemaError(loc, "The fields '%s' and '%s.$' cannot both be specified", key, key)
}

func errEmpty(loc, field string) Diagnostic {
	return schemaError(loc, "The field '%s' must not be empty", field)
}

func errJSONataExpr(loc, field string) Diagnostic {
	return schemaError(loc, "The value for the field '%s' must be a JSONata expression enclosed in '{%%' and '%%}'", field)
}

func errJSONataSyntax(loc string, err error) Diagnostic {
	return schemaError(loc, "%s", err.Error())
}

func errStatesAllAlone(loc string) Diagnostic {
	return schemaError(loc, "States.ALL must appear alone in the ErrorEquals array")
}

func errStatesAllLast(loc, field string) Diagnostic {
	return schemaError(loc, "The %s element with States.ALL must be the last one", field)
}

func errHeartbeat(loc string) Diagnostic {
	return schemaError(loc, "The field 'HeartbeatSeconds' must be smaller than the field 'TimeoutSeconds'")
}

func errChoiceOperator(loc string) Diagnostic {
	return schemaError(loc, "A Choice Rule must have exactly one of the fields [And, Or, Not] or a comparison operator with 'Variable'")
}

func errChoiceOperators(loc string, ops ...string) Diagnostic {
	return schemaError(loc, "A Choice Rule may have only one comparison operator, found [%s]", strings.Join(ops, ", "))
}

func errIsOperand(loc string) Diagnostic {
	return errType(loc, "BOOLEAN")
}

// Transition and naming diagnostics (AWS).

func errMissingTarget(loc, target string) Diagnostic {
	return Diagnostic{Severity: SeverityError, Code: CodeMissingTransitionTarget, Message: "Missing 'Next' target: " + target, Location: loc}
}

func errUnreachable(loc, name string) Diagnostic {
	return Diagnostic{Severity: SeverityError, Code: CodeMissingTransitionTarget, Message: `State "` + name + `" is not reachable.`, Location: loc}
}

func errNoTerminalState() Diagnostic {
	return Diagnostic{Severity: SeverityError, Code: CodeMissingEndState, Message: "Workflow has no terminal state"}
}

func errDuplicateState(loc, name string) Diagnostic {
	return Diagnostic{Severity: SeverityError, Code: CodeDuplicateStateName, Message: "Duplicate State name: " + name, Location: loc}
}

func errStateNameTooLong(loc, name string) Diagnostic {
	return Diagnostic{Severity: SeverityError, Code: CodeInvalidStateName, Message: "Invalid State name: State '" + name + "' exceeds the 80-character limit allowed by the service", Location: loc}
}

func errInvalidJSON(msg, loc string) Diagnostic {
	return Diagnostic{Severity: SeverityError, Code: CodeInvalidJSON, Message: msg, Location: loc}
}
