package sqlcore

import "context"

const (
	metaInsertSQL = `INSERT INTO stepwise_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`
	metaGetSQL    = `SELECT value FROM stepwise_meta WHERE key = $1`
)

// MetaGetOrPut returns the value stored under key, storing value first when
// there is none. The read is a statement of its own, so that it sees the
// value of a server that stored one first.
func (c *Core) MetaGetOrPut(ctx context.Context, key string, value []byte) ([]byte, error) {
	q := c.conn.Writer()
	var out []byte
	_, err := q.Exec(ctx, metaInsertSQL, key, Blob(value))
	if err == nil {
		err = q.QueryRow(ctx, metaGetSQL, key).Scan(&out)
	}
	if err != nil {
		return nil, c.conn.Error("meta "+key, err)
	}
	return out, nil
}
