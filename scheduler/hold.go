package scheduler

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"stepwise/store"
)

// Holding a schedule's next run (stepwise hold-next, the console's "Skip
// next run"): the next slot that would fire is recorded as held; when its
// time comes it does not fire but is recorded as skipped, and the slots
// after it fire as usual. EventBridge Scheduler has no such thing.
//
// The hold and the slots skipped are kept in the store as tags of the
// schedule's ARN, which the API's tag operations never reach (they take
// only groups): a restart, and every node of a cluster, sees them.
const (
	// HoldTag's value is the held slot (RFC 3339).
	HoldTag = "stepwise:hold-next"
	// SkippedTag's value is the slots skipped by a hold, the latest
	// last, comma-separated, at most maxSkipped of them.
	SkippedTag = "stepwise:held-skipped"
	maxSkipped = 10
)

// HoldNext holds a schedule's next run: the first slot after the last one
// fired that fires (by its calendar), which is then skipped. A schedule
// held already keeps its hold. It returns the held slot as it would have
// fired.
func (s *Service) HoldNext(ctx context.Context, group, name string) (time.Time, error) {
	row, sch, att, err := s.holdable(ctx, group, name)
	if err != nil {
		return time.Time{}, err
	}
	if held, ok, err := s.held(ctx, sch.Arn); err != nil {
		return time.Time{}, err
	} else if ok {
		at, _ := att.fireAt(held, sch.location())
		return at, nil
	}
	if row.State != "ENABLED" {
		return time.Time{}, validationError("Schedule %s is DISABLED: it has no next run to hold.", name)
	}
	e, err := sch.Expr(row.CreatedAt)
	if err != nil {
		return time.Time{}, err
	}
	after := cursor(row)
	for i := 0; i < 10000; i++ {
		slot, ok := e.Next(after)
		if !ok {
			break
		}
		after = slot
		at, fires := att.fireAt(slot, sch.location())
		if !fires {
			continue
		}
		if err := s.exec.TagPut(ctx, sch.Arn, []store.Tag{{Key: HoldTag, Value: slot.UTC().Format(time.RFC3339Nano)}}); err != nil {
			return time.Time{}, err
		}
		s.cfg.Logger.Info("scheduler: next run held", "schedule_arn", sch.Arn, "slot", at)
		return at, nil
	}
	return time.Time{}, validationError("Schedule %s has no next run to hold.", name)
}

// ReleaseHold takes back a schedule's hold: its next run fires after all.
// It reports whether there was one.
func (s *Service) ReleaseHold(ctx context.Context, group, name string) (bool, error) {
	_, sch, _, err := s.holdable(ctx, group, name)
	if err != nil {
		return false, err
	}
	_, ok, err := s.held(ctx, sch.Arn)
	if err != nil || !ok {
		return false, err
	}
	if err := s.exec.TagDelete(ctx, sch.Arn, []string{HoldTag}); err != nil {
		return false, err
	}
	s.cfg.Logger.Info("scheduler: hold released", "schedule_arn", sch.Arn)
	return true, nil
}

// holdable reads the schedule a hold names, and its calendar.
func (s *Service) holdable(ctx context.Context, group, name string) (*store.Schedule, *Schedule, *Attachment, error) {
	if group == "" {
		group = DefaultGroup
	}
	var v checks
	v.name(name, "name")
	v.name(group, "groupName")
	if err := v.err(); err != nil {
		return nil, nil, nil, err
	}
	row, err := s.exec.ScheduleGet(ctx, group, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil, notFoundError("Schedule %s does not exist.", name)
	} else if err != nil {
		return nil, nil, nil, err
	}
	sch, err := s.decode(row)
	if err != nil {
		return nil, nil, nil, err
	}
	att, err := s.calendarOf(ctx, map[string][]Tag{}, group, name)
	if err != nil {
		return nil, nil, nil, err
	}
	return row, sch, att, nil
}

// holds are a schedule's held slot (ok false for none) and the slots its
// holds skipped.
func (s *Service) holds(ctx context.Context, arn string) (held time.Time, ok bool, skipped []time.Time, err error) {
	tags, err := s.exec.TagList(ctx, arn)
	if err != nil {
		return time.Time{}, false, nil, err
	}
	for _, t := range tags {
		switch t.Key {
		case HoldTag:
			if at, perr := time.Parse(time.RFC3339Nano, t.Value); perr == nil {
				held, ok = at, true
			}
		case SkippedTag:
			for _, v := range strings.Split(t.Value, ",") {
				if at, perr := time.Parse(time.RFC3339Nano, v); perr == nil {
					skipped = append(skipped, at)
				}
			}
		}
	}
	return held, ok, skipped, nil
}

func (s *Service) held(ctx context.Context, arn string) (time.Time, bool, error) {
	held, ok, _, err := s.holds(ctx, arn)
	return held, ok, err
}

// skipHeld records a held slot as skipped (at: when it would have fired)
// and takes the hold away; the caller then records the slot as fired.
func (s *Service) skipHeld(ctx context.Context, arn string, at time.Time) error {
	_, _, skipped, err := s.holds(ctx, arn)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(skipped, at.Equal) {
		skipped = append(skipped, at)
	}
	if len(skipped) > maxSkipped {
		skipped = skipped[len(skipped)-maxSkipped:]
	}
	vs := make([]string, len(skipped))
	for i, t := range skipped {
		vs[i] = t.UTC().Format(time.RFC3339Nano)
	}
	if err := s.exec.TagPut(ctx, arn, []store.Tag{{Key: SkippedTag, Value: strings.Join(vs, ",")}}); err != nil {
		return err
	}
	return s.exec.TagDelete(ctx, arn, []string{HoldTag})
}
