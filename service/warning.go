package service

import (
	"context"

	"maps"
	"slices"
	"strings"

	"stepwise/asl"
	"stepwise/engine"
	"stepwise/internal/warnrule"
	"stepwise/interp"
	"stepwise/sfnapi"
)

// WarningTagPrefix is the prefix of the tags that set a state machine's
// warning thresholds: stepwise:warning/<state> = <rule>.
const WarningTagPrefix = warnrule.TagPrefix

// checkWarningTags refuses a warning tag (stepwise:warning/<state>) whose
// value is not a rule, and, given the state machine's definition m, one
// that names a state m does not have or a state that is not a Task.
func checkWarningTags(tags []Tag, m *asl.StateMachine) error {
	kv := map[string]string{}
	for _, t := range tags {
		if t.Key != nil && strings.HasPrefix(*t.Key, warnrule.TagPrefix) {
			kv[*t.Key] = ""
			if t.Value != nil {
				kv[*t.Key] = *t.Value
			}
		}
	}
	if len(kv) == 0 {
		return nil
	}
	rs, err := warnrule.FromTags(kv)
	if err != nil {
		return apiErr(sfnapi.CodeValidation, "Invalid warning rule: %v", err)
	}
	if m == nil {
		return nil
	}
	for _, state := range slices.Sorted(maps.Keys(rs)) {
		st := m.Find(state)
		if st == nil {
			return apiErr(sfnapi.CodeValidation, "Invalid warning rule: the tag %q names the state %q, which the definition does not have",
				warnrule.TagPrefix+state, state)
		}
		if st.Type != asl.TypeTask {
			return apiErr(sfnapi.CodeValidation, "Invalid warning rule: the tag %q names the state %q, a %s state: a warning rule judges a Task's result",
				warnrule.TagPrefix+state, state, st.Type)
		}
	}
	return nil
}

// hasRuleTag says whether tags set a failure policy or a warning rule.
func hasRuleTag(tags []Tag) bool {
	return slices.ContainsFunc(tags, func(t Tag) bool {
		return t.Key != nil && (strings.HasPrefix(*t.Key, PolicyTagPrefix) || strings.HasPrefix(*t.Key, interp.HoldTagPrefix) || strings.HasPrefix(*t.Key, warnrule.TagPrefix))
	})
}

// ExecutionWarnings lists the states of an execution that ended with
// warning: the Tasks whose results the warning rules its state machine's
// tags had at its start (stepwise:warning/<state>) judge a warning, in
// the order of their results, each with the event of its result and the
// return code it carried. The history is not changed: the judgment is
// made on it as it is.
func (s *Service) ExecutionWarnings(ctx context.Context, executionArn string) ([]ExecutionWarning, error) {
	ref, err := s.executionArnInput(executionArn)
	if err != nil {
		return nil, err
	}
	x, err := s.getExecution(ctx, ref)
	if err != nil {
		return nil, err
	}
	ws, err := engine.Warnings(ctx, s.db(), x)
	if err != nil {
		return nil, storeError("judge warnings", err)
	}
	return ws, nil
}

// ExecutionWarning is a state of an execution that ended with warning.
type ExecutionWarning = engine.Warning
