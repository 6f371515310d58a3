package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"stepwise/service"
	"stepwise/sfnapi"
)

// AWS::StepFunctions::Activity: Ref is its ARN; Fn::GetAtt gives Arn and
// Name. A new Name replaces it; new Tags are put on it.
type activityKind struct{}

func init() { register(activityKind{}, "AWS::StepFunctions::Activity") }

type activitySpec struct {
	Name       string            `json:"name"`
	Tags       map[string]string `json:"tags,omitempty"`
	Encryption map[string]any    `json:"encryption,omitempty"`
}

func (activityKind) nameOf(_ *run, r *resource) (string, error) {
	name, _ := r.Props["Name"].(string)
	if name == "" {
		return "", fmt.Errorf("Properties.Name: an activity needs a Name")
	}
	return name, nil
}

func (activityKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	arn := x.prefix("activity") + name
	out, err := x.d.Service.DescribeActivity(ctx, &service.DescribeActivityInput{ActivityArn: arn})
	switch {
	case isCode(err, sfnapi.CodeActivityDoesNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &Record{Physical: arn, Attrs: map[string]any{"Arn": arn, "Name": name}, created: time.Time(out.CreationDate)}, nil
}

func (k activityKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	name, err := k.nameOf(x, r)
	if err != nil {
		return nil, "", err
	}
	tags, err := tagsOf(r.Props["Tags"])
	if err != nil {
		return nil, "", fmt.Errorf("Properties.%w", err)
	}
	enc, _ := r.Props["EncryptionConfiguration"].(map[string]any)
	spec := activitySpec{Name: name, Tags: tags, Encryption: enc}
	arn := x.prefix("activity") + name
	var old activitySpec
	exists := false
	if prev != nil {
		_ = json.Unmarshal(prev.Spec, &old)
		_, err := x.d.Service.DescribeActivity(ctx, &service.DescribeActivityInput{ActivityArn: prev.Physical})
		switch {
		case err == nil:
			exists = true
		case !isCode(err, sfnapi.CodeActivityDoesNotExist):
			return nil, "", err
		}
	}
	rec := &Record{Physical: arn, Attrs: map[string]any{"Arn": arn, "Name": name}, Spec: specOf(spec)}
	switch {
	case exists && old.Name == name:
		if sameSpec(prev, rec.Spec) {
			return rec, Unchanged, nil
		}
		if err := x.syncTags(ctx, arn, old.Tags, tags); err != nil {
			return nil, "", err
		}
		return rec, Updated, nil
	}
	found, err := k.find(ctx, x, name)
	if err != nil {
		return nil, "", err
	}
	own, err := x.claim(ctx, r, name, found, rec)
	if err != nil {
		return nil, "", err
	}
	if own != nil {
		// There already, and the stack's: brought to the template's.
		var was activitySpec
		oldSpec(own, &was)
		if err := x.syncTags(ctx, arn, was.Tags, tags); err != nil {
			return nil, "", err
		}
		action := Updated
		if bytes.Equal(own.Spec, rec.Spec) {
			action = Unchanged
		}
		if exists {
			if err := k.remove(ctx, x, r.ID, prev); err != nil {
				return nil, "", err
			}
			action = Replaced
		}
		return rec, action, nil
	}
	in := &service.CreateActivityInput{Name: name, Tags: serviceTags(tags)}
	if enc != nil {
		in.EncryptionConfiguration = &enc
	}
	if _, err := x.d.Service.CreateActivity(ctx, in); err != nil {
		return nil, "", err
	}
	if exists { // renamed: the old one goes
		if err := k.remove(ctx, x, r.ID, prev); err != nil {
			return nil, "", err
		}
		return rec, Replaced, nil
	}
	return rec, Created, nil
}

func (activityKind) remove(ctx context.Context, x *run, _ string, rec *Record) error {
	_, err := x.d.Service.DeleteActivity(ctx, &service.DeleteActivityInput{ActivityArn: rec.Physical})
	if isCode(err, sfnapi.CodeActivityDoesNotExist) {
		return nil
	}
	return err
}

// prefix is the ARN of a Step Functions resource type up to its name:
// arn:aws:states:REGION:ACCOUNT:activity:.
func (x *run) prefix(typ string) string {
	return "arn:" + x.partition() + ":states:" + x.region() + ":" + x.account() + ":" + typ + ":"
}
