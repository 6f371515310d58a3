package sqlitestore

import (
	"context"

	"stepwise/store"
)

const (
	activityColumns   = `arn, name, encryption_configuration, created_at`
	activityInsertSQL = `INSERT INTO stepwise_activity (` + activityColumns + `) VALUES (?, ?, ?, ?)`
	activityGetSQL    = `SELECT ` + activityColumns + ` FROM stepwise_activity WHERE arn = ?`
	activityDeleteSQL = `DELETE FROM stepwise_activity WHERE arn = ?`
	activityListSQL   = `SELECT ` + activityColumns + ` FROM stepwise_activity WHERE name > ? ORDER BY name LIMIT ?`
	tagDeleteAllSQL   = `DELETE FROM stepwise_tag WHERE resource_arn = ?`
)

func scanActivity(s scanner) (*store.Activity, error) {
	var a store.Activity
	var created int64
	if err := s.Scan(&a.Arn, &a.Name, &a.EncryptionConfiguration, &created); err != nil {
		return nil, err
	}
	a.CreatedAt = fromMillis(created)
	return &a, nil
}

// ActivityInsert creates an activity.
func (e *Executor) ActivityInsert(ctx context.Context, a *store.Activity) (*store.Activity, error) {
	if _, err := e.writer().ExecContext(ctx, activityInsertSQL, a.Arn, a.Name, a.EncryptionConfiguration, millis(a.CreatedAt)); err != nil {
		return nil, interpretError("insert activity "+a.Arn, err)
	}
	out := *a
	out.CreatedAt = truncate(a.CreatedAt)
	return &out, nil
}

// ActivityGet returns an activity.
func (e *Executor) ActivityGet(ctx context.Context, arn string) (*store.Activity, error) {
	a, err := scanActivity(e.reader().QueryRowContext(ctx, activityGetSQL, arn))
	if err != nil {
		return nil, interpretError("get activity "+arn, err)
	}
	return a, nil
}

// ActivityDelete removes an activity and its tags.
func (e *Executor) ActivityDelete(ctx context.Context, arn string) error {
	err := e.inTx(ctx, func(q querier) error {
		res, err := q.ExecContext(ctx, activityDeleteSQL, arn)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return store.ErrNotFound
		}
		_, err = q.ExecContext(ctx, tagDeleteAllSQL, arn)
		return err
	})
	return interpretError("delete activity "+arn, err)
}

// ActivityList pages through activities by name.
func (e *Executor) ActivityList(ctx context.Context, p *store.ActivityListParams) ([]*store.Activity, error) {
	as, err := queryAll(ctx, e.reader(), activityListSQL, []any{p.AfterName, limit(p.Limit)}, scanActivity)
	if err != nil {
		return nil, interpretError("list activities", err)
	}
	return as, nil
}
