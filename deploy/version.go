package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"stepwise/deploy/cfn"
	"stepwise/service"
	"stepwise/sfnapi"
)

// AWS::StepFunctions::StateMachineVersion publishes the state machine's
// current revision: Ref and Fn::GetAtt Arn give the version's ARN. As on
// CloudFormation every property's change replaces it: a new version is
// published, and the old one is deleted once the deploy is done (so an
// alias updated in the same deploy no longer routes to it) unless
// UpdateReplacePolicy is Retain. A version follows the state machine's
// updates when its StateMachineRevisionId is the state machine's
// (!GetAtt Machine.StateMachineRevisionId, as CDK and SAM write it):
// without one, nothing of the version changes when the state machine
// does.
type versionKind struct{}

// AWS::StepFunctions::StateMachineAlias: Ref and Fn::GetAtt Arn give the
// alias's ARN. A new RoutingConfiguration or Description updates it; a
// new Name or state machine replaces it. A DeploymentPreference routes
// the alias to its StateMachineVersionArn at once: a gradual (CANARY,
// LINEAR) deployment is done all at once here, with a warning.
type aliasKind struct{}

func init() {
	register(versionKind{}, "AWS::StepFunctions::StateMachineVersion")
	register(aliasKind{}, "AWS::StepFunctions::StateMachineAlias")
}

type versionSpec struct {
	StateMachine string `json:"stateMachine"`
	Revision     string `json:"revision,omitempty"`
	Description  string `json:"description,omitempty"`
}

func (versionKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	var spec versionSpec
	var err error
	if spec.StateMachine, err = smString(r.Props, "StateMachineArn"); err != nil {
		return nil, "", err
	}
	if spec.StateMachine == "" {
		return nil, "", errors.New("Properties.StateMachineArn: a version needs the ARN of its state machine")
	}
	if spec.Revision, err = smString(r.Props, "StateMachineRevisionId"); err != nil {
		return nil, "", err
	}
	if spec.Description, err = smString(r.Props, "Description"); err != nil {
		return nil, "", err
	}
	body := specOf(spec)
	exists := false
	if prev != nil {
		if exists, err = x.versionExists(ctx, prev.Physical); err != nil {
			return nil, "", err
		}
		if exists && sameSpec(prev, body) {
			return &Record{Physical: prev.Physical, Attrs: map[string]any{"Arn": prev.Physical}, Spec: body}, Unchanged, nil
		}
	}
	arn, err := x.publishVersion(ctx, spec.StateMachine, spec.Revision, spec.Description)
	if err != nil {
		return nil, "", err
	}
	rec := &Record{Physical: arn, Attrs: map[string]any{"Arn": arn}, Spec: body}
	switch {
	case !exists:
		return rec, Created, nil
	case arn == prev.Physical: // the revision had this version already
		return rec, Updated, nil
	}
	if r.Def.UpdateReplacePolicy != "Retain" {
		old := prev.Physical
		x.later = append(x.later, func(ctx context.Context) error {
			if err := x.deleteVersion(ctx, old); err != nil {
				return fmt.Errorf("%s: the replaced version %s: %w", r.ID, old, err)
			}
			return nil
		})
	}
	return rec, Replaced, nil
}

func (versionKind) remove(ctx context.Context, x *run, _ string, rec *Record) error {
	return x.deleteVersion(ctx, rec.Physical)
}

// publishVersion publishes a state machine's current revision (only if it is
// revision, when one is given) and returns the version's ARN; a revision
// published already gives the version it has.
func (x *run) publishVersion(ctx context.Context, smArn, revision, description string) (string, error) {
	in := &service.PublishStateMachineVersionInput{StateMachineArn: smArn, Description: description}
	if revision != "" {
		in.RevisionID = &revision
	}
	out, err := x.d.Service.PublishStateMachineVersion(ctx, in)
	if err != nil {
		return "", err
	}
	return out.StateMachineVersionArn, nil
}

func (x *run) versionExists(ctx context.Context, arn string) (bool, error) {
	_, err := x.d.Service.DescribeStateMachine(ctx, &service.DescribeStateMachineInput{StateMachineArn: arn, IncludedData: "METADATA_ONLY"})
	switch {
	case err == nil:
		return true, nil
	case isCode(err, sfnapi.CodeStateMachineDoesNotExist), isCode(err, sfnapi.CodeResourceNotFound):
		return false, nil
	}
	return false, err
}

func (x *run) deleteVersion(ctx context.Context, arn string) error {
	_, err := x.d.Service.DeleteStateMachineVersion(ctx, &service.DeleteStateMachineVersionInput{StateMachineVersionArn: arn})
	if isCode(err, sfnapi.CodeStateMachineDoesNotExist) || isCode(err, sfnapi.CodeResourceNotFound) {
		return nil
	}
	return err
}

type aliasSpec struct {
	Name         string       `json:"name"`
	StateMachine string       `json:"stateMachine"`
	Description  string       `json:"description,omitempty"`
	Routes       []aliasRoute `json:"routes"`
}

type aliasRoute struct {
	Version string `json:"version"`
	Weight  int    `json:"weight"`
}

func (aliasKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	var spec aliasSpec
	var err error
	if spec.Name, err = smString(r.Props, "Name"); err != nil {
		return nil, "", err
	}
	if spec.Name == "" {
		spec.Name = x.name(r.ID, 80)
	}
	if spec.Description, err = smString(r.Props, "Description"); err != nil {
		return nil, "", err
	}
	routing, hasRouting := r.Props["RoutingConfiguration"]
	pref, hasPref := r.Props["DeploymentPreference"]
	switch {
	case hasRouting && hasPref:
		return nil, "", errors.New("Properties: give either RoutingConfiguration or DeploymentPreference, not both")
	case hasRouting:
		list, ok := routing.([]any)
		if !ok || len(list) == 0 {
			return nil, "", fmt.Errorf("Properties.RoutingConfiguration: a list of {StateMachineVersionArn, Weight}, got %s", cfn.TypeName(routing))
		}
		for i, e := range list {
			m, _ := e.(map[string]any)
			arn, _ := m["StateMachineVersionArn"].(string)
			w, err := smInt(m["Weight"])
			if arn == "" || err != nil {
				return nil, "", fmt.Errorf("Properties.RoutingConfiguration[%d]: {StateMachineVersionArn, Weight (0-100)}", i)
			}
			spec.Routes = append(spec.Routes, aliasRoute{Version: arn, Weight: w})
		}
	case hasPref:
		m, _ := pref.(map[string]any)
		arn, _ := m["StateMachineVersionArn"].(string)
		if arn == "" {
			return nil, "", errors.New("Properties.DeploymentPreference: needs a StateMachineVersionArn")
		}
		if typ := defText(m["Type"]); typ != "" && typ != "ALL_AT_ONCE" {
			x.warn("%s: DeploymentPreference %s is done all at once here: the alias routes to %s", r.ID, typ, arn)
		}
		spec.Routes = []aliasRoute{{Version: arn, Weight: 100}}
	default:
		return nil, "", errors.New("Properties: an alias needs a RoutingConfiguration or a DeploymentPreference")
	}
	spec.StateMachine = smOf(spec.Routes[0].Version)
	arn := spec.StateMachine + ":" + spec.Name
	body := specOf(spec)
	exists := false
	if prev != nil {
		if exists, err = x.aliasExists(ctx, prev.Physical); err != nil {
			return nil, "", err
		}
	}
	rec := &Record{Physical: arn, Attrs: map[string]any{"Arn": arn}, Spec: body}
	if exists && prev.Physical == arn {
		if sameSpec(prev, body) {
			return rec, Unchanged, nil
		}
		desc := spec.Description
		if _, err := x.d.Service.UpdateStateMachineAlias(ctx, &service.UpdateStateMachineAliasInput{StateMachineAliasArn: arn,
			Description: &desc, RoutingConfiguration: aliasRouting(spec.Routes)}); err != nil {
			return nil, "", err
		}
		return rec, Updated, nil
	}
	if _, err := x.d.Service.CreateStateMachineAlias(ctx, &service.CreateStateMachineAliasInput{Name: spec.Name,
		Description: spec.Description, RoutingConfiguration: aliasRouting(spec.Routes)}); err != nil {
		return nil, "", err
	}
	if exists {
		if err := x.deleteAlias(ctx, prev.Physical); err != nil {
			return nil, "", err
		}
		return rec, Replaced, nil
	}
	return rec, Created, nil
}

func (aliasKind) remove(ctx context.Context, x *run, _ string, rec *Record) error {
	return x.deleteAlias(ctx, rec.Physical)
}

func (x *run) aliasExists(ctx context.Context, arn string) (bool, error) {
	_, err := x.d.Service.DescribeStateMachineAlias(ctx, &service.DescribeStateMachineAliasInput{StateMachineAliasArn: arn})
	switch {
	case err == nil:
		return true, nil
	case isCode(err, sfnapi.CodeResourceNotFound), isCode(err, sfnapi.CodeStateMachineDoesNotExist):
		return false, nil
	}
	return false, err
}

func (x *run) deleteAlias(ctx context.Context, arn string) error {
	_, err := x.d.Service.DeleteStateMachineAlias(ctx, &service.DeleteStateMachineAliasInput{StateMachineAliasArn: arn})
	if isCode(err, sfnapi.CodeResourceNotFound) || isCode(err, sfnapi.CodeStateMachineDoesNotExist) {
		return nil
	}
	return err
}

func aliasRouting(routes []aliasRoute) []service.RoutingConfigurationListItem {
	out := make([]service.RoutingConfigurationListItem, len(routes))
	for i, r := range routes {
		w := r.Weight
		out[i] = service.RoutingConfigurationListItem{StateMachineVersionArn: r.Version, Weight: &w}
	}
	return out
}

// smOf is a version's or alias's state machine ARN: the ARN
// without its last ":QUALIFIER" (a state machine's ARN has 7 parts).
func smOf(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) > 7 {
		return strings.Join(parts[:7], ":")
	}
	return arn
}

// smInt reads a whole number written as a number or as text.
func smInt(v any) (int, error) {
	var n int
	_, err := fmt.Sscan(defText(v), &n)
	if v == nil || err != nil || defText(v) != fmt.Sprint(n) {
		return 0, fmt.Errorf("not a whole number: %v", v)
	}
	return n, nil
}
