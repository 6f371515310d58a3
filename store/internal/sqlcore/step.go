package sqlcore

import (
	"errors"
	"fmt"

	"stepwise/store"
)

// StepArn is the ARN of a step's execution ("" if it names none).
func StepArn(s *store.Step) string {
	switch {
	case s.Insert != nil:
		return s.Insert.Arn
	case s.Update != nil:
		return s.Update.Arn
	case s.Input != nil:
		return s.Input.ExecutionArn
	}
	return ""
}

// CheckSteps fails unless every step names its execution, each a
// different one, as StepWrite asks.
func CheckSteps(steps []*store.Step) error {
	seen := make(map[string]bool, len(steps))
	for _, s := range steps {
		arn := StepArn(s)
		if arn == "" {
			return errors.New("a step with neither Insert, Update nor Input")
		}
		if seen[arn] {
			return fmt.Errorf("execution %s: two steps in one write", arn)
		}
		seen[arn] = true
	}
	return nil
}
