package sqlcore

import (
	"context"

	"stepwise/store"
)

const (
	// TagDeleteAllSQL removes all of a resource's tags, as deleting the
	// resource does.
	TagDeleteAllSQL = `DELETE FROM stepwise_tag WHERE resource_arn = $1`

	tagListSQL = `SELECT key, value FROM stepwise_tag WHERE resource_arn = $1 ORDER BY key`

	// tagDeleteSQL's %s is the condition of a list of keys (Dialect.In,
	// of $2).
	tagDeleteSQL = `DELETE FROM stepwise_tag WHERE resource_arn = $1 AND key %s`
)

// TagPut adds or replaces a resource's tags. Of a key given twice, the
// last value stays.
func (c *Core) TagPut(ctx context.Context, resourceArn string, tags []store.Tag) error {
	if len(tags) == 0 {
		return nil
	}
	// One upsert may not touch a row twice (PostgreSQL's ON CONFLICT DO
	// UPDATE): each key goes once, with its last value.
	at := make(map[string]int, len(tags))
	keys, values := make([]string, 0, len(tags)), make([]string, 0, len(tags))
	for _, t := range tags {
		if i, ok := at[t.Key]; ok {
			values[i] = t.Value
			continue
		}
		at[t.Key] = len(keys)
		keys, values = append(keys, t.Key), append(values, t.Value)
	}
	err := c.dialect.InsertRows(ctx, c.conn, &TagTable, len(keys), func(i int, args []any) []any {
		return append(args, resourceArn, keys[i], values[i])
	})
	return c.conn.Error("put tags of "+resourceArn, err)
}

// TagDelete removes a resource's tags by key; keys it does not have are
// ignored.
func (c *Core) TagDelete(ctx context.Context, resourceArn string, keys []string) error {
	return c.conn.Error("delete tags of "+resourceArn, c.deleteIn(ctx, c.sql.tagDelete, resourceArn, keys))
}

// TagList returns a resource's tags sorted by key.
func (c *Core) TagList(ctx context.Context, resourceArn string) ([]store.Tag, error) {
	tags, err := QueryAll(ctx, c.conn.Reader(), tagListSQL, []any{resourceArn}, func(s Scanner) (store.Tag, error) {
		var t store.Tag
		err := s.Scan(&t.Key, &t.Value)
		return t, err
	})
	if err != nil {
		return nil, c.conn.Error("list tags of "+resourceArn, err)
	}
	return tags, nil
}
