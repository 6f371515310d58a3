package interp

import (
	"time"

	"stepwise/asl"
	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/jsonvalue"
	"stepwise/stepwisetype"
)

// This file exports thin wrappers around the interpreter's shared
// semantics, for callers that run one state outside an execution (the
// TestState operation) and must agree with the interpreter exactly.

// EvalChoiceRule evaluates a Choice rule, or a nested boolean expression
// of one, in env. Comparisons of values of the wrong type are false; a
// Variable that selects nothing is a States.Runtime failure.
func EvalChoiceRule(r *asl.ChoiceRule, env *jsonpath.Env) (bool, error) {
	return evalRule(r, env)
}

// ErrorMatches reports whether an ErrorEquals list matches an error name:
// States.ALL matches everything but States.DataLimitExceeded and
// States.Runtime; States.TaskFailed matches everything but States.Timeout
// and those two.
func ErrorMatches(list []string, name string) bool {
	return errorMatches(list, name)
}

// Backoff returns the delay before retry number attempt (0-based) of r:
// IntervalSeconds × BackoffRate^attempt, capped by MaxDelaySeconds. FULL
// jitter scales it by a number drawn deterministically from execArn, state
// and retryCount.
func Backoff(r *asl.Retrier, attempt int64, execArn, state string, retryCount int) time.Duration {
	return backoff(r, attempt, execArn, state, retryCount)
}

// ResolveIntField resolves a count given literally or by a path
// (MaxConcurrency, ToleratedFailureCount, TimeoutSeconds, ...). ok is false
// when the field is absent.
func ResolveIntField(f *IntFieldSpec, env *jsonpath.Env) (n int64, ok bool, err error) {
	return intField(f, env)
}

// ResolvePercentField resolves ToleratedFailurePercentage, given literally
// or by a path; it is -1 when the field is absent.
func ResolvePercentField(f *asl.IntField, env *jsonpath.Env) (float64, error) {
	if f == nil {
		return -1, nil
	}
	return percentField(f, env, nil, nil)
}

// ScalarText renders a value selected by ErrorPath or CausePath: a string
// as itself, anything else as JSON text.
func ScalarText(v any) string { return scalarText(v) }

// JSONataAssign evaluates the Assign of j (a state's, a Catch's or a
// Choice rule's JSONata fields), if any, to the variables it assigns.
func JSONataAssign(j *asl.JSONataFields, env *payload.JSONataEnv) (*jsonvalue.Object, error) {
	return jsonataAssign(j, env)
}

// JSONataFailure is the failure a JSONata Fail state raises: its Error and
// Cause, given literally or as expressions that must yield strings.
func JSONataFailure(s *asl.State, env *payload.JSONataEnv) (*stepwisetype.Failure, error) {
	return jsonataFailure(s, env)
}

// JSONataChoice evaluates a JSONata Choice state's Conditions and returns
// the fields it exits with (its own, with the matching rule's Assign and
// Output) and the next state: the first matching rule's, or the Default.
// matched is false when no rule matches and there is no Default.
func JSONataChoice(s *asl.State, env *payload.JSONataEnv) (j *asl.JSONataFields, next string, matched bool, err error) {
	return jsonataChoice(s, env)
}

// JSONataTimestamp reads the value of a Wait state's Timestamp expression
// as a time; anything but an ISO-8601 date-time string is a
// States.QueryEvaluationError.
func JSONataTimestamp(v any) (time.Time, error) { return jsonataTimestamp(v) }

// JSONataCount checks that v, the value of a count field's expression
// (Seconds, MaxConcurrency, ...), is an integer of at least min.
func JSONataCount(t *payload.JSONata, field string, v any, min int64) (int64, error) {
	return jsonataCount(t, field, v, min)
}

// JSONataInt resolves a count field of a JSONata state, given literally or
// as an expression; ok is false when the field is absent.
func JSONataInt(f *asl.IntField, t *payload.JSONata, field string, min int64, env *payload.JSONataEnv) (n int64, ok bool, err error) {
	return jsonataInt(f, t, field, min, env)
}

// JSONataPercent resolves a JSONata Map state's
// ToleratedFailurePercentage, given literally or as an expression; it is
// -1 when the field is absent.
func JSONataPercent(s *asl.State, env *payload.JSONataEnv) (float64, error) {
	if s.TolerancePercent == nil {
		return -1, nil
	}
	return percentField(s.TolerancePercent, nil, env, s.JSONata)
}

// UnexpectedType is the States.QueryEvaluationError of an expression whose
// value v is not of the type (want: "array", "string", ...) its field
// needs.
func UnexpectedType(t *payload.JSONata, field, want string, v any) error {
	return unexpectedType(t, field, want, v)
}

// ErrorOutput is what a Catch receives of a failure (see errorOutput).
func ErrorOutput(fl *stepwisetype.Failure) *jsonvalue.Object { return errorOutput(fl) }
