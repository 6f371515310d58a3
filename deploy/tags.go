package deploy

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"stepwise/service"
	"stepwise/sfnapi"
)

// tagsOf reads a Tags property: CloudFormation's list of {Key, Value},
// or SAM's map of key to value. The result is sorted by key.
func tagsOf(v any) (map[string]string, error) {
	out := map[string]string{}
	switch v := v.(type) {
	case nil:
	case []any:
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("Tags[%d]: a tag is {Key, Value}", i)
			}
			k, ok := m["Key"].(string)
			if !ok || k == "" {
				return nil, fmt.Errorf("Tags[%d]: no Key", i)
			}
			val, _ := m["Value"].(string)
			out[k] = val
		}
	case map[string]any:
		for k, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("Tags.%s: a tag's value is a string", k)
			}
			out[k] = s
		}
	default:
		return nil, errors.New("Tags: a list of {Key, Value} or a map")
	}
	return out, nil
}

// serviceTags is tags as the service takes them, by key.
func serviceTags(tags map[string]string) []service.Tag {
	keys := sortedKeys(tags)
	out := make([]service.Tag, len(keys))
	for i, k := range keys {
		k, v := k, tags[k]
		out[i] = service.Tag{Key: &k, Value: &v}
	}
	return out
}

// syncTags brings a Step Functions resource's tags from old to new.
func (x *run) syncTags(ctx context.Context, arn string, old, new map[string]string) error {
	var gone []string
	for k := range old {
		if _, ok := new[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	if len(gone) > 0 {
		if _, err := x.d.Service.UntagResource(ctx, &service.UntagResourceInput{ResourceArn: arn, TagKeys: gone}); err != nil {
			return err
		}
	}
	changed := map[string]string{}
	for k, v := range new {
		if ov, ok := old[k]; !ok || ov != v {
			changed[k] = v
		}
	}
	if len(changed) > 0 {
		if _, err := x.d.Service.TagResource(ctx, &service.TagResourceInput{ResourceArn: arn, Tags: serviceTags(changed)}); err != nil {
			return err
		}
	}
	return nil
}

// isCode says whether err is the service's error of that code.
func isCode(err error, code string) bool {
	var e *sfnapi.Error
	return errors.As(err, &e) && e.Code == code
}
