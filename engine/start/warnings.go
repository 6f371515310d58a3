package start

import (
	"context"
	"strings"

	"stepwise/internal/warnrule"
	"stepwise/store"
)

// WarningsOf reads the warning rules a state machine's tags set
// (warnrule.FromTags); a tag whose rule does not parse is ignored, as
// TagResource refuses it.
func WarningsOf(ctx context.Context, ex store.Executor, smArn string) (warnrule.Rules, error) {
	tags, err := ex.TagList(ctx, smArn)
	if err != nil {
		return nil, err
	}
	return warningsFrom(tags), nil
}

// warningsFrom is the warning rules of a state machine's tags.
func warningsFrom(tags []store.Tag) warnrule.Rules {
	var rs warnrule.Rules
	for _, t := range tags {
		if !strings.HasPrefix(t.Key, warnrule.TagPrefix) {
			continue
		}
		one, err := warnrule.FromTags(map[string]string{t.Key: t.Value})
		if err != nil {
			continue
		}
		if rs == nil {
			rs = warnrule.Rules{}
		}
		for n, r := range one {
			rs[n] = r
		}
	}
	return rs
}
