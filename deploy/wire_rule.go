package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"stepwise/deploy/cfn"
	"stepwise/wiring"
	"stepwise/wiring/bus"
)

// Rules: an AWS::Events::Rule with an EventPattern, and a function's or
// a state machine's SAM EventBridgeRule and CloudWatchEvent events,
// become wires of kind "rule" (one per target), run by the local event
// bus (package wiring/bus). A rule with a ScheduleExpression is named
// only, as before.

const eventsRule = "AWS::Events::Rule"

func init() {
	register(ruleKind{}, eventsRule)
	registerEvent("EventBridgeRule", readRuleEvent)
	registerEvent("CloudWatchEvent", readRuleEvent)
}

type ruleKind struct{}

func (ruleKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	p := propsOf(r)
	// A scheduled rule's targets are schedules (deploy/schedule.go); the
	// rule itself is named.
	if handled, err := x.scheduledRule(ctx, r); err != nil {
		return nil, "", err
	} else if handled || !p.has("EventPattern") {
		return otherKind{}.apply(ctx, x, r, prev)
	}
	name, err := p.str("Name")
	if err != nil {
		return nil, "", err
	}
	if name == "" {
		name = x.name(r.ID, 64)
	}
	arn := x.guessArn(eventsRule, name)
	state, err := p.str("State")
	if err != nil {
		return nil, "", err
	}
	busName, err := p.str("EventBusName")
	if err != nil {
		return nil, "", err
	}
	pattern, err := patternText(p, "EventPattern")
	if err != nil {
		return nil, "", err
	}
	base := bus.Rule{Name: name, ARN: arn, Bus: busName, Pattern: pattern, State: state}
	targets, _ := p.m["Targets"].([]any)
	if _, isList := p.m["Targets"].([]any); p.has("Targets") && !isList {
		return nil, "", p.errorf("Targets", "a list of targets")
	}
	x.warnIgnored(r, "Name", "State", "EventBusName", "EventPattern", "Targets", "Description", "RoleArn")
	var wires []wiring.Wire
	for i, t := range targets {
		tm, ok := t.(map[string]any)
		if !ok {
			return nil, "", p.errorf(fmt.Sprintf("Targets[%d]", i), "a target is an object")
		}
		tp := resProps{m: tm, at: p.path(fmt.Sprintf("Targets[%d]", i))}
		targetArn, err := tp.str("Arn")
		if err != nil {
			return nil, "", err
		}
		id, err := tp.str("Id")
		if err != nil {
			return nil, "", err
		}
		if id == "" {
			id = fmt.Sprint(i)
		}
		target, err := ruleTarget(targetArn)
		if err != nil {
			return nil, "", tp.errorf("Arn", "%v", err)
		}
		spec := base
		spec.TargetID = id
		if err := readTargetInput(tp, &spec); err != nil {
			return nil, "", err
		}
		if err := spec.Check(); err != nil {
			return nil, "", fmt.Errorf("%s: %w", p.at, err)
		}
		src, err := json.Marshal(spec)
		if err != nil {
			return nil, "", err
		}
		wires = append(wires, wiring.Wire{ID: r.ID + "/" + id, Kind: bus.Kind, Source: src, Target: target})
	}
	if len(targets) == 0 {
		if _, err := bus.ParsePattern(pattern); err != nil {
			return nil, "", fmt.Errorf("%s: %w", p.path("EventPattern"), err)
		}
	}
	rec := &Record{Physical: name, Attrs: map[string]any{"Arn": arn}, Wires: wires}
	if prev != nil && sameRule(prev, rec) {
		return prev, Unchanged, nil
	}
	if prev == nil {
		return rec, Created, nil
	}
	return rec, Updated, nil
}

func sameRule(a, b *Record) bool {
	ja, _ := json.Marshal(struct {
		P string
		A map[string]any
		W []wiring.Wire
	}{a.Physical, a.Attrs, a.Wires})
	jb, _ := json.Marshal(struct {
		P string
		A map[string]any
		W []wiring.Wire
	}{b.Physical, b.Attrs, b.Wires})
	return string(ja) == string(jb)
}

func (ruleKind) remove(context.Context, *run, string, *Record) error { return nil }

// patternText is a pattern property (an object, or its JSON text) as
// JSON text.
func patternText(p resProps, key string) (string, error) {
	switch v := p.m[key].(type) {
	case nil:
		return "", p.errorf(key, "a rule needs an event pattern")
	case string:
		return v, nil
	case map[string]any:
		b, err := json.Marshal(v)
		return string(b), err
	default:
		return "", p.errorf(key, "an event pattern is an object")
	}
}

// readTargetInput reads a target's Input, InputPath, InputTransformer,
// RetryPolicy and DeadLetterConfig.
func readTargetInput(tp resProps, spec *bus.Rule) error {
	var err error
	if spec.Input, err = jsonText(tp, "Input"); err != nil {
		return err
	}
	if spec.InputPath, err = tp.str("InputPath"); err != nil {
		return err
	}
	if tp.has("InputTransformer") {
		var it struct {
			InputPathsMap map[string]string
			InputTemplate string
		}
		if err := tp.decodeInto("InputTransformer", &it); err != nil {
			return err
		}
		spec.InputTransformer = &bus.InputTransformer{InputPathsMap: it.InputPathsMap, InputTemplate: it.InputTemplate}
	}
	if tp.has("RetryPolicy") {
		spec.RetryPolicy = &bus.RetryPolicy{}
		if err := tp.decodeInto("RetryPolicy", spec.RetryPolicy); err != nil {
			return err
		}
	}
	if tp.has("DeadLetterConfig") {
		var dlq struct {
			Arn, Type, QueueLogicalId string
			ImplicitQueueLogicalId    string
		}
		if err := tp.decodeInto("DeadLetterConfig", &dlq); err != nil {
			return err
		}
		if dlq.Arn == "" {
			return tp.errorf("DeadLetterConfig", "needs the Arn of the queue, or Type: SQS in a SAM event")
		}
		spec.DeadLetterArn = dlq.Arn
	}
	return nil
}

// jsonText is a property that is JSON text (Input): a string as given,
// an object or list written as JSON.
func jsonText(p resProps, key string) (string, error) {
	switch v := p.m[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return "", p.errorf(key, "%v", err)
		}
		return string(b), nil
	}
}

// ruleTarget is the wiring target of a rule target's ARN.
func ruleTarget(arn string) (wiring.Target, error) {
	parts := strings.SplitN(arn, ":", 7)
	if len(parts) < 6 || parts[0] != "arn" {
		return wiring.Target{}, fmt.Errorf("%q is not an ARN", arn)
	}
	service, res := parts[2], strings.Join(parts[5:], ":")
	switch {
	case service == "states" && strings.HasPrefix(res, "stateMachine:"):
		name, _, _ := strings.Cut(strings.TrimPrefix(res, "stateMachine:"), ":")
		return wiring.Target{Type: wiring.ToStateMachine, ARN: arn, Name: name}, nil
	case service == "lambda" && strings.HasPrefix(res, "function:"):
		name, _, _ := strings.Cut(strings.TrimPrefix(res, "function:"), ":")
		return wiring.Target{Type: wiring.ToFunction, ARN: arn, Name: name}, nil
	case service == "sqs":
		return wiring.Target{Type: wiring.ToQueue, ARN: arn}, nil
	case service == "sns":
		return wiring.Target{Type: wiring.ToTopic, ARN: arn}, nil
	case service == "events" && strings.HasPrefix(res, "event-bus/"):
		return wiring.Target{Type: wiring.ToBus, ARN: arn, Name: strings.TrimPrefix(res, "event-bus/")}, nil
	}
	return wiring.Target{}, fmt.Errorf("targets like %s are not delivered to here (state machines, functions, queues, topics and buses are)", arn)
}

// readRuleEvent reads a SAM EventBridgeRule or CloudWatchEvent event.
func readRuleEvent(x *run, r *resource, name string, p resProps, target wiring.Target) (wiring.Wire, error) {
	pattern, err := patternText(p, "Pattern")
	if err != nil {
		return wiring.Wire{}, err
	}
	busName, err := p.str("EventBusName")
	if err != nil {
		return wiring.Wire{}, err
	}
	ruleName, err := p.str("RuleName")
	if err != nil {
		return wiring.Wire{}, err
	}
	if ruleName == "" {
		ruleName = x.name(r.ID+name, 64)
	}
	state, err := p.str("State")
	if err != nil {
		return wiring.Wire{}, err
	}
	if state == "" && p.has("Enabled") {
		on, err := p.flag("Enabled", true)
		if err != nil {
			return wiring.Wire{}, err
		}
		state = "DISABLED"
		if on {
			state = "ENABLED"
		}
	}
	spec := bus.Rule{Name: ruleName, ARN: x.guessArn(eventsRule, ruleName), Bus: busName, Pattern: pattern, State: state, TargetID: r.ID + name}
	if t, ok, err := p.obj("Target"); err != nil {
		return wiring.Wire{}, err
	} else if ok {
		if id, _ := t.str("Id"); id != "" {
			spec.TargetID = id
		}
	}
	if err := readTargetInput(p, &spec); err != nil {
		return wiring.Wire{}, err
	}
	if err := spec.Check(); err != nil {
		return wiring.Wire{}, fmt.Errorf("%s: %w", p.at, err)
	}
	// The dead-letter queue SAM makes ({Type: SQS}) is made at the AWS
	// endpoint; without one, the rule goes without.
	if dlq, _ := p.m["DeadLetterConfig"].(map[string]any); dlq != nil {
		if queue, _ := dlq[cfn.ImplicitQueue].(string); queue != "" {
			if rec := x.rec.Resources[queue]; rec == nil || rec.Skipped {
				x.warn("%s: the dead-letter queue %s is not made (no AWS endpoint is set): events the rule fails to deliver are logged, not kept", p.at, queue)
				spec.DeadLetterArn = ""
			}
		}
	}
	src, err := json.Marshal(spec)
	if err != nil {
		return wiring.Wire{}, err
	}
	return wiring.Wire{Kind: bus.Kind, Source: src, Target: target}, nil
}
