package testrunner

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"stepwise/asl"
	"stepwise/history"
)

// Coverage counts, over the executions of one definition, how often each
// state was entered and each Choice rule taken.
//
// A Choice rule is known by the state the Choice went to: when several
// rules of a Choice (or a rule and its Default) go to the same state, a
// transition there counts for each of them (they are marked as sharing
// it). The states of a distributed Map's item processor run in child
// executions whose histories are not kept; they are listed apart and
// left out of the totals.
type Coverage struct {
	// Definition is the definition's path.
	Definition string
	Machine    *asl.StateMachine
	// Executions is how many executions were added.
	Executions int
	entered    map[string]int
	taken      map[string]map[string]int // Choice state → next state → count
}

// NewCoverage returns an empty coverage of a definition.
func NewCoverage(definition string, m *asl.StateMachine) *Coverage {
	return &Coverage{Definition: definition, Machine: m, entered: map[string]int{}, taken: map[string]map[string]int{}}
}

// Add counts the states and Choice rules of an execution's history.
func (c *Coverage) Add(events []*history.Event) {
	c.Executions++
	all := allStates(c.Machine)
	// The state entered right after an event, in the same frame, links
	// back to it.
	after := map[int64]*history.Event{}
	for _, ev := range events {
		if ev.StateEnteredEventDetails != nil {
			if _, ok := after[ev.PreviousEventID]; !ok {
				after[ev.PreviousEventID] = ev
			}
		}
	}
	for _, ev := range events {
		if d := ev.StateEnteredEventDetails; d != nil {
			c.entered[d.Name]++
		}
		if d := ev.StateExitedEventDetails; d != nil && ev.Type == history.StateExitedType(string(asl.TypeChoice)) {
			s := all[d.Name]
			next := after[ev.ID]
			if s == nil || next == nil {
				continue
			}
			if c.taken[s.Name] == nil {
				c.taken[s.Name] = map[string]int{}
			}
			c.taken[s.Name][next.StateEnteredEventDetails.Name]++
		}
	}
}

// StateCount is how often a state was entered.
type StateCount struct {
	State *asl.State
	// Depth is how deep in Parallel branches and Map processors it is.
	Depth int
	Count int
	// Unobserved is set for the states of a distributed Map's item
	// processor.
	Unobserved bool
}

// RuleCount is how often a Choice rule, or its Default, was taken.
type RuleCount struct {
	Choice *asl.State
	// Rule is the rule's index from 0, -1 for the Default.
	Rule  int
	Next  string
	Count int
	// SharedWith is the first other rule with the same Next (1-based,
	// 0 for the Default, -1 when none): its transitions count for both.
	SharedWith int
	Unobserved bool
}

// Label names the rule: "rule #1" or "Default".
func (r RuleCount) Label() string {
	if r.Rule < 0 {
		return "Default"
	}
	return fmt.Sprintf("rule #%d", r.Rule+1)
}

// States lists every state of the definition in definition order, depth
// first, with its count.
func (c *Coverage) States() []StateCount {
	var out []StateCount
	walkStates(c.Machine, 0, func(s *asl.State, depth int, child bool) {
		out = append(out, StateCount{State: s, Depth: depth, Count: c.entered[s.Name], Unobserved: child})
	})
	return out
}

// Rules lists the rules and Defaults of every Choice state with their
// counts.
func (c *Coverage) Rules() []RuleCount {
	var out []RuleCount
	walkStates(c.Machine, 0, func(s *asl.State, _ int, child bool) {
		if s.Type != asl.TypeChoice {
			return
		}
		first := map[string]int{} // next → first rule going there (1-based; 0 the Default)
		add := func(rule int, next string) {
			shared := -1
			if f, ok := first[next]; ok {
				shared = f
			} else {
				first[next] = rule + 1
			}
			out = append(out, RuleCount{Choice: s, Rule: rule, Next: next, Count: c.taken[s.Name][next], SharedWith: shared, Unobserved: child})
		}
		for i, r := range s.Choices {
			add(i, r.Next)
		}
		if s.Default != "" {
			add(-1, s.Default)
		}
		// A rule sharing its Next with a later one is shared too.
		for i := range out {
			if out[i].Choice != s || out[i].SharedWith >= 0 {
				continue
			}
			for j := range out {
				if j != i && out[j].Choice == s && out[j].Next == out[i].Next {
					out[i].SharedWith = out[j].Rule + 1
					break
				}
			}
		}
	})
	return out
}

// Totals are the states entered and all states, and the rules taken and
// all rules, leaving out those that cannot be observed.
func (c *Coverage) Totals() (entered, states, taken, rules int) {
	for _, s := range c.States() {
		if s.Unobserved {
			continue
		}
		states++
		if s.Count > 0 {
			entered++
		}
	}
	for _, r := range c.Rules() {
		if r.Unobserved {
			continue
		}
		rules++
		if r.Count > 0 {
			taken++
		}
	}
	return
}

func percent(n, of int) string {
	if of == 0 {
		return "100.0%"
	}
	return fmt.Sprintf("%.1f%%", float64(n)*100/float64(of))
}

// Write reports the coverage: the totals and what was never entered or
// taken; verbose lists every state and rule with its count.
func (c *Coverage) Write(w io.Writer, verbose bool) error {
	entered, states, taken, rules := c.Totals()
	var b strings.Builder
	fmt.Fprintf(&b, "coverage: %s (%d executions)\n", c.Definition, c.Executions)
	fmt.Fprintf(&b, "    states entered: %d/%d (%s)\n", entered, states, percent(entered, states))
	var never, unobserved []string
	for _, s := range c.States() {
		switch {
		case s.Unobserved:
			unobserved = append(unobserved, s.State.Name)
		case s.Count == 0:
			never = append(never, s.State.Name)
		}
	}
	if len(never) > 0 {
		fmt.Fprintf(&b, "        never entered: %s\n", strings.Join(never, ", "))
	}
	if rules > 0 {
		fmt.Fprintf(&b, "    Choice rules taken: %d/%d (%s)\n", taken, rules, percent(taken, rules))
		never = never[:0]
		for _, r := range c.Rules() {
			if !r.Unobserved && r.Count == 0 {
				never = append(never, fmt.Sprintf("%s %s → %s", r.Choice.Name, r.Label(), r.Next))
			}
		}
		if len(never) > 0 {
			fmt.Fprintf(&b, "        never taken: %s\n", strings.Join(never, ", "))
		}
	}
	if len(unobserved) > 0 {
		fmt.Fprintf(&b, "    not counted (distributed Map child executions): %s\n", strings.Join(unobserved, ", "))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if !verbose {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	rules2 := c.Rules()
	for _, s := range c.States() {
		indent := strings.Repeat("  ", s.Depth)
		count := fmt.Sprint(s.Count)
		if s.Unobserved {
			count = "-"
		}
		fmt.Fprintf(tw, "        %s%s\t%s\t%s\n", indent, s.State.Name, s.State.Type, count)
		for _, r := range rules2 {
			if r.Choice != s.State {
				continue
			}
			count := fmt.Sprint(r.Count)
			if r.Unobserved {
				count = "-"
			}
			note := ""
			if r.SharedWith >= 0 {
				other := "Default"
				if r.SharedWith > 0 {
					other = fmt.Sprintf("rule #%d", r.SharedWith)
				}
				note = fmt.Sprintf("\t(same Next as %s: counted together)", other)
			}
			fmt.Fprintf(tw, "        %s  %s → %s\t\t%s%s\n", indent, r.Label(), r.Next, count, note)
		}
	}
	return tw.Flush()
}
