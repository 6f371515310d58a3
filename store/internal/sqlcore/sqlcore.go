// Package sqlcore is the store's logic written once for its two SQL
// drivers, SQLite (store/sqlitestore) and PostgreSQL (store/pgstore):
// the statements where the dialects agree, the scans of their rows, the
// time helpers and each aggregate's operations. A driver embeds Core in
// its Executor, so that Core's methods are the Executor's, and gives it a
// Conn (where statements run, and how its errors read) and a Dialect
// (what differs between the two databases).
//
// Statements are written with $1, $2, ... placeholders: PostgreSQL's own,
// and SQLite takes them as parameters bound by position too.
package sqlcore

import (
	"context"
	"fmt"
	"time"

	"stepwise/store"
)

// Scanner is one row: *sql.Row, *sql.Rows, pgx.Row or pgx.Rows.
type Scanner interface {
	Scan(dest ...any) error
}

// Rows is the rows of a query.
type Rows interface {
	Scanner
	Next() bool
	Err() error
	Close() error
}

// Querier runs statements: a connection, a pool or a transaction.
type Querier interface {
	// Exec runs a statement and returns how many rows it touched.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	Query(ctx context.Context, sql string, args ...any) (Rows, error)
	// QueryRow runs a query of one row; its error, and no rows, come from
	// Scan.
	QueryRow(ctx context.Context, sql string, args ...any) Scanner
	// ExecBatch runs statements in order, in one round trip where the
	// database can (a pgx batch), and stops at the first that fails.
	ExecBatch(ctx context.Context, stmts ...Stmt) error
}

// Stmt is a statement of a batch and its arguments.
type Stmt struct {
	SQL  string
	Args []any
}

// Conn is where a driver's Executor runs Core's statements.
type Conn interface {
	// Reader is where a read goes.
	Reader() Querier
	// Writer is where a write of one statement goes.
	Writer() Querier
	// InTx runs fn, a write of several statements, all or none.
	InTx(ctx context.Context, fn func(q Querier) error) error
	// Error turns the database's error into the store's (store.ErrNotFound,
	// ...), wrapped with op; nil stays nil.
	Error(op string, err error) error
}

// Dialect is what differs between the databases, for Core.
type Dialect struct {
	// Greatest names the function of the larger of its arguments:
	// GREATEST in PostgreSQL, max in SQLite.
	Greatest string
	// ErrNoRows is the driver's error of a query without rows, which
	// Conn.Error reads as store.ErrNotFound.
	ErrNoRows error
	// Limit is the LIMIT argument for the store's "n, or no limit when 0
	// or less".
	Limit func(n int) any
	// In is the condition that a column is one of the list given as $n,
	// a list of typ (bigint or text) made by List: "= ANY ($1::text[])"
	// in PostgreSQL, "IN (SELECT value FROM json_each($1))" in SQLite.
	In func(typ string, n int) string
	// List is the argument of In's list of the values of v, a []int64 or
	// a []string: the slice itself in PostgreSQL, JSON text in SQLite.
	List func(v any) (any, error)
	// LockRows, appended to a query, holds the rows it reads for the rest
	// of the transaction: " FOR UPDATE" in PostgreSQL; SQLite's one
	// writer holds them already.
	LockRows string
	// ShareRows, appended to a query, holds the rows it reads against
	// updates for the rest of the transaction: " FOR SHARE" in
	// PostgreSQL, nothing in SQLite.
	ShareRows string
	// Now is the database's clock, in Unix milliseconds, as an SQL
	// expression: leases are timed by it.
	Now string
	// ClaimLockSQL, when set, runs first in every claim's transaction and
	// makes the claims of all nodes take turns: a claim's statements then
	// see every owner another claim wrote, and every node that claim's
	// node registered before it (PostgreSQL's READ COMMITTED re-checks a
	// row another claim changed against a snapshot that may predate that
	// node's registration, which took an owned execution for an orphan).
	ClaimLockSQL string
	// ExecutionClaimSQL makes up to $3 orphaned running executions node
	// $1's at epoch $2, and returns their ARNs. A running execution is
	// an orphan when it has no owner, or its owner's lease ran out, or
	// its owner registered again, or is gone.
	ExecutionClaimSQL string
	// LockStateMachine holds a state machine's row for the rest of the
	// transaction, so that publishers, a version's deletion and an
	// alias's creation or update take turns; an error wrapping ErrNoRows
	// when there is no such state machine. SQLite's one writer takes
	// turns already: there it does nothing.
	LockStateMachine func(ctx context.Context, q Querier, stateMachineArn string) error
	// InsertVersion gives v the state machine's next version number and
	// inserts it, returning the number.
	InsertVersion func(ctx context.Context, q Querier, v *store.Version) (int64, error)
	// InsertAlias inserts an alias of an existing state machine, routing
	// to versions that exist (VersionsExist); an error wrapping ErrNoRows
	// when there is no such state machine.
	InsertAlias func(ctx context.Context, q Querier, a *store.Alias) error
	// InsertRows inserts n rows into t, all or none, replacing stored
	// ones when t says so (Table.Upsert); row appends row i's values, in
	// t's columns' order, to args.
	InsertRows func(ctx context.Context, c Conn, t *Table, n int, row func(i int, args []any) []any) error
}

// Core is the store operations written once, for one Conn and Dialect.
type Core struct {
	conn    Conn
	dialect *Dialect
	sql     dialectSQL
}

// dialectSQL is the statements New writes for the dialect.
type dialectSQL struct {
	clockStart, clockAdvance string
	retention                retentionSQL
	executionIDs             string
	timerDelete, taskDelete  string
	tagDelete                string
	node                     nodeSQL
}

// New returns the operations of conn, a driver's Executor, in dialect d.
func New(conn Conn, d *Dialect) Core {
	return Core{conn: conn, dialect: d, sql: dialectSQL{
		clockStart:   fmt.Sprintf(clockStartSQL, d.Greatest),
		clockAdvance: fmt.Sprintf(clockAdvanceSQL, d.Greatest),
		retention:    newRetentionSQL(d),
		executionIDs: fmt.Sprintf(executionIDsSQL, d.In("text", 1)),
		timerDelete:  fmt.Sprintf(timerDeleteSQL, d.In("text", 2)),
		taskDelete:   fmt.Sprintf(taskDeleteSQL, d.In("text", 2)),
		tagDelete:    fmt.Sprintf(tagDeleteSQL, d.In("text", 2)),
		node:         newNodeSQL(d),
	}}
}

// QueryAll runs a query and scans every row with scan.
func QueryAll[T any](ctx context.Context, q Querier, query string, args []any, scan func(Scanner) (T, error)) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Millis is t as the store keeps it: Unix milliseconds.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// MillisPtr is Millis of t, or NULL when t is nil.
func MillisPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}

// FromMillis reads back what Millis stored, in UTC.
func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// FromMillisPtr reads back what MillisPtr stored: nil for NULL.
func FromMillisPtr(ms *int64) *time.Time {
	if ms == nil {
		return nil
	}
	t := FromMillis(*ms)
	return &t
}

// Truncate is t as it reads back: whole milliseconds, UTC.
func Truncate(t time.Time) time.Time { return FromMillis(Millis(t)) }

// TruncatePtr is Truncate of t, or nil.
func TruncatePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	tt := Truncate(*t)
	return &tt
}

// Blob keeps a nil body from becoming NULL.
func Blob(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
