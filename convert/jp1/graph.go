package jp1

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// builder writes one net's definition.
type builder struct {
	c        *conv
	n        *net
	path     string
	children map[string]*Unit
	nets     []*net
	states   map[string]any
	parallel []string // the Parallel states, for their policy tags
	used     map[string]bool
}

func (b *builder) childNet(name string) *net {
	for _, cn := range b.nets {
		if cn.unit.Name == name {
			return cn
		}
	}
	return nil
}

// build lays the units out: the parts of the net that share no relation
// side by side, each part as topological levels run one after the other.
func (b *builder) build(order []string, rels []relation) (map[string]any, error) {
	b.used = map[string]bool{}
	for _, name := range order {
		b.used[name] = true
	}
	var normal []string
	recoveries := map[string][]string{} // unit → the recovery units it starts
	recNext := map[string][]string{}    // recovery unit → the recovery units after it
	preds := map[string][]string{}
	for _, name := range order {
		if !isRecovery(b.children[name].Type()) {
			normal = append(normal, name)
		}
	}
	for _, r := range rels {
		fr, tr := isRecovery(b.children[r.from].Type()), isRecovery(b.children[r.to].Type())
		switch {
		case !fr && !tr:
			preds[r.to] = append(preds[r.to], r.from)
		case !fr && tr:
			recoveries[r.from] = append(recoveries[r.from], r.to)
		case fr && tr:
			recNext[r.from] = append(recNext[r.from], r.to)
		default:
			b.c.note(b.path, "ar", fmt.Sprintf("(f=%s,t=%s)", r.from, r.to), "a relation from a recovery unit to a unit that is not one is not carried over")
		}
	}
	// Levels, by Kahn's algorithm: a unit's level is one past its
	// predecessors' highest.
	level := map[string]int{}
	done := 0
	for changed := true; changed; {
		changed = false
		for _, name := range normal {
			if _, ok := level[name]; ok {
				continue
			}
			l, ready := 0, true
			for _, p := range preds[name] {
				pl, ok := level[p]
				if !ok {
					ready = false
					break
				}
				l = max(l, pl+1)
			}
			if ready {
				level[name] = l
				done++
				changed = true
			}
		}
	}
	if done < len(normal) {
		var cyc []string
		for _, name := range normal {
			if _, ok := level[name]; !ok {
				cyc = append(cyc, name)
			}
		}
		return nil, fmt.Errorf("net %s: its relations make a cycle through %s", b.path, strings.Join(cyc, ", "))
	}
	// Parts: weakly connected components.
	part := map[string]int{}
	var parts [][]string
	for _, start := range normal {
		if _, ok := part[start]; ok {
			continue
		}
		id := len(parts)
		var members []string
		stack := []string{start}
		part[start] = id
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			members = append(members, x)
			var near []string
			near = append(near, preds[x]...)
			for _, y := range normal {
				if slices.Contains(preds[y], x) {
					near = append(near, y)
				}
			}
			for _, y := range near {
				if _, ok := part[y]; !ok {
					part[y] = id
					stack = append(stack, y)
				}
			}
		}
		parts = append(parts, members)
	}
	if len(normal) == 0 {
		b.states["Empty"] = map[string]any{"Type": "Pass", "End": true, "Comment": "the net has no unit"}
		return map[string]any{"Comment": b.comment(), "StartAt": "Empty", "States": b.states}, nil
	}
	stagesOf := func(members []string, prefix string, into map[string]any) string {
		maxL := 0
		for _, m := range members {
			maxL = max(maxL, level[m])
		}
		byLevel := make([][]string, maxL+1)
		for _, name := range normal { // the file's order within a level
			if slices.Contains(members, name) {
				byLevel[level[name]] = append(byLevel[level[name]], name)
			}
		}
		starts := make([]string, len(byLevel))
		for i, names := range byLevel {
			if len(names) > 1 {
				starts[i] = b.fresh(prefix + "Stage " + strconv.Itoa(i+1))
			} else {
				starts[i] = names[0]
			}
		}
		for i, names := range byLevel {
			next := ""
			if i+1 < len(starts) {
				next = starts[i+1]
			}
			if len(names) == 1 {
				b.unitStates(names[0], next, recoveries, recNext, into)
				continue
			}
			var branches []any
			for _, name := range names {
				st := map[string]any{}
				b.unitStates(name, "", recoveries, recNext, st)
				branches = append(branches, map[string]any{"StartAt": name, "States": st})
			}
			p := map[string]any{"Type": "Parallel", "Branches": branches, "ResultPath": nil,
				"Comment": "after all of the stage before: " + strings.Join(names, ", ")}
			setNext(p, next)
			into[starts[i]] = p
			b.parallel = append(b.parallel, starts[i])
		}
		return starts[0]
	}
	start := ""
	if len(parts) == 1 {
		start = stagesOf(parts[0], "", b.states)
	} else {
		start = b.fresh("Parts")
		var branches []any
		for i, members := range parts {
			st := map[string]any{}
			s := stagesOf(members, "Part "+strconv.Itoa(i+1)+" ", st)
			branches = append(branches, map[string]any{"StartAt": s, "States": st})
		}
		b.states[start] = map[string]any{"Type": "Parallel", "Branches": branches, "ResultPath": nil, "End": true,
			"Comment": "the parts of the net that share no relation"}
		b.parallel = append(b.parallel, start)
	}
	start = b.runParameters(start)
	for i, p := range b.parallel {
		if i >= maxPolicyTags {
			b.c.note(b.path, "(Parallel states)", p, "past the first 40 Parallel states, finish-running is not set (a state machine has at most 50 tags)")
			break
		}
		b.n.tags["stepwise:policy/"+p] = "finish-running"
	}
	return map[string]any{"Comment": b.comment(), "StartAt": start, "States": b.states}, nil
}

const maxPolicyTags = 40

// runParameters puts before the net's first state a Choice that gives the
// execution input an empty object env when it has none: the run's
// parameters, which every job's command line gets in its environment and
// every nested net in its input.
func (b *builder) runParameters(first string) string {
	choice, none := b.fresh("Run parameters"), b.fresh("No run parameters")
	b.states[choice] = map[string]any{"Type": "Choice",
		"Comment": "the run's parameters are the input's env, an object of NAME: VALUE",
		"Choices": []any{map[string]any{"Variable": "$.env", "IsPresent": false, "Next": none}},
		"Default": first}
	b.states[none] = map[string]any{"Type": "Pass", "Result": map[string]any{}, "ResultPath": "$.env", "Next": first}
	return choice
}

func (b *builder) comment() string {
	s := "JP1/AJS3 job net " + b.path
	if cm := b.n.unit.Get("cm"); cm != "" {
		s += ": " + cm
	}
	return s
}

func (b *builder) fresh(name string) string {
	n := name
	for i := 2; b.used[n]; i++ {
		n = fmt.Sprintf("%s (%d)", name, i)
	}
	b.used[n] = true
	return n
}

func setNext(s map[string]any, next string) {
	if next == "" {
		s["End"] = true
	} else {
		s["Next"] = next
	}
}

// unitStates writes the states of one unit (and its recovery units) into
// into, the unit's state named after it.
func (b *builder) unitStates(name, next string, recoveries, recNext map[string][]string, into map[string]any) {
	s := b.unitState(name, name)
	setNext(s, next)
	into[name] = s
	recs := recoveries[name]
	if len(recs) == 0 {
		return
	}
	// The recovery units reached from this unit, in an order that keeps
	// their relations.
	var seq []string
	seen := map[string]bool{}
	var visit func(string)
	visit = func(r string) {
		if seen[r] {
			return
		}
		seen[r] = true
		for _, nx := range recNext[r] {
			visit(nx)
		}
		seq = append(seq, r)
	}
	for _, r := range recs {
		visit(r)
	}
	slices.Reverse(seq)
	names := make([]string, len(seq))
	for i, r := range seq {
		names[i] = b.fresh(r + " (recovery of " + name + ")")
	}
	failed := b.fresh(name + " failed")
	for i, r := range seq {
		rs := b.unitState(r, names[i])
		if i+1 < len(seq) {
			rs["Next"] = names[i+1]
		} else {
			rs["Next"] = failed
		}
		into[names[i]] = rs
	}
	into[failed] = map[string]any{"Type": "Fail", "Error": "JobFailed",
		"Cause": "unit " + joinPath(b.path, name) + " ended abnormally; its recovery units ran"}
	s["Catch"] = []any{map[string]any{"ErrorEquals": []any{"States.ALL"}, "ResultPath": "$.error", "Next": names[0]}}
}

// unitState is the state a unit runs as, without its Next.
func (b *builder) unitState(name, state string) map[string]any {
	u := b.children[name]
	path := joinPath(b.path, name)
	ty := u.Type()
	switch {
	case isJob(ty):
		return b.job(u, path)
	case isNet(ty):
		cn := b.childNet(name)
		return map[string]any{"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
			"Comment": "nested net " + path,
			"Parameters": map[string]any{"StateMachineArn": "${" + cn.logical + "Arn}",
				"Input": map[string]any{"env.$": "$.env", "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$": "$$.Execution.Id"}},
			"ResultPath": nil}
	default:
		b.c.note(path, "ty", ty, "a unit of this type is not converted: it is a Pass state, and the units after it run as if it had ended normally")
		for _, p := range u.Params {
			if p.Key != "ty" && p.Key != "cm" && p.Key != "el" && p.Key != "sz" {
				b.c.note(path, p.Key, p.Value, "not carried over")
			}
		}
		return map[string]any{"Type": "Pass", "Comment": "JP1/AJS3 unit " + path + " (ty=" + ty + "), not converted"}
	}
}

var jobParams = map[string]bool{"ty": true, "te": true, "sc": true, "prm": true, "wkp": true, "env": true, "jd": true, "wth": true, "tho": true, "cm": true, "el": true, "sz": true}

func (b *builder) job(u *Unit, path string) map[string]any {
	for _, p := range u.Params {
		if !jobParams[p.Key] {
			b.c.note(path, p.Key, p.Value, "not carried over")
		}
	}
	command := u.Get("te")
	if command == "" {
		command = strings.TrimSpace(u.Get("sc") + " " + u.Get("prm"))
	} else if u.Get("sc") != "" || u.Get("prm") != "" {
		b.c.note(path, "sc", u.Get("sc")+" "+u.Get("prm"), "te= is run; sc= and prm= beside it are not")
	}
	if command == "" {
		b.c.note(path, "sc", "", "the job has no command (te= or sc=): it is a Pass state")
		return map[string]any{"Type": "Pass", "Comment": "JP1/AJS3 job " + path + " without a command"}
	}
	payload := map[string]any{"unit": path, "command": command, "runEnv.$": "$.env"}
	if w := u.Get("wkp"); w != "" {
		payload["workdir"] = w
	}
	if envs := u.All("env"); len(envs) > 0 {
		env := map[string]any{}
		for _, e := range envs {
			k, v, ok := strings.Cut(e, "=")
			if !ok {
				b.c.note(path, "env", e, "not NAME=VALUE")
				continue
			}
			env[k] = v
		}
		payload["env"] = env
	}
	jd := u.Get("jd")
	switch jd {
	case "", "cod", "nm", "ab":
		if jd != "" {
			payload["judgment"] = jd
		}
	default:
		b.c.note(path, "jd", jd, "end judgment by a file is not carried over: the exit code judges")
	}
	for _, k := range []string{"tho", "wth"} {
		if v := u.Get(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				b.c.note(path, k, v, "not a number")
				continue
			}
			payload[map[string]string{"tho": "abnormalThreshold", "wth": "warningThreshold"}[k]] = n
		}
	}
	s := map[string]any{"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
		"Comment":    "JP1/AJS3 job " + path,
		"Parameters": map[string]any{"FunctionName": "${RunnerArn}", "Payload": payload},
		"ResultPath": nil}
	if cm := u.Get("cm"); cm != "" {
		s["Comment"] = s["Comment"].(string) + ": " + cm
	}
	return s
}
