package sqlcore

import (
	"context"
	"time"

	"stepwise/store"
)

// The parameters compared as text carry CAST(... AS TEXT), which
// PostgreSQL needs to know their type (length() has several) and SQLite
// takes as it is; DELETE ... RETURNING is in both (SQLite since 3.35).
const (
	scheduleGroupColumns   = `name, arn, client_token, created_at, updated_at`
	scheduleGroupInsertSQL = `INSERT INTO stepwise_schedule_group (` + scheduleGroupColumns + `) VALUES ($1, $2, $3, $4, $5)`
	scheduleGroupGetSQL    = `SELECT ` + scheduleGroupColumns + ` FROM stepwise_schedule_group WHERE name = $1`
	scheduleGroupListSQL   = `SELECT ` + scheduleGroupColumns + ` FROM stepwise_schedule_group
		WHERE substr(name, 1, length(CAST($1 AS TEXT))) = CAST($1 AS TEXT) AND name > $2 ORDER BY name LIMIT $3`
	scheduleGroupDeleteSQL = `DELETE FROM stepwise_schedule_group WHERE name = $1 RETURNING arn`
	scheduleDeleteGroupSQL = `DELETE FROM stepwise_schedule WHERE group_name = $1`
	scheduleColumns        = `group_name, name, state, body, client_token, created_at, updated_at, last_fired`
	scheduleInsertSQL      = `INSERT INTO stepwise_schedule (` + scheduleColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
	scheduleGetSQL         = `SELECT ` + scheduleColumns + `, attempts, attempted_at FROM stepwise_schedule WHERE group_name = $1 AND name = $2`
	scheduleUpdateSQL      = `UPDATE stepwise_schedule SET state = $1, body = $2, updated_at = $3, attempts = 0, attempted_at = NULL WHERE group_name = $4 AND name = $5`
	scheduleFiredSQL       = `UPDATE stepwise_schedule SET last_fired = $1, attempts = 0, attempted_at = NULL WHERE group_name = $2 AND name = $3`
	scheduleAttemptedSQL   = `UPDATE stepwise_schedule SET attempts = $1, attempted_at = $2 WHERE group_name = $3 AND name = $4`
	scheduleDeleteSQL      = `DELETE FROM stepwise_schedule WHERE group_name = $1 AND name = $2`
	scheduleListSQL        = `SELECT ` + scheduleColumns + `, attempts, attempted_at FROM stepwise_schedule
		WHERE (CAST($1 AS TEXT) = '' OR group_name = CAST($1 AS TEXT)) AND substr(name, 1, length(CAST($2 AS TEXT))) = CAST($2 AS TEXT) AND (CAST($3 AS TEXT) = '' OR state = CAST($3 AS TEXT))
		AND (group_name > CAST($4 AS TEXT) OR (group_name = CAST($4 AS TEXT) AND name > CAST($5 AS TEXT)))
		ORDER BY group_name, name LIMIT $6`
)

func scanScheduleGroup(s Scanner) (*store.ScheduleGroup, error) {
	var g store.ScheduleGroup
	var created, updated int64
	if err := s.Scan(&g.Name, &g.Arn, &g.ClientToken, &created, &updated); err != nil {
		return nil, err
	}
	g.CreatedAt, g.UpdatedAt = FromMillis(created), FromMillis(updated)
	return &g, nil
}

func scanSchedule(s Scanner) (*store.Schedule, error) {
	var x store.Schedule
	var created, updated int64
	var fired, attempted *int64
	if err := s.Scan(&x.GroupName, &x.Name, &x.State, &x.Body, &x.ClientToken, &created, &updated, &fired, &x.Attempts, &attempted); err != nil {
		return nil, err
	}
	x.CreatedAt, x.UpdatedAt, x.LastFired = FromMillis(created), FromMillis(updated), FromMillisPtr(fired)
	x.AttemptedAt = FromMillisPtr(attempted)
	return &x, nil
}

// ScheduleGroupInsert creates a schedule group.
func (c *Core) ScheduleGroupInsert(ctx context.Context, g *store.ScheduleGroup) error {
	_, err := c.conn.Writer().Exec(ctx, scheduleGroupInsertSQL, g.Name, g.Arn, g.ClientToken, Millis(g.CreatedAt), Millis(g.UpdatedAt))
	return c.conn.Error("insert schedule group "+g.Name, err)
}

// ScheduleGroupGet returns a schedule group.
func (c *Core) ScheduleGroupGet(ctx context.Context, name string) (*store.ScheduleGroup, error) {
	g, err := scanScheduleGroup(c.conn.Reader().QueryRow(ctx, scheduleGroupGetSQL, name))
	if err != nil {
		return nil, c.conn.Error("get schedule group "+name, err)
	}
	return g, nil
}

// ScheduleGroupList pages through schedule groups by name.
func (c *Core) ScheduleGroupList(ctx context.Context, prefix, after string, n int) ([]*store.ScheduleGroup, error) {
	gs, err := QueryAll(ctx, c.conn.Reader(), scheduleGroupListSQL, []any{prefix, after, c.dialect.Limit(n)}, scanScheduleGroup)
	if err != nil {
		return nil, c.conn.Error("list schedule groups", err)
	}
	return gs, nil
}

// ScheduleGroupDelete deletes a schedule group, its schedules and its tags.
func (c *Core) ScheduleGroupDelete(ctx context.Context, name string) error {
	err := c.conn.InTx(ctx, func(q Querier) error {
		var arn string
		if err := q.QueryRow(ctx, scheduleGroupDeleteSQL, name).Scan(&arn); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, scheduleDeleteGroupSQL, name); err != nil {
			return err
		}
		_, err := q.Exec(ctx, TagDeleteAllSQL, arn)
		return err
	})
	return c.conn.Error("delete schedule group "+name, err)
}

// ScheduleInsert creates a schedule.
func (c *Core) ScheduleInsert(ctx context.Context, s *store.Schedule) error {
	_, err := c.conn.Writer().Exec(ctx, scheduleInsertSQL, s.GroupName, s.Name, s.State, s.Body, s.ClientToken,
		Millis(s.CreatedAt), Millis(s.UpdatedAt), MillisPtr(s.LastFired))
	return c.conn.Error("insert schedule "+s.GroupName+"/"+s.Name, err)
}

// ScheduleGet returns a schedule.
func (c *Core) ScheduleGet(ctx context.Context, group, name string) (*store.Schedule, error) {
	s, err := scanSchedule(c.conn.Reader().QueryRow(ctx, scheduleGetSQL, group, name))
	if err != nil {
		return nil, c.conn.Error("get schedule "+group+"/"+name, err)
	}
	return s, nil
}

// ScheduleUpdate writes a schedule's state, body and update date.
func (c *Core) ScheduleUpdate(ctx context.Context, s *store.Schedule) error {
	return c.scheduleExec(ctx, "update schedule "+s.GroupName+"/"+s.Name, scheduleUpdateSQL, s.State, s.Body, Millis(s.UpdatedAt), s.GroupName, s.Name)
}

// ScheduleFired sets the last slot fired of a schedule.
func (c *Core) ScheduleFired(ctx context.Context, group, name string, slot time.Time) error {
	return c.scheduleExec(ctx, "mark schedule "+group+"/"+name+" fired", scheduleFiredSQL, Millis(slot), group, name)
}

// ScheduleAttempted records a schedule's failed attempts at its next slot.
func (c *Core) ScheduleAttempted(ctx context.Context, group, name string, attempts int, at time.Time) error {
	return c.scheduleExec(ctx, "mark schedule "+group+"/"+name+" attempted", scheduleAttemptedSQL, attempts, Millis(at), group, name)
}

// ScheduleDelete deletes a schedule.
func (c *Core) ScheduleDelete(ctx context.Context, group, name string) error {
	return c.scheduleExec(ctx, "delete schedule "+group+"/"+name, scheduleDeleteSQL, group, name)
}

func (c *Core) scheduleExec(ctx context.Context, op, query string, args ...any) error {
	n, err := c.conn.Writer().Exec(ctx, query, args...)
	if err == nil && n == 0 {
		err = store.ErrNotFound
	}
	return c.conn.Error(op, err)
}

// ScheduleList pages through schedules by group and name.
func (c *Core) ScheduleList(ctx context.Context, p *store.ScheduleListParams) ([]*store.Schedule, error) {
	ss, err := QueryAll(ctx, c.conn.Reader(), scheduleListSQL,
		[]any{p.GroupName, p.NamePrefix, p.State, p.AfterGroup, p.AfterName, c.dialect.Limit(p.Limit)}, scanSchedule)
	if err != nil {
		return nil, c.conn.Error("list schedules", err)
	}
	return ss, nil
}
