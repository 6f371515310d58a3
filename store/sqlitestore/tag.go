package sqlitestore

import (
	"context"

	"stepwise/store"
)

const (
	tagPutHead = `INSERT INTO stepwise_tag (resource_arn, key, value)`

	tagPutTail = ` ON CONFLICT (resource_arn, key) DO UPDATE SET value = excluded.value`

	tagDeleteHead = `DELETE FROM stepwise_tag WHERE resource_arn = ? AND key IN`

	tagListSQL = `SELECT key, value FROM stepwise_tag WHERE resource_arn = ? ORDER BY key`
)

// TagPut adds or replaces a resource's tags.
func (e *Executor) TagPut(ctx context.Context, resourceArn string, tags []store.Tag) error {
	if len(tags) == 0 {
		return nil
	}
	err := e.batch(ctx, len(tags), func(q querier) error {
		for start := 0; start < len(tags); start += batchRows {
			chunk := tags[start:min(start+batchRows, len(tags))]
			args := make([]any, 0, 3*len(chunk))
			for _, t := range chunk {
				args = append(args, resourceArn, t.Key, t.Value)
			}
			if _, err := q.ExecContext(ctx, valuesSQL(tagPutHead, 3, len(chunk))+tagPutTail, args...); err != nil {
				return err
			}
		}
		return nil
	})
	return interpretError("put tags of "+resourceArn, err)
}

// TagDelete removes a resource's tags by key; keys it does not have are
// ignored.
func (e *Executor) TagDelete(ctx context.Context, resourceArn string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	err := e.batch(ctx, len(keys), func(q querier) error {
		return deleteBatch(ctx, q, tagDeleteHead, []any{resourceArn}, keys)
	})
	return interpretError("delete tags of "+resourceArn, err)
}

// TagList returns a resource's tags sorted by key.
func (e *Executor) TagList(ctx context.Context, resourceArn string) ([]store.Tag, error) {
	tags, err := queryAll(ctx, e.reader(), tagListSQL, []any{resourceArn}, func(s scanner) (store.Tag, error) {
		var t store.Tag
		err := s.Scan(&t.Key, &t.Value)
		return t, err
	})
	if err != nil {
		return nil, interpretError("list tags of "+resourceArn, err)
	}
	return tags, nil
}
