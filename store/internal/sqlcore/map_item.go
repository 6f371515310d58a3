package sqlcore

import "context"

const (
	// MapItemListSQL is exported for the drivers' tests of its query plan.
	MapItemListSQL = `
SELECT body
FROM stepwise_map_item
WHERE map_run_arn = $1 AND idx >= $2
ORDER BY idx
LIMIT $3`

	mapItemDeleteSQL = `DELETE FROM stepwise_map_item WHERE map_run_arn = $1`
)

// MapItemsPut stores items at indexes first, first+1, ... of a map run,
// replacing those stored, all or none.
func (c *Core) MapItemsPut(ctx context.Context, mapRunArn string, first int64, items []string) error {
	if len(items) == 0 {
		return nil
	}
	err := c.dialect.InsertRows(ctx, c.conn, &MapItemTable, len(items), func(i int, args []any) []any {
		return append(args, mapRunArn, first+int64(i), items[i])
	})
	return c.conn.Error("put items of map run "+mapRunArn, err)
}

// MapItemsList returns up to limitN of a map run's items from index
// from, in index order.
func (c *Core) MapItemsList(ctx context.Context, mapRunArn string, from int64, limitN int) ([]string, error) {
	items, err := QueryAll(ctx, c.conn.Reader(), MapItemListSQL, []any{mapRunArn, from, c.dialect.Limit(limitN)}, func(s Scanner) (string, error) {
		var body string
		err := s.Scan(&body)
		return body, err
	})
	if err != nil {
		return nil, c.conn.Error("list items of map run "+mapRunArn, err)
	}
	return items, nil
}

// MapItemsDelete deletes a map run's items.
func (c *Core) MapItemsDelete(ctx context.Context, mapRunArn string) error {
	_, err := c.conn.Writer().Exec(ctx, mapItemDeleteSQL, mapRunArn)
	return c.conn.Error("delete items of map run "+mapRunArn, err)
}
