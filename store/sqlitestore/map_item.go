package sqlitestore

import "context"

const (
	// mapItemPutHead is the head of MapItemsPut's multi-row INSERT
	// (insertBatch): an item that is stored already is replaced (the
	// table has neither triggers nor foreign keys, so REPLACE is an
	// upsert of the body).
	mapItemPutHead = `INSERT OR REPLACE INTO stepwise_map_item (map_run_arn, idx, body)`

	mapItemListSQL = `
SELECT body
FROM stepwise_map_item
WHERE map_run_arn = ? AND idx >= ?
ORDER BY idx
LIMIT ?`

	mapItemDeleteSQL = `DELETE FROM stepwise_map_item WHERE map_run_arn = ?`
)

// MapItemsPut stores items at indexes first, first+1, ... of a map run,
// replacing those stored, all or none: batchRows rows per statement, in
// a transaction (or a savepoint of the executor's) when there are more.
func (e *Executor) MapItemsPut(ctx context.Context, mapRunArn string, first int64, items []string) error {
	if len(items) == 0 {
		return nil
	}
	err := e.batch(ctx, len(items), func(q querier) error {
		return insertBatch(ctx, q, mapItemPutHead, 3, len(items), func(i int, args []any) []any {
			return append(args, mapRunArn, first+int64(i), items[i])
		})
	})
	return interpretError("put items of map run "+mapRunArn, err)
}

// MapItemsList returns up to limitN of a map run's items from index
// from, in index order.
func (e *Executor) MapItemsList(ctx context.Context, mapRunArn string, from int64, limitN int) ([]string, error) {
	items, err := queryAll(ctx, e.reader(), mapItemListSQL, []any{mapRunArn, from, limit(limitN)}, func(s scanner) (string, error) {
		var body string
		err := s.Scan(&body)
		return body, err
	})
	if err != nil {
		return nil, interpretError("list items of map run "+mapRunArn, err)
	}
	return items, nil
}

// MapItemsDelete deletes a map run's items.
func (e *Executor) MapItemsDelete(ctx context.Context, mapRunArn string) error {
	_, err := e.writer().ExecContext(ctx, mapItemDeleteSQL, mapRunArn)
	return interpretError("delete items of map run "+mapRunArn, err)
}
