package scheduler

import (
	"context"
	"time"

	"stepwise/store"
)

// Overview is a schedule as the console shows it: its settings, the
// last slot it fired and the next ones.
type Overview struct {
	Arn, Group, Name, State   string
	Expression, Timezone      string
	Target                    string
	LastFired                 *time.Time
	Next                      []time.Time // none when DISABLED or over
	Created, LastModification time.Time
}

// Overview lists every schedule with its next slots (at most next of
// them, after now and after the last one fired).
func (s *Service) Overview(ctx context.Context, next int) ([]Overview, error) {
	var out []Overview
	p := &store.ScheduleListParams{Limit: 500}
	now := s.now()
	for {
		rows, err := s.exec.ScheduleList(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			sc, err := s.decode(row)
			if err != nil {
				return nil, err
			}
			o := Overview{Arn: sc.Arn, Group: row.GroupName, Name: row.Name, State: row.State,
				Expression: sc.ScheduleExpression, Timezone: sc.ScheduleExpressionTimezone, LastFired: row.LastFired,
				Created: row.CreatedAt, LastModification: row.UpdatedAt}
			if o.Timezone == "" {
				o.Timezone = "UTC"
			}
			if sc.Target != nil {
				o.Target = sc.Target.Arn
			}
			if row.State == "ENABLED" {
				if e, err := sc.Expr(row.CreatedAt); err == nil {
					after := now
					if row.LastFired != nil && row.LastFired.After(after) {
						after = *row.LastFired
					}
					for len(o.Next) < next {
						t, ok := e.Next(after)
						if !ok {
							break
						}
						o.Next = append(o.Next, t)
						after = t
					}
				}
			}
			out = append(out, o)
		}
		if len(rows) < p.Limit {
			return out, nil
		}
		last := rows[len(rows)-1]
		p.AfterGroup, p.AfterName = last.GroupName, last.Name
	}
}
