package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
)

const (
	activityColumns   = `arn, name, encryption_configuration, created_at`
	activityInsertSQL = `INSERT INTO stepwise_activity (` + activityColumns + `) VALUES ($1, $2, $3, $4)`
	activityGetSQL    = `SELECT ` + activityColumns + ` FROM stepwise_activity WHERE arn = $1`
	activityDeleteSQL = `DELETE FROM stepwise_activity WHERE arn = $1`
	activityListSQL   = `SELECT ` + activityColumns + ` FROM stepwise_activity WHERE name > $1 ORDER BY name LIMIT $2`
)

func scanActivity(s pgx.Row) (*store.Activity, error) {
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
	if _, err := e.q().Exec(ctx, activityInsertSQL, a.Arn, a.Name, a.EncryptionConfiguration, millis(a.CreatedAt)); err != nil {
		return nil, interpretError("insert activity "+a.Arn, err)
	}
	out := *a
	out.CreatedAt = truncate(a.CreatedAt)
	return &out, nil
}

// ActivityGet returns an activity.
func (e *Executor) ActivityGet(ctx context.Context, arn string) (*store.Activity, error) {
	a, err := scanActivity(e.q().QueryRow(ctx, activityGetSQL, arn))
	if err != nil {
		return nil, interpretError("get activity "+arn, err)
	}
	return a, nil
}

// ActivityDelete removes an activity and its tags.
func (e *Executor) ActivityDelete(ctx context.Context, arn string) error {
	err := e.inTx(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, activityDeleteSQL, arn)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		_, err = q.Exec(ctx, tagDeleteAllSQL, arn)
		return err
	})
	return interpretError("delete activity "+arn, err)
}

// ActivityList pages through activities by name.
func (e *Executor) ActivityList(ctx context.Context, p *store.ActivityListParams) ([]*store.Activity, error) {
	as, err := queryAll(ctx, e.q(), activityListSQL, []any{p.AfterName, limit(p.Limit)}, scanActivity)
	if err != nil {
		return nil, interpretError("list activities", err)
	}
	return as, nil
}
