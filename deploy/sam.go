package deploy

import (
	"context"
	"encoding/json"
	"fmt"

	"stepwise/service"
	"stepwise/sfnapi"
	"stepwise/wiring"
)

// AWS::Serverless::StateMachine, SAM's state machine, made as the
// AWS::StepFunctions::StateMachine SAM turns it into: Definition (an
// object) or DefinitionUri (a path from the template's folder, an
// s3:// URI, or {Bucket, Key, Version}), DefinitionSubstitutions, Name,
// Type, Role (else a role ARN made up for it), Logging, Tracing and Tags
// (a map; SAM adds stateMachine:createdBy). Policies, PermissionsBoundary,
// RolePath and PropagateTags are accepted and have no effect here: no IAM
// runs locally. Ref is its ARN; Fn::GetAtt gives Arn and Name (and
// StateMachineRevisionId).
//
// AutoPublishAlias publishes the state machine's revision as a version
// when it changed and points an alias of that name at it, as SAM does
// (the versions before are kept); a DeploymentPreference that is not
// ALL_AT_ONCE is applied all at once, with a warning.
//
// Events are left to samEvents: deploy/schedule.go turns Schedule and
// ScheduleV2 events into schedules.
type samStateMachineKind struct{}

const samStateMachine = "AWS::Serverless::StateMachine"

func init() { register(samStateMachineKind{}, samStateMachine) }

func (samStateMachineKind) nameOf(x *run, r *resource) (string, error) {
	name, err := smString(r.Props, "Name")
	return cmpOr(name, x.name(r.ID, 80)), err
}

func (samStateMachineKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	return x.findStateMachine(ctx, name)
}

// samEvents, when set (by deploy/schedule.go's init), makes a SAM state
// machine's Events (r.Props["Events"], as the template has them, already
// resolved) once the state machine is made, updated or found unchanged,
// for every SAM state machine, with Events or without (so that events
// gone from the template can go): smArn is what the events start (the
// state machine's ARN, or its AutoPublishAlias's with
// UseAliasAsEventTarget), prev the record of the last deploy (nil for a
// new resource). An error fails the resource.
//
// It returns the wires of the events it does not make schedules of
// (wire.go).
var samEvents func(ctx context.Context, x *run, r *resource, smArn string, prev *Record) ([]wiring.Wire, error)

// samEventsRemove, when set, deletes what samEvents made for a SAM state
// machine, before the state machine is deleted (rec is its record).
var samEventsRemove func(ctx context.Context, x *run, id string, rec *Record) error

// samSpec is a SAM state machine's record: the state machine and what
// AutoPublishAlias made.
type samSpec struct {
	StateMachine stateMachineSpec `json:"stateMachine"`
	Alias        string           `json:"alias,omitempty"`
	AliasArn     string           `json:"aliasArn,omitempty"`
	VersionArn   string           `json:"versionArn,omitempty"`
}

func (samStateMachineKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	src, err := samDefinition(r.Props)
	if err != nil {
		return nil, "", err
	}
	spec := &samSpec{}
	sm := &spec.StateMachine
	if sm.Definition, err = x.definition(ctx, r, src); err != nil {
		return nil, "", err
	}
	if sm.Name, err = smString(r.Props, "Name"); err != nil {
		return nil, "", err
	}
	if sm.Name == "" {
		sm.Name = x.name(r.ID, 80)
	}
	if sm.Type, err = smString(r.Props, "Type"); err != nil {
		return nil, "", err
	}
	if sm.Role, err = smString(r.Props, "Role"); err != nil {
		return nil, "", err
	}
	if sm.Role == "" {
		// The role SAM makes for it, <Id>Role, which Fn::GetAtt gives.
		sm.Role = x.guessArn("AWS::IAM::Role", x.roleName(r.ID+"Role"))
	}
	if err := x.smConfigurations(r.ID, sm, r.Props["Logging"], r.Props["Tracing"], nil, "Logging", "Tracing", ""); err != nil {
		return nil, "", err
	}
	if sm.Tags, err = tagsOf(r.Props["Tags"]); err != nil {
		return nil, "", fmt.Errorf("Properties.%w", err)
	}
	sm.Tags["stateMachine:createdBy"] = "SAM"
	if spec.Alias, err = smString(r.Props, "AutoPublishAlias"); err != nil {
		return nil, "", err
	}
	if pref, ok := r.Props["DeploymentPreference"].(map[string]any); ok && spec.Alias != "" {
		if typ := defText(pref["Type"]); typ != "" && typ != "ALL_AT_ONCE" {
			x.warn("%s: DeploymentPreference %s is done all at once here: the alias %s routes to the new version", r.ID, typ, spec.Alias)
		}
	}

	var old samSpec
	var oldSM *stateMachineSpec
	prevArn := ""
	if prev != nil {
		_ = json.Unmarshal(prev.Spec, &old)
		oldSM, prevArn = &old.StateMachine, prev.Physical
	}
	arn, rev, action, err := x.applyStateMachine(ctx, r, sm, prevArn, oldSM)
	if err != nil {
		return nil, "", err
	}
	aliasAction, err := x.autoPublish(ctx, arn, spec, &old, action == Updated || action == Unchanged, action == Unchanged)
	if err != nil {
		// The state machine is made: recorded without its alias, which
		// the next deploy makes.
		made := *spec
		made.Alias, made.AliasArn, made.VersionArn = old.Alias, old.AliasArn, old.VersionArn
		return stateMachineRecord(arn, sm, rev, specOf(&made)), "", err
	}
	if action == Unchanged && aliasAction != Unchanged {
		action = Updated
	}
	var wires []wiring.Wire
	if samEvents != nil {
		target := arn
		if use, _ := smBool(r.Props["UseAliasAsEventTarget"], "UseAliasAsEventTarget"); use && spec.AliasArn != "" {
			target = spec.AliasArn
		}
		if wires, err = samEvents(ctx, x, r, target, prev); err != nil {
			// The next deploy makes the events again (the hook runs on
			// every deploy), on the state machine recorded here.
			return stateMachineRecord(arn, sm, rev, specOf(spec)), "", err
		}
	} else if events, ok := r.Props["Events"].(map[string]any); ok && len(events) > 0 {
		x.warn("%s: its Events (%d) are not made here", r.ID, len(events))
	}
	rec := stateMachineRecord(arn, sm, rev, specOf(spec))
	rec.Wires = wires
	return rec, action, nil
}

// autoPublish publishes the state machine's current revision (a
// revision published already keeps its version) and points the alias at
// it; sameMachine says the state machine is the one old's alias was of,
// unchanged that it has the revision it had then. It fills spec's
// VersionArn and AliasArn.
func (x *run) autoPublish(ctx context.Context, smArn string, spec, old *samSpec, sameMachine, unchanged bool) (Action, error) {
	if !sameMachine {
		old = &samSpec{}
	}
	if spec.Alias == "" {
		if old.AliasArn != "" {
			return Updated, x.deleteAlias(ctx, old.AliasArn)
		}
		return Unchanged, nil
	}
	if unchanged && old.Alias == spec.Alias && old.VersionArn != "" {
		// Nothing to publish if the alias still routes to the version.
		out, err := x.d.Service.DescribeStateMachineAlias(ctx, &service.DescribeStateMachineAliasInput{StateMachineAliasArn: old.AliasArn})
		if err != nil && !isCode(err, sfnapi.CodeResourceNotFound) {
			return "", err
		}
		if err == nil && len(out.RoutingConfiguration) == 1 && out.RoutingConfiguration[0].StateMachineVersionArn == old.VersionArn {
			spec.VersionArn, spec.AliasArn = old.VersionArn, old.AliasArn
			return Unchanged, nil
		}
	}
	version, err := x.publishVersion(ctx, smArn, "", "")
	if err != nil {
		return "", err
	}
	spec.VersionArn = version
	spec.AliasArn = smArn + ":" + spec.Alias
	routes := []aliasRoute{{Version: version, Weight: 100}}
	aliasExists := false
	if old.AliasArn == spec.AliasArn {
		if aliasExists, err = x.aliasExists(ctx, spec.AliasArn); err != nil {
			return "", err
		}
	}
	switch {
	case aliasExists && old.VersionArn == version:
		return Unchanged, nil
	case aliasExists:
		_, err = x.d.Service.UpdateStateMachineAlias(ctx, &service.UpdateStateMachineAliasInput{StateMachineAliasArn: spec.AliasArn, RoutingConfiguration: aliasRouting(routes)})
		return Updated, err
	}
	if old.AliasArn != "" && old.AliasArn != spec.AliasArn {
		if err := x.deleteAlias(ctx, old.AliasArn); err != nil {
			return "", err
		}
	}
	_, err = x.d.Service.CreateStateMachineAlias(ctx, &service.CreateStateMachineAliasInput{Name: spec.Alias, RoutingConfiguration: aliasRouting(routes)})
	return Created, err
}

func (samStateMachineKind) remove(ctx context.Context, x *run, id string, rec *Record) error {
	if samEventsRemove != nil {
		if err := samEventsRemove(ctx, x, id, rec); err != nil {
			return err
		}
	}
	return x.deleteStateMachine(ctx, rec.Physical)
}
