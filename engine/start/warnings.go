package start

import (
	"context"
	"fmt"
	"strings"

	"stepwise/internal/warnrule"
	"stepwise/store"
)

// warningsOf reads the warning rules a state machine's tags set, from
// the cache of those read lately.
func (s *Starter) warningsOf(ctx context.Context, smArn string) (warnrule.Rules, error) {
	if s.warnings != nil {
		if rs, ok := s.warnings.Get(smArn); ok {
			return rs, nil
		}
	}
	var look uint64
	if s.warnings != nil {
		look = s.warnings.Look()
	}
	rs, err := WarningsOf(ctx, s.cfg.Store, smArn)
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	if s.warnings != nil {
		s.warnings.Put(smArn, rs, look)
	}
	return rs, nil
}

// WarningsOf reads the warning rules a state machine's tags set
// (warnrule.FromTags); a tag whose rule does not parse is ignored, as
// TagResource refuses it.
func WarningsOf(ctx context.Context, ex store.Executor, smArn string) (warnrule.Rules, error) {
	tags, err := ex.TagList(ctx, smArn)
	if err != nil {
		return nil, err
	}
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
	return rs, nil
}
