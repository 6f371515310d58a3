package sqlitestore

import "context"

const (
	metaInsertSQL = `INSERT INTO stepwise_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`
	metaGetSQL    = `SELECT value FROM stepwise_meta WHERE key = ?`
)

// MetaGetOrPut returns the value stored under key, storing value first when
// there is none.
func (e *Executor) MetaGetOrPut(ctx context.Context, key string, value []byte) ([]byte, error) {
	var out []byte
	err := e.inTx(ctx, func(q querier) error {
		if _, err := q.ExecContext(ctx, metaInsertSQL, key, value); err != nil {
			return err
		}
		return q.QueryRowContext(ctx, metaGetSQL, key).Scan(&out)
	})
	if err != nil {
		return nil, interpretError("meta "+key, err)
	}
	return out, nil
}
