package pgstore

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"stepwise/store/internal/sqlcore"
)

// dialect is PostgreSQL's, for the logic in sqlcore.
var dialect = sqlcore.Dialect{
	Greatest:  "GREATEST",
	ErrNoRows: pgx.ErrNoRows,
	Limit:     limit,
	In: func(typ string, n int) string {
		return "= ANY ($" + strconv.Itoa(n) + "::" + typ + "[])"
	},
	// Rows travel as one array per column.
	InsertRows: insertRows,
	List:       func(v any) (any, error) { return v, nil },
	LockRows:   "\nFOR UPDATE",
	ShareRows:  " FOR SHARE",
	Now:        nowMS,
	// Claims take turns, through a lock of the transaction's.
	ClaimLockSQL:      claimLockSQL,
	ExecutionClaimSQL: executionClaimSQL,
	LockStateMachine:  lockStateMachine,
	InsertVersion:     insertVersion,
	InsertAlias:       insertAlias,
}

// newExecutor returns an executor on the pool, or in tx when it is not
// nil.
func (d *Driver) newExecutor(tx pgx.Tx) *ExecutorTx {
	t := &ExecutorTx{Executor{driver: d, tx: tx}}
	t.Core = sqlcore.New(conn{&t.Executor}, &dialect)
	return t
}

// conn is an Executor as sqlcore runs statements on it.
type conn struct{ e *Executor }

func (c conn) Reader() sqlcore.Querier { return pgQuerier{c.e.q()} }
func (c conn) Writer() sqlcore.Querier { return pgQuerier{c.e.q()} }

func (c conn) InTx(ctx context.Context, fn func(q sqlcore.Querier) error) error {
	return c.e.inTx(ctx, func(q querier) error { return fn(pgQuerier{q}) })
}

func (c conn) Error(op string, err error) error { return interpretError(op, err) }

// pgQuerier is a querier as sqlcore runs statements on it.
type pgQuerier struct{ q querier }

func (q pgQuerier) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := q.q.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (q pgQuerier) Query(ctx context.Context, sql string, args ...any) (sqlcore.Rows, error) {
	rows, err := q.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgRows{rows}, nil
}

func (q pgQuerier) QueryRow(ctx context.Context, sql string, args ...any) sqlcore.Scanner {
	return q.q.QueryRow(ctx, sql, args...)
}

func (q pgQuerier) ExecBatch(ctx context.Context, stmts ...sqlcore.Stmt) error {
	b := &pgx.Batch{}
	for _, s := range stmts {
		b.Queue(s.SQL, s.Args...)
	}
	return q.q.SendBatch(ctx, b).Close()
}

// pgRows is pgx.Rows with database/sql's Close.
type pgRows struct{ pgx.Rows }

func (r pgRows) Close() error {
	r.Rows.Close()
	return nil
}
