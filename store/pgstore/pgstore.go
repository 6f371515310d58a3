// Package pgstore is the store driver for PostgreSQL, through pgx v5 and
// its connection pool (pgxpool). Several servers may share one database.
//
// # Connections
//
// One pool serves everything: a call through Executor() takes a
// connection for the call, a transaction from Begin keeps one until it
// commits or rolls back. Connection settings come from the URL and, for
// what it leaves out, the usual PG* environment variables (PGHOST,
// PGPASSWORD, ...), as libpq reads them; Options caps the pool. pgx
// prepares each distinct statement once per connection and reuses it,
// and the statements here have fixed texts: a batch of rows travels as
// arrays (unnest) in one statement whatever its size. Pool hands out the
// pool itself, whose Acquire and Hijack give a connection of its own to
// a LISTEN.
//
// pgx is used natively rather than through database/sql: its batches
// send the statements of a step in one round trip, and array parameters
// need no adapter. Only the migrations run through database/sql (pgx's
// stdlib adapter on the same pool), the interface store/migrate shares
// with SQLite.
//
// # Schema
//
// migration/*.sql, numbered and meaning as SQLite's, applied by Open in
// one transaction that holds an advisory lock (migrationLockKey), so that
// servers starting together migrate one after the other; a database
// migrated by a newer build is refused. Times are BIGINT unix
// milliseconds in UTC, as in SQLite; blobs are BYTEA. Text that is
// compared or sorted (ARNs, names, ids, keys) is COLLATE "C", so that it
// sorts by bytes as SQLite's does whatever the database's locale.
//
// # Transactions
//
// Transactions are READ COMMITTED. A version-checked update that finds
// the row changed by a concurrent commit matches nothing and is
// store.ErrConflict. A failed statement aborts PostgreSQL's transaction:
// after a failed write inside Begin's transaction, roll it back. Writes
// of several statements through Executor() run in a transaction of
// their own, and inside Begin's transaction in a savepoint, so they are
// all or none either way (and one the database refused leaves the
// transaction usable). StepWrite sends its statements in one batch, one
// round trip, with the BEGIN or the savepoint in it; the failures it
// finds only in the answers (a version conflict, a fence, an execution
// that is not there) come after the savepoint was released, and leave
// Begin's transaction aborted: roll it back, as the store asks.
//
// # Outbox
//
// Outbox ids come from an identity column, which hands them out in the
// order rows are inserted, not the order their transactions commit. So
// that a reader never sees a higher id committed before a lower one,
// StepWrite takes a transaction-level advisory lock (outboxLockKey) just
// before it inserts its outbox row: writers of notices commit one at a
// time from there, in id order. Steps without notices do not take it.
//
// # Errors
//
// interpretError turns pgx's errors into the store's: no rows is
// store.ErrNotFound (so is a row naming an execution that does not
// exist: a foreign-key violation), a unique violation
// store.ErrAlreadyExists, a serialization failure or deadlock
// store.ErrConflict, and a connection that fails or is refused, a server
// shutting down, too many connections, a full disk or a read-only
// server store.ErrUnavailable.
package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
	"stepwise/store/migrate"
)

//go:embed migration/*.sql
var migrationFS embed.FS

// Advisory lock keys ("stepwise" in ASCII, and one more).
const (
	migrationLockKey int64 = 0x7374657077697365
	outboxLockKey    int64 = 0x7374657077697366
)

// Options configures a driver. The zero value is ready to use.
type Options struct {
	// MaxConns caps the pool; 0 leaves it to the URL's pool_max_conns or
	// pgx's default, the larger of 4 and the number of CPUs.
	MaxConns int32
	// MinConns is how many connections the pool keeps open when idle; 0
	// leaves it to the URL's pool_min_conns, or none.
	MinConns int32
	// Upgrading, when set, is told of each migration applied to a
	// database that had some (migrate.Migrator.Upgrading).
	Upgrading func(migrate.Migration)
}

// Driver is a store.Driver on one PostgreSQL database.
type Driver struct {
	pool *pgxpool.Pool
	exec *Executor

	closeOnce sync.Once
}

// Executor runs store operations outside a transaction, or inside one when
// it is an ExecutorTx's.
type Executor struct {
	sqlcore.Core // the operations written once for both drivers

	driver *Driver
	tx     pgx.Tx // nil outside a transaction
}

// ExecutorTx is an Executor inside a transaction.
type ExecutorTx struct {
	Executor
}

var (
	_ store.Driver     = (*Driver)(nil)
	_ store.Executor   = (*Executor)(nil)
	_ store.ExecutorTx = (*ExecutorTx)(nil)
)

// Migrator returns the migrator of this driver's schema.
func Migrator() (*migrate.Migrator, error) {
	return migrate.NewDir(migrationFS, "migration")
}

// Open connects to the database at url (postgres://user:password@host:port/database?...,
// or libpq's key=value form) and migrates it to the latest schema. A
// server that cannot be reached is store.ErrUnavailable, with the host
// and database in the message (never the password).
func Open(ctx context.Context, url string, opts Options) (*Driver, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse PostgreSQL URL: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.MinConns > 0 {
		cfg.MinConns = opts.MinConns
	}
	if cfg.MinConns > cfg.MaxConns {
		return nil, fmt.Errorf("PostgreSQL pool: MinConns %d is above MaxConns %d", cfg.MinConns, cfg.MaxConns)
	}
	// The driver's statements are written for READ COMMITTED, whatever
	// the database's default; a transaction left open by a paused or cut
	// off client (holding row locks, or the outbox's) ends on its own.
	for name, value := range map[string]string{
		"default_transaction_isolation":       "read committed",
		"idle_in_transaction_session_timeout": "30s",
	} {
		if _, set := cfg.ConnConfig.RuntimeParams[name]; !set {
			cfg.ConnConfig.RuntimeParams[name] = value
		}
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s: %w", where, err)
	}
	d := &Driver{pool: pool}
	d.exec = &d.newExecutor(nil).Executor
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, interpretError("connect to PostgreSQL at "+where, err)
	}
	if err := d.migrate(ctx, opts.Upgrading); err != nil {
		pool.Close()
		return nil, interpretError("migrate", err)
	}
	return d, nil
}

// migrate brings the schema up to date in one transaction, holding the
// migration lock so that servers starting together take turns.
func (d *Driver) migrate(ctx context.Context, upgrading func(migrate.Migration)) error {
	m, err := Migrator()
	if err != nil {
		return err
	}
	m.Upgrading = upgrading
	db := stdlib.OpenDBFromPool(d.pool)
	defer db.Close()
	return m.Up(ctx, db, "SELECT pg_advisory_xact_lock($1)", migrationLockKey)
}

// Pool returns the driver's connection pool, for what the store does not
// cover, such as a connection of its own for LISTEN (Acquire, then
// Hijack). It closes with the driver.
func (d *Driver) Pool() *pgxpool.Pool { return d.pool }

// Ping checks that the database answers.
func (d *Driver) Ping(ctx context.Context) error {
	return interpretError("ping", d.pool.Ping(ctx))
}

// Executor returns an executor that runs each call on its own.
func (d *Driver) Executor() store.Executor { return d.exec }

// Begin starts a transaction on a connection of its own.
func (d *Driver) Begin(ctx context.Context) (store.ExecutorTx, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return nil, interpretError("begin", err)
	}
	return d.newExecutor(tx), nil
}

// WriteSteps is StepWrite in a transaction of its own: two round trips,
// the BEGIN sent with the statements, then the COMMIT, where Begin, a
// StepWrite (in a savepoint) and Commit take three.
func (d *Driver) WriteSteps(ctx context.Context, steps []*store.Step) error {
	return d.newExecutor(nil).StepWrite(ctx, steps)
}

// Close closes the pool, waiting for the connections in use to be
// released. It is safe to call more than once.
func (d *Driver) Close() error {
	d.closeOnce.Do(d.pool.Close)
	return nil
}

// Commit commits the transaction. Committing a transaction PostgreSQL
// aborted after a failed statement is an error, and rolls it back.
func (t *ExecutorTx) Commit(ctx context.Context) error {
	return interpretError("commit", t.tx.Commit(ctx))
}

// Rollback discards the transaction; once it has ended, that is not an
// error.
func (t *ExecutorTx) Rollback(ctx context.Context) error {
	err := t.tx.Rollback(ctx)
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return interpretError("rollback", err)
}

// interpretError converts an error from pgx or PostgreSQL into the store's
// sentinels, wrapped with op and the original error. It is the one place
// driver errors are translated.
func interpretError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w: %w", op, store.ErrNotFound, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case code == "23505": // unique_violation
			return fmt.Errorf("%s: %w: %w", op, store.ErrAlreadyExists, err)
		case code == "23503": // foreign_key_violation: the execution is not there
			return fmt.Errorf("%s: %w: %w", op, store.ErrNotFound, err)
		case code == "22021": // character_not_in_repertoire: a NUL in text
			return fmt.Errorf("%s: PostgreSQL text cannot hold a NUL character (U+0000): %w", op, err)
		case code == "40001", code == "40P01": // serialization_failure, deadlock_detected
			return fmt.Errorf("%s: %w: %w", op, store.ErrConflict, err)
		case strings.HasPrefix(code, "08"), // connection_exception
			strings.HasPrefix(code, "53"),                     // insufficient_resources: disk_full, out_of_memory, too_many_connections
			code == "57P01", code == "57P02", code == "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
			code == "25006", // read_only_sql_transaction (a standby)
			code == "58030": // io_error
			return fmt.Errorf("%s: %w: %w", op, store.ErrUnavailable, err)
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "closed pool") {
		return fmt.Errorf("%s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// querier is what *pgxpool.Pool and pgx.Tx share.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// q is where a single statement goes: the transaction, or the pool.
func (e *Executor) q() querier {
	if e.tx != nil {
		return e.tx
	}
	return e.driver.pool
}

// inTx runs fn, a write of several statements, all or none: inside a new
// transaction, or inside a savepoint of the executor's transaction (which
// then stays usable when fn fails).
func (e *Executor) inTx(ctx context.Context, fn func(q querier) error) error {
	var tx pgx.Tx
	var err error
	if e.tx != nil {
		tx, err = e.tx.Begin(ctx) // a savepoint
	} else {
		tx, err = e.driver.pool.Begin(ctx)
	}
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback(ctx))
	}
	return tx.Commit(ctx)
}

// queryAll runs a query and scans every row with scan (sqlcore.QueryAll).
func queryAll[T any](ctx context.Context, q querier, query string, args []any, scan func(sqlcore.Scanner) (T, error)) ([]T, error) {
	return sqlcore.QueryAll(ctx, pgQuerier{q}, query, args, scan)
}

// limit maps the store's "0 or less: no limit" to LIMIT NULL.
func limit(n int) any {
	if n <= 0 {
		return nil
	}
	return int64(n)
}
