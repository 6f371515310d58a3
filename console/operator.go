package console

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"stepwise/service"
)

// Operator controls on the console: a running execution's page holds
// and releases a state, suspends and resumes the execution, skips or
// kills a Task state (each a call of Stepwise's own operations,
// X-Amz-Target Stepwise.<Op>, from the page's script, signed in as the
// page is: the operator log names "console:<access key id>"); a held
// state is "held" on the graph, a suspended execution says so in its
// header and on its graph; the operator log is listed. A state machine's
// page holds and releases a state of every execution of it. A FAILED,
// TIMED_OUT or ABORTED execution's page offers a rerun (Stepwise.
// RerunExecution): a mode, its state or output, a preview (a dry run)
// and then the rerun as previewed.

// Statuses of the graph the operators' controls give.
const (
	statusHeld      = "held"      // a state held in a running execution
	statusSuspended = "suspended" // a suspended execution (the legend's)
)

// holdTagPrefix is the prefix of a state machine's hold tags.
const holdTagPrefix = "stepwise:hold/"

// operatorView is what the execution page shows of its operators.
type operatorView struct {
	Running   bool
	Held      []string
	Suspended bool
	Actions   []service.OperatorAction
	States    []string // the states a control can name, in the graph's order
	// WaitingFor is the execution a start of an exclusive group waits
	// for (its state machine's stepwise:exclusive tag).
	WaitingFor string
	// Rerunnable: the execution ended FAILED, TIMED_OUT or ABORTED and
	// was not started by a Map Run, so the page offers a rerun.
	Rerunnable bool
}

// waitingForHTML says, in lang, that the execution waits for the one of
// arn, linked.
func waitingForHTML(lang, arn string) template.HTML {
	link := `<a href="/executions/` + template.HTMLEscapeString(url.PathEscape(arn)) + `" title="` + template.HTMLEscapeString(arn) + `">` +
		template.HTMLEscapeString(arn[strings.LastIndexByte(arn, ':')+1:]) + `</a>`
	return template.HTML(fmt.Sprintf(template.HTMLEscapeString(translate(lang, "waitingFor")), link)) //nolint:gosec // escaped above
}

func init() { funcs["waitingFor"] = waitingForHTML }

// operatorOf reads the operator status of an execution; nil when it has
// none to show (an EXPRESS execution, or one that cannot be read).
func (c *Console) operatorOf(r *http.Request, x *service.DescribeExecutionOutput, g *graph) *operatorView {
	st, err := c.svc.ExecutionOperatorStatus(r.Context(), x.ExecutionArn)
	if err != nil {
		return nil
	}
	v := &operatorView{Running: x.Status == "RUNNING", Actions: st.Actions, States: stateNames(g)}
	if v.Running {
		v.Held, v.Suspended, v.WaitingFor = st.Held, st.Suspended, st.WaitingFor
	}
	switch x.Status {
	case "FAILED", "TIMED_OUT", "ABORTED":
		v.Rerunnable = x.MapRunArn == ""
	}
	return v
}

// stateNames are the states of a graph, in its order.
func stateNames(g *graph) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, n := range g.Nodes {
		if n.ID != startNode && n.ID != endNode {
			out = append(out, n.Name)
		}
	}
	return out
}

// markHeld shows as held each held state that is not running (a held
// state that runs goes on: the hold is for its next entries).
func markHeld(statuses map[string]string, v *operatorView) {
	if v == nil {
		return
	}
	for _, st := range v.Held {
		if statuses[st] != statusRunning {
			statuses[st] = statusHeld
		}
	}
}

// machineHolds are the states a state machine's hold tags hold in every
// execution of it; none when they cannot be read.
func (c *Console) machineHolds(r *http.Request, smArn string) []string {
	if strings.Count(smArn, ":") > 6 {
		return nil // a version's page: holds are the state machine's
	}
	tags, err := c.svc.ListTagsForResource(r.Context(), &service.ListTagsForResourceInput{ResourceArn: smArn})
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range tags.Tags {
		if t.Key != nil && strings.HasPrefix(*t.Key, holdTagPrefix) {
			out = append(out, strings.TrimPrefix(*t.Key, holdTagPrefix))
		}
	}
	return out
}
