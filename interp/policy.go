package interp

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"stepwise/jsonvalue"
)

// Failure policies change how a state fails, beyond what AWS does. A
// definition stays deployable to AWS unchanged: the policies live in the
// state machine's tags, one tag a state,
//
//	stepwise:policy/<state name> = <policy>[,<policy>]
//
// and an execution runs with those its state machine had when it started.
type Policy string

const (
	// PolicyFinishRunning: when a branch of a Parallel or an iteration of
	// a Map fails, the others that are running are not stopped and no
	// new one starts; once they have ended the state fails with the first
	// error (Retry and Catch see it as usual), and a redrive runs again
	// only what failed or never ran. AWS stops the others at once. For a
	// distributed Map the map run lets its running children end.
	PolicyFinishRunning Policy = "finish-running"
	// PolicyRetryFailedItems: when a Map state's Retry fires, only the
	// iterations that did not succeed run again (and those never
	// started); those that succeeded keep their results, and the output
	// is in item order as if all had run once. AWS runs every item again.
	// A distributed Map's retry redrives its map run (MapRunRedriven)
	// instead of starting a new one.
	PolicyRetryFailedItems Policy = "retry-failed-items"
	// PolicyHeld holds the state from the start (see Hold): set by a
	// state machine's hold tag, stepwise:hold/<state name> = <who>, not
	// by a policy tag. An execution started while the tag is there
	// starts with the state held; the tag's placing and removal are
	// applied to the running executions as Hold and Release events.
	PolicyHeld Policy = "held"
)

// HoldTagPrefix is the prefix of the tags that hold a state of every
// execution of a state machine.
const HoldTagPrefix = "stepwise:hold/"

// PolicyTagPrefix is the prefix of the tags that set policies.
const PolicyTagPrefix = "stepwise:policy/"

// Policies are the failure policies of an execution's states, by state
// name.
type Policies map[string][]Policy

// Has reports whether state has policy p.
func (ps Policies) Has(state string, p Policy) bool { return slices.Contains(ps[state], p) }

// PoliciesFromTags reads the policies a state machine's tags set, or says
// what is wrong with a policy tag.
func PoliciesFromTags(tags map[string]string) (Policies, error) {
	var ps Policies
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if state, ok := strings.CutPrefix(k, HoldTagPrefix); ok {
			if state == "" {
				return nil, fmt.Errorf("the tag %q names no state: write %s<state name>", k, HoldTagPrefix)
			}
			if ps == nil {
				ps = Policies{}
			}
			if !ps.Has(state, PolicyHeld) {
				ps[state] = append(ps[state], PolicyHeld)
			}
			continue
		}
		state, ok := strings.CutPrefix(k, PolicyTagPrefix)
		if !ok {
			continue
		}
		if state == "" {
			return nil, fmt.Errorf("the tag %q names no state: write %s<state name>", k, PolicyTagPrefix)
		}
		for _, v := range strings.Split(tags[k], ",") {
			p := Policy(strings.TrimSpace(v))
			switch p {
			case PolicyFinishRunning, PolicyRetryFailedItems:
			default:
				return nil, fmt.Errorf("the tag %q has the unknown policy %q: the policies are %s and %s", k, string(p), PolicyFinishRunning, PolicyRetryFailedItems)
			}
			if ps == nil {
				ps = Policies{}
			}
			if !ps.Has(state, p) {
				ps[state] = append(ps[state], p)
			}
		}
	}
	return ps, nil
}

// Text is the policies as stored with an execution: JSON, "" for none.
func (ps Policies) Text() string {
	if len(ps) == 0 {
		return ""
	}
	o := jsonvalue.NewObject(len(ps))
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		arr := make([]any, len(ps[n]))
		for i, p := range ps[n] {
			arr[i] = string(p)
		}
		o.Set(n, arr)
	}
	return jsonvalue.String(o)
}

// ParsePolicies reads policies stored by Text.
func ParsePolicies(text string) (Policies, error) {
	if text == "" {
		return nil, nil
	}
	v, err := jsonvalue.ParseString(text)
	if err != nil {
		return nil, err
	}
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, fmt.Errorf("policies: not an object")
	}
	ps := Policies{}
	for n, list := range o.All() {
		arr, _ := list.([]any)
		for _, p := range arr {
			s, _ := p.(string)
			ps[n] = append(ps[n], Policy(s))
		}
	}
	return ps, nil
}
