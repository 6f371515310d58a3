package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"

	"stepwise/store/internal/sqlcore"
)

// dialect is SQLite's, for the logic in sqlcore.
var dialect = sqlcore.Dialect{
	Greatest:  "max",
	ErrNoRows: sql.ErrNoRows,
	Limit:     func(n int) any { return limit(n) },
	Now:       nowMS,
	// The one writer takes turns: a claim is not raced.
	ExecutionClaimSQL: executionClaimSQL,
	// A list travels as one JSON array, so that a statement is prepared
	// once whatever the list's length.
	In: func(_ string, n int) string { return "IN (SELECT value FROM json_each($" + strconv.Itoa(n) + "))" },
	List: func(v any) (any, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	LockStateMachine: lockStateMachine,
	InsertVersion:    insertVersion,
	InsertAlias:      insertAlias,
	// Rows travel as multi-row statements of batchRows rows at most, in
	// a transaction (or a savepoint of the executor's) when there are
	// more.
	InsertRows: func(ctx context.Context, c sqlcore.Conn, t *sqlcore.Table, n int, row func(i int, args []any) []any) error {
		return batch(ctx, c, n, func(q sqlcore.Querier) error {
			return insertBatch(ctx, q, t, n, row)
		})
	},
}

// batch runs fn, a write of n rows, atomically: one statement is on its
// own, several need a transaction.
func batch(ctx context.Context, c sqlcore.Conn, n int, fn func(q sqlcore.Querier) error) error {
	if n <= batchRows {
		return fn(c.Writer())
	}
	return c.InTx(ctx, fn)
}

// newExecutor returns an executor on the driver's connections, or in tx
// when it is not nil.
func (d *Driver) newExecutor(tx *txQuerier) *ExecutorTx {
	t := &ExecutorTx{Executor{driver: d, tx: tx}}
	t.Core = sqlcore.New(conn{&t.Executor}, &dialect)
	return t
}

// conn is an Executor as sqlcore runs statements on it.
type conn struct{ e *Executor }

func (c conn) Reader() sqlcore.Querier { return sqlQuerier{c.e.reader()} }
func (c conn) Writer() sqlcore.Querier { return sqlQuerier{c.e.writer()} }

func (c conn) InTx(ctx context.Context, fn func(q sqlcore.Querier) error) error {
	return c.e.inTx(ctx, func(q querier) error { return fn(sqlQuerier{q}) })
}

func (c conn) Error(op string, err error) error { return interpretError(op, err) }

// sqlQuerier is a querier as sqlcore runs statements on it.
type sqlQuerier struct{ q querier }

func (q sqlQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := q.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (q sqlQuerier) Query(ctx context.Context, query string, args ...any) (sqlcore.Rows, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (q sqlQuerier) QueryRow(ctx context.Context, query string, args ...any) sqlcore.Scanner {
	return q.q.QueryRowContext(ctx, query, args...)
}

func (q sqlQuerier) ExecBatch(ctx context.Context, stmts ...sqlcore.Stmt) error {
	for _, s := range stmts {
		if _, err := q.q.ExecContext(ctx, s.SQL, s.Args...); err != nil {
			return err
		}
	}
	return nil
}

var _ sqlcore.Rows = (*sql.Rows)(nil)
