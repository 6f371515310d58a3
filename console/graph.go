package console

import (
	"fmt"
	"strconv"

	"stepwise/asl"
	"stepwise/jsonvalue"
)

// The graph of a definition, as the page's script draws it (static/graph.js):
// every state a node (state names are unique in a whole definition), the
// start and the end as two pseudo-nodes, the machines inside Parallel and
// Map states as groups, and the transitions as edges: Next, a Choice's
// rules (labelled) and Default, and Catch.

// Pseudo-nodes of the start and the end.
const (
	startNode = "__start__"
	endNode   = "__end__"
)

type graphNode struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Parent string `json:"parent,omitempty"`
}

type graphGroup struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	Parent string `json:"parent,omitempty"`
	Kind   string `json:"kind"` // branch, processor
}

type graphEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Kind  string `json:"kind"` // next, default, choice, catch
	Label string `json:"label,omitempty"`
}

type graph struct {
	Nodes  []graphNode  `json:"nodes"`
	Groups []graphGroup `json:"groups"`
	Edges  []graphEdge  `json:"edges"`
	Start  string       `json:"start"`
}

// buildGraph draws a definition.
func buildGraph(m *asl.StateMachine) *graph {
	g := &graph{Nodes: []graphNode{{ID: startNode, Name: "Start", Type: "Start"}}, Groups: []graphGroup{}, Edges: []graphEdge{}, Start: m.StartAt}
	g.machine(m, "")
	g.Nodes = append(g.Nodes, graphNode{ID: endNode, Name: "End", Type: "End"})
	g.Edges = append([]graphEdge{{From: startNode, To: m.StartAt, Kind: "next"}}, g.Edges...)
	return g
}

// machine adds the states of a machine inside group (""; the top level).
// The top level's terminal states lead to the end node.
func (g *graph) machine(m *asl.StateMachine, group string) {
	for _, name := range m.Order {
		st := m.States[name]
		g.Nodes = append(g.Nodes, graphNode{ID: name, Name: name, Type: string(st.Type), Parent: group})
		for i, b := range st.Branches {
			id := name + "/branch-" + strconv.Itoa(i+1)
			g.Groups = append(g.Groups, graphGroup{ID: id, Label: fmt.Sprintf("%s · %d", name, i+1), Parent: group, Kind: "branch"})
			g.machine(b, id)
		}
		if st.ItemProcessor != nil {
			id := name + "/processor"
			g.Groups = append(g.Groups, graphGroup{ID: id, Label: name, Parent: group, Kind: "processor"})
			g.machine(st.ItemProcessor, id)
		}
		g.transitions(st, group == "")
	}
}

func (g *graph) transitions(st *asl.State, top bool) {
	if st.Next != "" {
		g.Edges = append(g.Edges, graphEdge{From: st.Name, To: st.Next, Kind: "next"})
	}
	for i, r := range st.Choices {
		g.Edges = append(g.Edges, graphEdge{From: st.Name, To: r.Next, Kind: "choice", Label: ruleLabel(r, i)})
	}
	if st.Default != "" {
		g.Edges = append(g.Edges, graphEdge{From: st.Name, To: st.Default, Kind: "default", Label: "Default"})
	}
	for _, c := range st.Catch {
		g.Edges = append(g.Edges, graphEdge{From: st.Name, To: c.Next, Kind: "catch", Label: joinErrors(c.ErrorEquals)})
	}
	terminal := st.End || st.Type == asl.TypeSucceed || st.Type == asl.TypeFail
	if top && terminal {
		g.Edges = append(g.Edges, graphEdge{From: st.Name, To: endNode, Kind: "next"})
	}
}

// ruleLabel labels a Choice rule: its comment, its JSONata condition, its
// comparison, or its number.
func ruleLabel(r *asl.ChoiceRule, i int) string {
	switch {
	case r.Comment != "":
		return shorten(r.Comment)
	case r.Condition != "":
		return shorten(r.Condition)
	case r.Variable != nil && r.Operator != "":
		operand := ""
		switch {
		case r.OperandPath != nil:
			operand = " " + r.OperandPath.String()
		case r.Operand != nil:
			operand = " " + jsonvalue.String(r.Operand)
		}
		return shorten(r.Variable.String() + " " + r.Operator + operand)
	}
	return "Rule #" + strconv.Itoa(i+1)
}

func joinErrors(errs []string) string {
	s := ""
	for i, e := range errs {
		if i > 0 {
			s += ", "
		}
		s += e
	}
	return shorten(s)
}

// shorten keeps a label readable on an edge.
func shorten(s string) string {
	const max = 48
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}
