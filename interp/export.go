package interp

import (
	"time"

	"stepwise/asl"
	"stepwise/asl/jsonpath"
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
