package pgstore

import (
	"context"

	"stepwise/store/internal/sqlcore"
)

const (
	metaInsertSQL = `INSERT INTO stepwise_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`
	metaGetSQL    = `SELECT value FROM stepwise_meta WHERE key = $1`
)

// MetaGetOrPut returns the value stored under key, storing value first when
// there is none. The read is a statement of its own, so that it sees the
// value of a server that stored one first.
func (e *Executor) MetaGetOrPut(ctx context.Context, key string, value []byte) ([]byte, error) {
	q := e.q()
	var out []byte
	_, err := q.Exec(ctx, metaInsertSQL, key, sqlcore.Blob(value))
	if err == nil {
		err = q.QueryRow(ctx, metaGetSQL, key).Scan(&out)
	}
	if err != nil {
		return nil, interpretError("meta "+key, err)
	}
	return out, nil
}
