package sqlcore

import (
	"context"

	"stepwise/store"
)

const (
	activityColumns   = `arn, name, encryption_configuration, created_at`
	activityInsertSQL = `INSERT INTO stepwise_activity (` + activityColumns + `) VALUES ($1, $2, $3, $4)`
	activityGetSQL    = `SELECT ` + activityColumns + ` FROM stepwise_activity WHERE arn = $1`
	activityDeleteSQL = `DELETE FROM stepwise_activity WHERE arn = $1`
	activityListSQL   = `SELECT ` + activityColumns + ` FROM stepwise_activity WHERE name > $1 ORDER BY name LIMIT $2`
)

func scanActivity(s Scanner) (*store.Activity, error) {
	var a store.Activity
	var created int64
	if err := s.Scan(&a.Arn, &a.Name, &a.EncryptionConfiguration, &created); err != nil {
		return nil, err
	}
	a.CreatedAt = FromMillis(created)
	return &a, nil
}

// ActivityInsert creates an activity.
func (c *Core) ActivityInsert(ctx context.Context, a *store.Activity) (*store.Activity, error) {
	if _, err := c.conn.Writer().Exec(ctx, activityInsertSQL, a.Arn, a.Name, a.EncryptionConfiguration, Millis(a.CreatedAt)); err != nil {
		return nil, c.conn.Error("insert activity "+a.Arn, err)
	}
	out := *a
	out.CreatedAt = Truncate(a.CreatedAt)
	return &out, nil
}

// ActivityGet returns an activity.
func (c *Core) ActivityGet(ctx context.Context, arn string) (*store.Activity, error) {
	a, err := scanActivity(c.conn.Reader().QueryRow(ctx, activityGetSQL, arn))
	if err != nil {
		return nil, c.conn.Error("get activity "+arn, err)
	}
	return a, nil
}

// ActivityDelete removes an activity and its tags.
func (c *Core) ActivityDelete(ctx context.Context, arn string) error {
	err := c.conn.InTx(ctx, func(q Querier) error {
		n, err := q.Exec(ctx, activityDeleteSQL, arn)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		_, err = q.Exec(ctx, TagDeleteAllSQL, arn)
		return err
	})
	return c.conn.Error("delete activity "+arn, err)
}

// ActivityList pages through activities by name.
func (c *Core) ActivityList(ctx context.Context, p *store.ActivityListParams) ([]*store.Activity, error) {
	as, err := QueryAll(ctx, c.conn.Reader(), activityListSQL, []any{p.AfterName, c.dialect.Limit(p.Limit)}, scanActivity)
	if err != nil {
		return nil, c.conn.Error("list activities", err)
	}
	return as, nil
}
