package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"stepwise/deploy/cfn"
	"stepwise/service"
	"stepwise/sfnapi"
)

// AWS::StepFunctions::StateMachine: Ref is its ARN; Fn::GetAtt gives
// Arn, Name and StateMachineRevisionId ("INITIAL" until its first
// update, the value PublishStateMachineVersion takes for it). A new
// definition, role, logging, tracing or encryption configuration is an
// update (a new revision when the definition, role or logging changed);
// new tags are put on it; a new name or type replaces it.
type stateMachineKind struct{}

func init() { register(stateMachineKind{}, "AWS::StepFunctions::StateMachine") }

// stateMachineSpec is what a state machine is made with.
type stateMachineSpec struct {
	Name       string                           `json:"name"`
	Type       string                           `json:"type"`
	Definition string                           `json:"definition"`
	Role       string                           `json:"role"`
	Logging    *service.LoggingConfiguration    `json:"logging,omitempty"`
	Tracing    *service.TracingConfiguration    `json:"tracing,omitempty"`
	Encryption *service.EncryptionConfiguration `json:"encryption,omitempty"`
	Tags       map[string]string                `json:"tags,omitempty"`
}

func (stateMachineKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	src, err := cfnDefinition(r.Props)
	if err != nil {
		return nil, "", err
	}
	spec := &stateMachineSpec{}
	if spec.Definition, err = x.definition(ctx, r, src); err != nil {
		return nil, "", err
	}
	if spec.Name, err = smString(r.Props, "StateMachineName"); err != nil {
		return nil, "", err
	}
	if spec.Name == "" {
		spec.Name = x.name(r.ID, 80)
	}
	if spec.Type, err = smString(r.Props, "StateMachineType"); err != nil {
		return nil, "", err
	}
	if spec.Role, err = smString(r.Props, "RoleArn"); err != nil {
		return nil, "", err
	}
	if spec.Role == "" {
		spec.Role = x.madeUpRole(r.ID)
	}
	if err := x.smConfigurations(r.ID, spec, r.Props["LoggingConfiguration"], r.Props["TracingConfiguration"], r.Props["EncryptionConfiguration"], "LoggingConfiguration", "TracingConfiguration", "EncryptionConfiguration"); err != nil {
		return nil, "", err
	}
	if spec.Tags, err = tagsOf(r.Props["Tags"]); err != nil {
		return nil, "", fmt.Errorf("Properties.%w", err)
	}
	var old *stateMachineSpec
	prevArn := ""
	if prev != nil {
		old = &stateMachineSpec{}
		_ = json.Unmarshal(prev.Spec, old)
		prevArn = prev.Physical
	}
	arn, rev, action, err := x.applyStateMachine(ctx, r, spec, prevArn, old)
	if err != nil {
		return nil, "", err
	}
	return stateMachineRecord(arn, spec, rev, specOf(spec)), action, nil
}

func (stateMachineKind) nameOf(x *run, r *resource) (string, error) {
	name, err := smString(r.Props, "StateMachineName")
	return cmpOr(name, x.name(r.ID, 80)), err
}

func (stateMachineKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	return x.findStateMachine(ctx, name)
}

// findStateMachine looks a state machine up by its name.
func (x *run) findStateMachine(ctx context.Context, name string) (*Record, error) {
	arn := x.prefix("stateMachine") + name
	out, err := x.d.Service.DescribeStateMachine(ctx, &service.DescribeStateMachineInput{StateMachineArn: arn, IncludedData: "METADATA_ONLY"})
	switch {
	case isCode(err, sfnapi.CodeStateMachineDoesNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &Record{Physical: arn, Attrs: map[string]any{"Arn": arn, "Name": name}, created: time.Time(out.CreationDate)}, nil
}

func (stateMachineKind) remove(ctx context.Context, x *run, _ string, rec *Record) error {
	return x.deleteStateMachine(ctx, rec.Physical)
}

func stateMachineRecord(arn string, spec *stateMachineSpec, revision string, body json.RawMessage) *Record {
	return &Record{Physical: arn, Attrs: map[string]any{"Arn": arn, "Name": spec.Name, "StateMachineRevisionId": revision}, Spec: body}
}

// madeUpRole is the role of a state machine whose template names none:
// the service wants one, and nothing here assumes it.
func (x *run) madeUpRole(id string) string {
	return x.guessArn("AWS::IAM::Role", x.name(id+"Role", 64))
}

// applyStateMachine makes the state machine spec for r, or brings the
// one at prevArn (made with old) to it. It returns the state machine's
// ARN and its current revision ("INITIAL" for the first).
func (x *run) applyStateMachine(ctx context.Context, r *resource, spec *stateMachineSpec, prevArn string, old *stateMachineSpec) (string, string, Action, error) {
	svc := x.d.Service
	exists := false
	revision := ""
	if prevArn != "" {
		out, err := svc.DescribeStateMachine(ctx, &service.DescribeStateMachineInput{StateMachineArn: prevArn, IncludedData: "METADATA_ONLY"})
		switch {
		case err == nil:
			exists, revision = true, cmpOr(out.RevisionID, "INITIAL")
		case !isCode(err, sfnapi.CodeStateMachineDoesNotExist):
			return "", "", "", err
		}
	}
	if exists && old != nil && old.Name == spec.Name && sameMachineType(old.Type, spec.Type) {
		if string(specOf(old)) == string(specOf(spec)) {
			return prevArn, revision, Unchanged, nil
		}
		if old.Definition != spec.Definition || old.Role != spec.Role || string(specOf(old.Logging)) != string(specOf(spec.Logging)) ||
			string(specOf(old.Tracing)) != string(specOf(spec.Tracing)) || string(specOf(old.Encryption)) != string(specOf(spec.Encryption)) {
			in := &service.UpdateStateMachineInput{StateMachineArn: prevArn, Definition: &spec.Definition, RoleArn: &spec.Role,
				LoggingConfiguration: spec.Logging, TracingConfiguration: spec.Tracing, EncryptionConfiguration: spec.Encryption}
			if in.LoggingConfiguration == nil {
				off := "OFF"
				in.LoggingConfiguration = &service.LoggingConfiguration{Level: &off}
			}
			if in.TracingConfiguration == nil {
				in.TracingConfiguration = &service.TracingConfiguration{Enabled: new(bool)}
			}
			if in.EncryptionConfiguration == nil {
				in.EncryptionConfiguration = &service.EncryptionConfiguration{Type: "AWS_OWNED_KEY"}
			}
			if _, err := svc.UpdateStateMachine(ctx, in); err != nil {
				return "", "", "", err
			}
		}
		if err := x.syncTags(ctx, prevArn, old.Tags, spec.Tags); err != nil {
			return "", "", "", err
		}
		rev, err := x.smRevision(ctx, prevArn)
		return prevArn, rev, Updated, err
	}
	deleted := false
	if exists && old != nil && old.Name == spec.Name {
		// A new type under the same name: the old one goes first.
		if err := x.deleteStateMachine(ctx, prevArn); err != nil {
			return "", "", "", err
		}
		exists, deleted = false, true
	}
	if !deleted {
		arn, rev, action, done, err := x.claimStateMachine(ctx, r, spec)
		if done {
			if err == nil && exists { // renamed onto one the stack has: the old one goes
				if err = x.deleteStateMachine(ctx, prevArn); err == nil {
					action = Replaced
				}
			}
			return arn, rev, action, err
		}
	}
	out, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{Name: spec.Name, Definition: spec.Definition, RoleArn: spec.Role,
		Type: spec.Type, LoggingConfiguration: spec.Logging, TracingConfiguration: spec.Tracing, EncryptionConfiguration: spec.Encryption,
		Tags: serviceTags(spec.Tags)})
	if err != nil {
		return "", "", "", err
	}
	if deleted {
		return out.StateMachineArn, "INITIAL", Replaced, nil
	}
	if !exists {
		return out.StateMachineArn, "INITIAL", Created, nil
	}
	if err := x.deleteStateMachine(ctx, prevArn); err != nil {
		return "", "", "", err
	}
	return out.StateMachineArn, "INITIAL", Replaced, nil
}

// claimStateMachine looks for a state machine of spec's name before it
// is created (claim): done when one is there, brought to spec as the
// stack's, or refused.
func (x *run) claimStateMachine(ctx context.Context, r *resource, spec *stateMachineSpec) (arn, rev string, action Action, done bool, err error) {
	arn = x.prefix("stateMachine") + spec.Name
	found, err := x.findStateMachine(ctx, spec.Name)
	if err != nil {
		return "", "", "", true, err
	}
	own, err := x.claim(ctx, r, spec.Name, found, &Record{Physical: arn, Spec: specOf(spec)})
	if err != nil || own == nil {
		return "", "", "", err != nil, err
	}
	// What is there, with the tags the stack knows it by.
	out, err := x.d.Service.DescribeStateMachine(ctx, &service.DescribeStateMachineInput{StateMachineArn: arn})
	if err != nil {
		return "", "", "", true, err
	}
	was := &stateMachineSpec{}
	if !oldSpec(own, was) || was.Name != spec.Name {
		var sam samSpec
		if oldSpec(own, &sam) && sam.StateMachine.Name == spec.Name {
			*was = sam.StateMachine
		} else {
			*was = stateMachineSpec{Name: spec.Name}
		}
	}
	was.Type, was.Definition, was.Role = out.Type, out.Definition, out.RoleArn
	arn, rev, action, err = x.applyStateMachine(ctx, r, spec, arn, was)
	return arn, rev, action, true, err
}

// sameMachineType says whether two StateMachineType values are the same type
// (none is STANDARD).
func sameMachineType(a, b string) bool { return cmpOr(a, "STANDARD") == cmpOr(b, "STANDARD") }

// smRevision is a state machine's current revision id, "INITIAL" until it
// is first updated.
func (x *run) smRevision(ctx context.Context, arn string) (string, error) {
	out, err := x.d.Service.DescribeStateMachine(ctx, &service.DescribeStateMachineInput{StateMachineArn: arn, IncludedData: "METADATA_ONLY"})
	if err != nil {
		return "", err
	}
	return cmpOr(out.RevisionID, "INITIAL"), nil
}

func (x *run) deleteStateMachine(ctx context.Context, arn string) error {
	_, err := x.d.Service.DeleteStateMachine(ctx, &service.DeleteStateMachineInput{StateMachineArn: arn})
	if isCode(err, sfnapi.CodeStateMachineDoesNotExist) {
		return nil
	}
	return err
}

// smConfigurations reads the logging, tracing and encryption
// configurations (CloudFormation's names for them are the same in SAM's
// Logging and Tracing) into spec. A customer managed KMS key is not
// supported here: the state machine is made with AWS's own key, and a
// warning says so.
func (x *run) smConfigurations(id string, spec *stateMachineSpec, logging, tracing, encryption any, lName, tName, eName string) error {
	if logging != nil {
		m, ok := logging.(map[string]any)
		if !ok {
			return fmt.Errorf("Properties.%s: an object, got %s", lName, cfn.TypeName(logging))
		}
		l := &service.LoggingConfiguration{}
		if v, ok := m["Level"]; ok {
			s := defText(v)
			l.Level = &s
		}
		if v, ok := m["IncludeExecutionData"]; ok {
			b, err := smBool(v, lName+".IncludeExecutionData")
			if err != nil {
				return err
			}
			l.IncludeExecutionData = &b
		}
		if v, ok := m["Destinations"]; ok {
			list, ok := v.([]any)
			if !ok {
				return fmt.Errorf("Properties.%s.Destinations: a list, got %s", lName, cfn.TypeName(v))
			}
			for i, d := range list {
				dm, _ := d.(map[string]any)
				g, _ := dm["CloudWatchLogsLogGroup"].(map[string]any)
				arn, _ := g["LogGroupArn"].(string)
				if arn == "" {
					return fmt.Errorf("Properties.%s.Destinations[%d]: {CloudWatchLogsLogGroup: {LogGroupArn}}", lName, i)
				}
				l.Destinations = append(l.Destinations, service.LogDestination{CloudWatchLogsLogGroup: &service.CloudWatchLogsLogGroup{LogGroupArn: &arn}})
			}
		}
		spec.Logging = l
	}
	if tracing != nil {
		m, ok := tracing.(map[string]any)
		if !ok {
			return fmt.Errorf("Properties.%s: an object, got %s", tName, cfn.TypeName(tracing))
		}
		t := &service.TracingConfiguration{}
		if v, ok := m["Enabled"]; ok {
			b, err := smBool(v, tName+".Enabled")
			if err != nil {
				return err
			}
			t.Enabled = &b
		}
		spec.Tracing = t
	}
	if encryption != nil {
		m, ok := encryption.(map[string]any)
		if !ok {
			return fmt.Errorf("Properties.%s: an object, got %s", eName, cfn.TypeName(encryption))
		}
		typ := defText(m["Type"])
		if typ == "CUSTOMER_MANAGED_KMS_KEY" {
			x.warn("%s: %s with a customer managed KMS key is not supported here; the state machine is encrypted with AWS's own key", id, eName)
			return nil
		}
		spec.Encryption = &service.EncryptionConfiguration{Type: typ}
	}
	return nil
}

// smString reads an optional string property (a number or a boolean is
// taken as its text).
func smString(props map[string]any, name string) (string, error) {
	return resProps{m: props, at: "Properties"}.str(name)
}

// smBool reads a boolean written as true/false or "true"/"false".
func smBool(v any, where string) (bool, error) {
	if b, ok := boolOf(v); ok {
		return b, nil
	}
	return false, errors.New("Properties." + where + ": true or false, got " + cfn.TypeName(v))
}
