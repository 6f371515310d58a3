package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
)

const (
	// The items travel as one array, numbered from first by their
	// ordinality, so that one statement of one text puts any number of
	// them.
	mapItemPutSQL = `
INSERT INTO stepwise_map_item (map_run_arn, idx, body)
SELECT $1, $2::bigint + t.ord - 1, t.body FROM unnest($3::text[]) WITH ORDINALITY AS t (body, ord)
ON CONFLICT (map_run_arn, idx) DO UPDATE SET body = excluded.body`

	mapItemListSQL = `
SELECT body
FROM stepwise_map_item
WHERE map_run_arn = $1 AND idx >= $2
ORDER BY idx
LIMIT $3`

	mapItemDeleteSQL = `DELETE FROM stepwise_map_item WHERE map_run_arn = $1`
)

// MapItemsPut stores items at indexes first, first+1, ... of a map run,
// replacing those stored, in one statement.
func (e *Executor) MapItemsPut(ctx context.Context, mapRunArn string, first int64, items []string) error {
	if len(items) == 0 {
		return nil
	}
	_, err := e.q().Exec(ctx, mapItemPutSQL, mapRunArn, first, items)
	return interpretError("put items of map run "+mapRunArn, err)
}

// MapItemsList returns up to limitN of a map run's items from index
// from, in index order.
func (e *Executor) MapItemsList(ctx context.Context, mapRunArn string, from int64, limitN int) ([]string, error) {
	items, err := queryAll(ctx, e.q(), mapItemListSQL, []any{mapRunArn, from, limit(limitN)}, func(s pgx.Row) (string, error) {
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
	_, err := e.q().Exec(ctx, mapItemDeleteSQL, mapRunArn)
	return interpretError("delete items of map run "+mapRunArn, err)
}
