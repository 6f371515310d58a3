package service

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"stepwise/asl"
	"stepwise/awsarn"
	"stepwise/engine/start"
	"stepwise/interp"
	"stepwise/sfnapi"
	"stepwise/store"
)

func validateTags(v *validator, tags []Tag) {
	for i, t := range tags {
		member := "tags." + strconv.Itoa(i+1) + ".member."
		key := ""
		if t.Key != nil {
			key = *t.Key
		}
		if v.required(member+"key", key) {
			v.length(member+"key", key, 1, maxTagKeyLength)
		}
		if t.Value != nil {
			v.length(member+"value", *t.Value, 0, maxTagValueLength)
		}
	}
}

// PolicyTagPrefix is the prefix of the tags that set a state machine's
// failure policies: stepwise:policy/<state> = <policy>[,<policy>].
const PolicyTagPrefix = interp.PolicyTagPrefix

// checkPolicyTags refuses a failure-policy tag (stepwise:policy/<state>)
// whose value is not a policy, and, given the state machine's definition
// m, one that names a state m does not have or a policy that does not
// apply to that state (finish-running: a Parallel or Map state;
// retry-failed-items: a Map state); and the warning tags likewise
// (checkWarningTags).
func checkPolicyTags(tags []Tag, m *asl.StateMachine) error {
	if err := checkWarningTags(tags, m); err != nil {
		return err
	}
	kv := map[string]string{}
	for _, t := range tags {
		if t.Key != nil && *t.Key == start.ExclusiveTag {
			v := ""
			if t.Value != nil {
				v = *t.Value
			}
			if _, err := start.ParseExclusive(v); err != nil {
				return apiErr(sfnapi.CodeValidation, "Invalid exclusive group: %v", err)
			}
		}
		if t.Key != nil && (strings.HasPrefix(*t.Key, interp.PolicyTagPrefix) || strings.HasPrefix(*t.Key, interp.HoldTagPrefix)) {
			kv[*t.Key] = ""
			if t.Value != nil {
				kv[*t.Key] = *t.Value
			}
		}
	}
	ps, err := interp.PoliciesFromTags(kv)
	if err != nil {
		return apiErr(sfnapi.CodeValidation, "Invalid failure policy: %v", err)
	}
	if m == nil {
		return nil
	}
	for _, state := range slices.Sorted(maps.Keys(ps)) {
		st := m.Find(state)
		if st == nil && slices.Contains(ps[state], interp.PolicyHeld) {
			return apiErr(sfnapi.CodeValidation, "Invalid hold: the tag %q names the state %q, which the definition does not have",
				interp.HoldTagPrefix+state, state)
		}
		if st == nil {
			return apiErr(sfnapi.CodeValidation, "Invalid failure policy: the tag %q names the state %q, which the definition does not have",
				interp.PolicyTagPrefix+state, state)
		}
		for _, p := range ps[state] {
			if p == interp.PolicyHeld {
				continue // any state can be held
			}
			ok := st.Type == asl.TypeMap || (p == interp.PolicyFinishRunning && st.Type == asl.TypeParallel)
			if !ok {
				return apiErr(sfnapi.CodeValidation, "Invalid failure policy: the tag %q sets %s on the state %q, a %s state: %s",
					interp.PolicyTagPrefix+state, p, state, st.Type, policyAppliesTo(p))
			}
		}
	}
	return nil
}

func policyAppliesTo(p interp.Policy) string {
	if p == interp.PolicyRetryFailedItems {
		return "it applies to Map states"
	}
	return "it applies to Parallel and Map states"
}

// tagsOf turns stored tags into the API's.
func tagsOf(stored []store.Tag) []Tag {
	out := make([]Tag, 0, len(stored))
	for _, t := range stored {
		out = append(out, Tag{Key: &t.Key, Value: &t.Value})
	}
	return out
}

func storeTags(tags []Tag) []store.Tag {
	out := make([]store.Tag, 0, len(tags))
	for _, t := range tags {
		st := store.Tag{Key: *t.Key}
		if t.Value != nil {
			st.Value = *t.Value
		}
		out = append(out, st)
	}
	return out
}

// taggable checks the ARN of a resource that takes tags (a state machine
// or an activity) and that it exists.
func (s *Service) taggable(ctx context.Context, resourceArn string) error {
	a, err := parseArn(resourceArn)
	if err != nil {
		return err
	}
	switch a.Resource {
	case awsarn.StateMachine, awsarn.Activity:
	default:
		return errInvalidArnResourceType(a.Resource)
	}
	if len(a.Parts) != 1 || !s.local(a) {
		return errResourceNotFound(resourceArn)
	}
	if a.Resource == awsarn.Activity {
		_, err = s.db().ActivityGet(ctx, resourceArn)
	} else {
		_, err = s.db().StateMachineGet(ctx, resourceArn)
	}
	if errors.Is(err, store.ErrNotFound) {
		return errResourceNotFound(resourceArn)
	}
	if err != nil {
		return storeError("get tagged resource", err)
	}
	return nil
}

// checkPolicyStates checks the policy and warning tags given to a state
// machine against its definition (an activity's tags are not policies).
func (s *Service) checkPolicyStates(ctx context.Context, resourceArn string, tags []Tag) error {
	if !hasRuleTag(tags) {
		return nil
	}
	sm, err := s.db().StateMachineGet(ctx, resourceArn)
	if errors.Is(err, store.ErrNotFound) {
		return nil // an activity, or gone: the tags' write says so
	}
	if err != nil {
		return storeError("get tagged resource", err)
	}
	m, err := s.parseDefinition(sm.Definition, sm.Type)
	if err != nil {
		return err
	}
	return checkPolicyTags(tags, m)
}

func resourceArnInput(v *validator, text string) {
	if v.required("resourceArn", text) {
		v.length("resourceArn", text, 1, maxArnLength)
	}
}

// TagResource adds tags to a state machine, replacing the values of keys it
// already has. A resource has at most 50 tags.
func (s *Service) TagResource(ctx context.Context, in *TagResourceInput) (*TagResourceOutput, error) {
	if _, err := s.tagResource(ctx, in, ""); err != nil {
		return nil, err
	}
	return &TagResourceOutput{}, nil
}

// tagResource is TagResource; the holds its tags place
// (stepwise:hold/<state>) are applied, by by, to the state machine's
// running executions, which it returns.
func (s *Service) tagResource(ctx context.Context, in *TagResourceInput, by string) ([]string, error) {
	v := newValidator()
	resourceArnInput(v, in.ResourceArn)
	if in.Tags == nil {
		v.add("null", "tags", "Member must not be null")
	}
	validateTags(v, in.Tags)
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := checkPolicyTags(in.Tags, nil); err != nil {
		return nil, err
	}
	if err := s.taggable(ctx, in.ResourceArn); err != nil {
		return nil, err
	}
	if err := s.checkPolicyStates(ctx, in.ResourceArn, in.Tags); err != nil {
		return nil, err
	}
	err := s.inTx(ctx, func(tx store.ExecutorTx) error {
		have, err := tx.TagList(ctx, in.ResourceArn)
		if err != nil {
			return err
		}
		keys := map[string]bool{}
		for _, t := range have {
			keys[t.Key] = true
		}
		for _, t := range in.Tags {
			keys[*t.Key] = true
		}
		if len(keys) > maxTagsPerResource {
			return errTooManyTags(in.ResourceArn, maxTagsPerResource)
		}
		return tx.TagPut(ctx, in.ResourceArn, storeTags(in.Tags))
	})
	s.starter.Forget(in.ResourceArn)
	if err != nil {
		return nil, storeError("tag resource", err)
	}
	keys := make([]string, 0, len(in.Tags))
	for _, t := range in.Tags {
		keys = append(keys, *t.Key)
	}
	return s.applyHoldTagsOf(ctx, in.ResourceArn, keys, by, true)
}

// UntagResource removes tags from a state machine; keys it does not have
// are ignored.
func (s *Service) UntagResource(ctx context.Context, in *UntagResourceInput) (*UntagResourceOutput, error) {
	if _, err := s.untagResource(ctx, in, ""); err != nil {
		return nil, err
	}
	return &UntagResourceOutput{}, nil
}

// untagResource is UntagResource; the holds whose tags it removes are
// released, by by, in the state machine's running executions, which it
// returns.
func (s *Service) untagResource(ctx context.Context, in *UntagResourceInput, by string) ([]string, error) {
	v := newValidator()
	resourceArnInput(v, in.ResourceArn)
	if in.TagKeys == nil {
		v.add("null", "tagKeys", "Member must not be null")
	}
	for i, k := range in.TagKeys {
		v.length("tagKeys."+strconv.Itoa(i+1)+".member", k, 1, maxTagKeyLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := s.taggable(ctx, in.ResourceArn); err != nil {
		return nil, err
	}
	err := s.db().TagDelete(ctx, in.ResourceArn, in.TagKeys)
	s.starter.Forget(in.ResourceArn)
	if err != nil {
		return nil, storeError("untag resource", err)
	}
	return s.applyHoldTagsOf(ctx, in.ResourceArn, in.TagKeys, by, false)
}

// ListTagsForResource lists a state machine's tags by key.
func (s *Service) ListTagsForResource(ctx context.Context, in *ListTagsForResourceInput) (*ListTagsForResourceOutput, error) {
	v := newValidator()
	resourceArnInput(v, in.ResourceArn)
	if err := v.err(); err != nil {
		return nil, err
	}
	if err := s.taggable(ctx, in.ResourceArn); err != nil {
		return nil, err
	}
	tags, err := s.db().TagList(ctx, in.ResourceArn)
	if err != nil {
		return nil, storeError("list tags", err)
	}
	out := &ListTagsForResourceOutput{Tags: make([]Tag, 0, len(tags))}
	for _, t := range tags {
		out.Tags = append(out.Tags, Tag{Key: ptr(t.Key), Value: ptr(t.Value)})
	}
	return out, nil
}

// Tag is a resource tag.
type Tag struct {
	Key   *string `json:"key,omitempty"`
	Value *string `json:"value,omitempty"`
}

// TagResourceInput is the request of TagResource.
type TagResourceInput struct {
	ResourceArn string `json:"resourceArn"`
	Tags        []Tag  `json:"tags"`
}

// TagResourceOutput is the (empty) response of TagResource.
type TagResourceOutput struct{}

// UntagResourceInput is the request of UntagResource.
type UntagResourceInput struct {
	ResourceArn string   `json:"resourceArn"`
	TagKeys     []string `json:"tagKeys"`
}

// UntagResourceOutput is the (empty) response of UntagResource.
type UntagResourceOutput struct{}

// ListTagsForResourceInput is the request of ListTagsForResource.
type ListTagsForResourceInput struct {
	ResourceArn string `json:"resourceArn"`
}

// ListTagsForResourceOutput is the response of ListTagsForResource.
type ListTagsForResourceOutput struct {
	Tags []Tag `json:"tags"`
}
