package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"stepwise/store"
)

const (
	// The tags travel as two arrays, so that one statement of one text
	// puts any number of them.
	tagPutSQL = `
INSERT INTO stepwise_tag (resource_arn, key, value)
SELECT $1, t.key, t.value FROM unnest($2::text[], $3::text[]) AS t (key, value)
ON CONFLICT (resource_arn, key) DO UPDATE SET value = excluded.value`

	tagDeleteSQL = `DELETE FROM stepwise_tag WHERE resource_arn = $1 AND key = ANY ($2::text[])`

	tagListSQL = `SELECT key, value FROM stepwise_tag WHERE resource_arn = $1 ORDER BY key`
)

// TagPut adds or replaces a resource's tags. Of a key given twice, the
// last value stays.
func (e *Executor) TagPut(ctx context.Context, resourceArn string, tags []store.Tag) error {
	if len(tags) == 0 {
		return nil
	}
	// ON CONFLICT DO UPDATE may not touch a row twice in one statement.
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
	_, err := e.q().Exec(ctx, tagPutSQL, resourceArn, keys, values)
	return interpretError("put tags of "+resourceArn, err)
}

// TagDelete removes a resource's tags by key; keys it does not have are
// ignored.
func (e *Executor) TagDelete(ctx context.Context, resourceArn string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := e.q().Exec(ctx, tagDeleteSQL, resourceArn, keys)
	return interpretError("delete tags of "+resourceArn, err)
}

// TagList returns a resource's tags sorted by key.
func (e *Executor) TagList(ctx context.Context, resourceArn string) ([]store.Tag, error) {
	tags, err := queryAll(ctx, e.q(), tagListSQL, []any{resourceArn}, func(s pgx.Row) (store.Tag, error) {
		var t store.Tag
		err := s.Scan(&t.Key, &t.Value)
		return t, err
	})
	if err != nil {
		return nil, interpretError("list tags of "+resourceArn, err)
	}
	return tags, nil
}
