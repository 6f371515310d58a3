package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
)

const (
	scheduleGroupColumns   = `name, arn, client_token, created_at, updated_at`
	scheduleGroupInsertSQL = `INSERT INTO stepwise_schedule_group (` + scheduleGroupColumns + `) VALUES ($1, $2, $3, $4, $5)`
	scheduleGroupGetSQL    = `SELECT ` + scheduleGroupColumns + ` FROM stepwise_schedule_group WHERE name = $1`
	scheduleGroupListSQL   = `SELECT ` + scheduleGroupColumns + ` FROM stepwise_schedule_group
		WHERE substr(name, 1, length($1::text)) = $1::text AND name > $2 ORDER BY name LIMIT $3`
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
		WHERE ($1::text = '' OR group_name = $1::text) AND substr(name, 1, length($2::text)) = $2::text AND ($3::text = '' OR state = $3::text)
		AND (group_name > $4::text OR (group_name = $4::text AND name > $5::text))
		ORDER BY group_name, name LIMIT $6`
)

func scanScheduleGroup(s pgx.Row) (*store.ScheduleGroup, error) {
	var g store.ScheduleGroup
	var created, updated int64
	if err := s.Scan(&g.Name, &g.Arn, &g.ClientToken, &created, &updated); err != nil {
		return nil, err
	}
	g.CreatedAt, g.UpdatedAt = sqlcore.FromMillis(created), sqlcore.FromMillis(updated)
	return &g, nil
}

func scanSchedule(s pgx.Row) (*store.Schedule, error) {
	var x store.Schedule
	var created, updated int64
	var fired, attempted *int64
	if err := s.Scan(&x.GroupName, &x.Name, &x.State, &x.Body, &x.ClientToken, &created, &updated, &fired, &x.Attempts, &attempted); err != nil {
		return nil, err
	}
	x.CreatedAt, x.UpdatedAt, x.LastFired = sqlcore.FromMillis(created), sqlcore.FromMillis(updated), sqlcore.FromMillisPtr(fired)
	x.AttemptedAt = sqlcore.FromMillisPtr(attempted)
	return &x, nil
}

// ScheduleGroupInsert creates a schedule group.
func (e *Executor) ScheduleGroupInsert(ctx context.Context, g *store.ScheduleGroup) error {
	_, err := e.q().Exec(ctx, scheduleGroupInsertSQL, g.Name, g.Arn, g.ClientToken, sqlcore.Millis(g.CreatedAt), sqlcore.Millis(g.UpdatedAt))
	return interpretError("insert schedule group "+g.Name, err)
}

// ScheduleGroupGet returns a schedule group.
func (e *Executor) ScheduleGroupGet(ctx context.Context, name string) (*store.ScheduleGroup, error) {
	g, err := scanScheduleGroup(e.q().QueryRow(ctx, scheduleGroupGetSQL, name))
	if err != nil {
		return nil, interpretError("get schedule group "+name, err)
	}
	return g, nil
}

// ScheduleGroupList pages through schedule groups by name.
func (e *Executor) ScheduleGroupList(ctx context.Context, prefix, after string, n int) ([]*store.ScheduleGroup, error) {
	gs, err := queryAll(ctx, e.q(), scheduleGroupListSQL, []any{prefix, after, limit(n)}, scanScheduleGroup)
	if err != nil {
		return nil, interpretError("list schedule groups", err)
	}
	return gs, nil
}

// ScheduleGroupDelete deletes a schedule group, its schedules and its tags.
func (e *Executor) ScheduleGroupDelete(ctx context.Context, name string) error {
	err := e.inTx(ctx, func(q querier) error {
		var arn string
		if err := q.QueryRow(ctx, scheduleGroupDeleteSQL, name).Scan(&arn); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, scheduleDeleteGroupSQL, name); err != nil {
			return err
		}
		_, err := q.Exec(ctx, sqlcore.TagDeleteAllSQL, arn)
		return err
	})
	return interpretError("delete schedule group "+name, err)
}

// ScheduleInsert creates a schedule.
func (e *Executor) ScheduleInsert(ctx context.Context, s *store.Schedule) error {
	_, err := e.q().Exec(ctx, scheduleInsertSQL, s.GroupName, s.Name, s.State, s.Body, s.ClientToken,
		sqlcore.Millis(s.CreatedAt), sqlcore.Millis(s.UpdatedAt), sqlcore.MillisPtr(s.LastFired))
	return interpretError("insert schedule "+s.GroupName+"/"+s.Name, err)
}

// ScheduleGet returns a schedule.
func (e *Executor) ScheduleGet(ctx context.Context, group, name string) (*store.Schedule, error) {
	s, err := scanSchedule(e.q().QueryRow(ctx, scheduleGetSQL, group, name))
	if err != nil {
		return nil, interpretError("get schedule "+group+"/"+name, err)
	}
	return s, nil
}

// ScheduleUpdate writes a schedule's state, body and update date.
func (e *Executor) ScheduleUpdate(ctx context.Context, s *store.Schedule) error {
	return e.scheduleExec(ctx, "update schedule "+s.GroupName+"/"+s.Name, scheduleUpdateSQL, s.State, s.Body, sqlcore.Millis(s.UpdatedAt), s.GroupName, s.Name)
}

// ScheduleFired sets the last slot fired of a schedule.
func (e *Executor) ScheduleFired(ctx context.Context, group, name string, slot time.Time) error {
	return e.scheduleExec(ctx, "mark schedule "+group+"/"+name+" fired", scheduleFiredSQL, sqlcore.Millis(slot), group, name)
}

// ScheduleAttempted records a schedule's failed attempts at its next slot.
func (e *Executor) ScheduleAttempted(ctx context.Context, group, name string, attempts int, at time.Time) error {
	return e.scheduleExec(ctx, "mark schedule "+group+"/"+name+" attempted", scheduleAttemptedSQL, attempts, sqlcore.Millis(at), group, name)
}

// ScheduleDelete deletes a schedule.
func (e *Executor) ScheduleDelete(ctx context.Context, group, name string) error {
	return e.scheduleExec(ctx, "delete schedule "+group+"/"+name, scheduleDeleteSQL, group, name)
}

func (e *Executor) scheduleExec(ctx context.Context, op, query string, args ...any) error {
	tag, err := e.q().Exec(ctx, query, args...)
	if err == nil && tag.RowsAffected() == 0 {
		err = store.ErrNotFound
	}
	return interpretError(op, err)
}

// ScheduleList pages through schedules by group and name.
func (e *Executor) ScheduleList(ctx context.Context, p *store.ScheduleListParams) ([]*store.Schedule, error) {
	ss, err := queryAll(ctx, e.q(), scheduleListSQL,
		[]any{p.GroupName, p.NamePrefix, p.State, p.AfterGroup, p.AfterName, limit(p.Limit)}, scanSchedule)
	if err != nil {
		return nil, interpretError("list schedules", err)
	}
	return ss, nil
}
