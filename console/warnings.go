package console

import (
	"net/http"

	"stepwise/service"
)

// warnings are the states of an execution that ended with warning, as
// the service judges its history with the rules it started with; none
// when they cannot be read.
func (c *Console) warnings(r *http.Request, arn string) []service.ExecutionWarning {
	ws, err := c.svc.ExecutionWarnings(r.Context(), arn)
	if err != nil {
		return nil
	}
	return ws
}

// markWarnings shows as warning each state that succeeded and whose
// Task's result was judged a warning.
func markWarnings(statuses map[string]string, ws []service.ExecutionWarning) {
	for _, w := range ws {
		if statuses[w.State] == statusSucceeded {
			statuses[w.State] = statusWarning
		}
	}
}

// warningCounts counts the warnings of each listed execution, by ARN
// (those without are left out).
func (c *Console) warningCounts(r *http.Request, list []service.ExecutionListItem) map[string]int {
	out := map[string]int{}
	for _, x := range list {
		if n := len(c.warnings(r, x.ExecutionArn)); n > 0 {
			out[x.ExecutionArn] = n
		}
	}
	return out
}
