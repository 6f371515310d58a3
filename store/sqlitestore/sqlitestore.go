// Package sqlitestore is the embedded store driver, on SQLite through the
// pure-Go modernc.org/sqlite.
//
// # Connections
//
// SQLite takes one writer at a time, so the driver holds exactly one writer
// connection: every transaction and every write outside one runs on it, in
// turn. Reads outside a transaction go to a separate pool of read-only
// connections; in WAL mode they see the last commit and neither wait for
// nor hold up the writer. A ":memory:" database lives in one connection,
// which then serves everything.
//
//	Executor() reads  ──► read pool (query_only, N connections)
//	Executor() writes ─┐
//	Begin() … Commit() ┴─► writer (1 connection, BEGIN IMMEDIATE)
//
// Because a transaction holds the writer, a write through Executor() while
// the same goroutine has a transaction open waits for that transaction: do
// a step's writes through its transaction.
//
// # Schema
//
// migration/*.sql, applied by Open. Times are INTEGER unix milliseconds in
// UTC. History events and replay inputs are keyed by the execution's integer
// row id rather than its ARN, which keeps a group commit's pages few.
//
// Each transaction prepares a statement the first time it runs it and reuses
// it for the rest of the transaction.
//
// # Errors
//
// interpretError turns SQLite's errors into the store's: no rows is
// store.ErrNotFound (so is a row naming an execution that does not exist),
// a UNIQUE or PRIMARY KEY clash store.ErrAlreadyExists, and a full disk, a
// read-only or unreadable file, an I/O error or a lock another process
// holds past the busy timeout store.ErrUnavailable. Open words a failure
// the file system explains (describeOpenError): a missing or read-only
// directory, a read-only file, a full disk.
//
// # Files
//
// A database file the driver creates has mode 0600, whatever the umask:
// it holds the key that signs task tokens. SQLite gives the -wal and -shm
// files the database file's mode.
package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"stepwise/store"
	"stepwise/store/internal/sqlcore"
	"stepwise/store/migrate"
)

//go:embed migration/*.sql
var migrationFS embed.FS

// Defaults for Options.
const (
	DefaultBusyTimeout = 5 * time.Second
	DefaultReadConns   = 4
)

// Memory is the path of a database that lives in memory and dies with the
// driver.
const Memory = ":memory:"

// Options configures a driver. The zero value is ready to use.
type Options struct {
	// BusyTimeout is how long a statement waits for a lock held by another
	// process before failing with store.ErrUnavailable. Default
	// DefaultBusyTimeout.
	BusyTimeout time.Duration
	// ReadConns is the size of the read pool. Default DefaultReadConns.
	ReadConns int
	// Upgrading, when set, is told of each migration applied to a
	// database that had some (migrate.Migrator.Upgrading).
	Upgrading func(migrate.Migration)

	// readOnly opens the file with mode=ro; tests use it to stand in for a
	// read-only file when they run as root.
	readOnly bool
}

// Driver is a store.Driver on one SQLite database.
type Driver struct {
	read  *sql.DB // == write for ":memory:"
	write *sql.DB
	// ckpt checkpoints the WAL beside the writer (checkpoint.go); nil for
	// ":memory:" and a read-only database.
	ckpt *checkpointer
	// reads prepares each distinct read query once for the read pool;
	// writes holds the hot statements prepared on the writer at open.
	reads  stmtCache
	writes stmtCache
	exec   *Executor

	closeOnce sync.Once
	closeErr  error
}

// Executor runs store operations outside a transaction, or inside one when
// it is an ExecutorTx's.
type Executor struct {
	sqlcore.Core // the operations written once for both drivers

	driver *Driver
	tx     *txQuerier // nil outside a transaction
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

// Open opens (creating it if need be) the database at path, or an in-memory
// one when path is Memory, and migrates it to the latest schema. A file it
// creates is readable and writable by its owner only, and so are the -wal
// and -shm files beside it. A failure the file system explains (a
// directory that does not exist or is read-only, a full disk) is worded
// so: "the directory /data is not writable: read-only file system". The
// caller names the path in its message.
func Open(ctx context.Context, path string, opts Options) (*Driver, error) {
	busy := "busy_timeout(" + strconv.FormatInt(cmp.Or(opts.BusyTimeout, DefaultBusyTimeout).Milliseconds(), 10) + ")"
	d := &Driver{}
	if path == Memory {
		db, err := sql.Open("sqlite", Memory+"?"+dsnQuery(true, false, busy, "foreign_keys(1)"))
		if err != nil {
			return nil, err
		}
		// The database is the connection: never let it go.
		keepOneConn(db)
		d.read, d.write = db, db
		d.reads.db, d.writes.db = db, db
	} else {
		if !opts.readOnly {
			if err := createFile(path); err != nil {
				return nil, describeOpenError(path, err)
			}
		}
		// A file: URI, so that the path is escaped and mode=ro applies.
		uri := "file:" + (&url.URL{Path: path}).EscapedPath() + "?"
		write, err := sql.Open("sqlite", uri+dsnQuery(true, opts.readOnly, busy, "foreign_keys(1)", "journal_mode(WAL)", "synchronous(FULL)", "temp_store(MEMORY)"))
		if err != nil {
			return nil, err
		}
		keepOneConn(write)
		read, err := sql.Open("sqlite", uri+dsnQuery(false, opts.readOnly, busy, "query_only(1)"))
		if err != nil {
			write.Close()
			return nil, err
		}
		n := cmp.Or(opts.ReadConns, DefaultReadConns)
		read.SetMaxOpenConns(n)
		read.SetMaxIdleConns(n)
		d.read, d.write = read, write
		d.reads.db, d.writes.db = read, write
		if !opts.readOnly {
			if d.ckpt, err = startCheckpointer(path, uri, busy); err != nil {
				read.Close()
				write.Close()
				return nil, err
			}
		}
	}
	d.exec = &d.newExecutor(nil).Executor

	if err := d.migrate(ctx, opts.Upgrading); err != nil {
		return nil, d.openFailed(path, interpretError("migrate", err))
	}
	if err := d.prepareHot(ctx); err != nil {
		return nil, d.openFailed(path, interpretError("prepare statements", err))
	}
	return d, nil
}

// openFailed closes a driver that could not be opened and returns err,
// worded by the file system where it can be. The words come first: closing
// the last connection removes the -wal and -shm files, and with them the
// evidence of a full disk.
func (d *Driver) openFailed(path string, err error) error {
	if path != Memory {
		err = describeOpenError(path, err)
	}
	d.Close()
	return err
}

// hotStatements are the statements of an engine step: prepared once on the
// writer when the driver opens, and reused by every transaction.
func hotStatements() []string {
	q := []string{sqlcore.ExecutionInsertSQL, sqlcore.ExecutionUpdateSQL, sqlcore.ExecutionVersionSQL}
	for n := 1; n <= 32; n++ {
		q = append(q, tableValuesSQL(&sqlcore.HistoryTable, n))
	}
	for n := 1; n <= 8; n++ {
		q = append(q,
			tableValuesSQL(&sqlcore.InputTable, n),
			tableValuesSQL(&sqlcore.TimerTable, n),
			tableValuesSQL(&sqlcore.TaskTable, n))
	}
	return append(q, stepStatements()...)
}

// prepareHot prepares the hot statements on the writer. The writer is one
// connection and no transaction is open yet, so each is prepared on it and
// Tx.StmtContext later reuses it without parsing again.
func (d *Driver) prepareHot(ctx context.Context) error {
	for _, q := range hotStatements() {
		if _, err := d.writes.stmt(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// dsnQuery is the query part of a modernc.org/sqlite DSN: pragmas every
// connection runs when it opens, BEGIN IMMEDIATE for transactions that will
// write, and SQLite's read-only mode.
func dsnQuery(immediate, readOnly bool, pragmas ...string) string {
	q := url.Values{"_pragma": pragmas}
	if immediate {
		q.Set("_txlock", "immediate")
	}
	if readOnly {
		q.Set("mode", "ro")
	}
	return q.Encode()
}

// keepOneConn makes db a single connection that is never closed while db
// is open.
func keepOneConn(db *sql.DB) {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// migrate brings the schema up to date in one transaction.
func (d *Driver) migrate(ctx context.Context, upgrading func(migrate.Migration)) error {
	m, err := Migrator()
	if err != nil {
		return err
	}
	m.Upgrading = upgrading
	return m.Up(ctx, d.write, "")
}

// Executor returns an executor that runs each call on its own.
func (d *Driver) Executor() store.Executor { return d.exec }

// Begin starts a transaction on the writer connection. It waits while
// another transaction holds it.
func (d *Driver) Begin(ctx context.Context) (store.ExecutorTx, error) {
	tx, err := d.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, interpretError("begin", err)
	}
	return d.newExecutor(&txQuerier{tx: tx, writes: &d.writes, stmts: map[string]*sql.Stmt{}}), nil
}

// Close closes the database. It is safe to call more than once.
func (d *Driver) Close() error {
	d.closeOnce.Do(func() {
		var errs []error
		// The checkpointer's connection closes before the writer's,
		// the last, which checkpoints the WAL and removes it.
		errs = append(errs, d.ckpt.close(), d.reads.close(), d.writes.close())
		if d.read != d.write {
			errs = append(errs, d.read.Close())
		}
		errs = append(errs, d.write.Close())
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

// Commit commits the transaction.
func (t *ExecutorTx) Commit(ctx context.Context) error {
	if err := t.tx.tx.Commit(); err != nil {
		return interpretError("commit", err)
	}
	t.driver.ckpt.committed()
	return nil
}

// Rollback discards the transaction. After a full disk or an I/O error
// SQLite may have rolled it back already; that is not an error here.
func (t *ExecutorTx) Rollback(ctx context.Context) error {
	err := t.tx.tx.Rollback()
	var serr *sqlite.Error
	if errors.As(err, &serr) && strings.Contains(serr.Error(), "no transaction is active") {
		return nil // SQLite has no distinct code for this
	}
	return interpretError("rollback", err)
}

// interpretError converts an error from database/sql or SQLite into the
// store's sentinels, wrapped with op and the original error. It is the one
// place driver errors are translated.
func interpretError(op string, err error) error {
	if err == nil {
		return nil
	}
	if err == sql.ErrNoRows {
		return fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	if errors.Is(err, sql.ErrNoRows) { // with detail, such as which execution
		return fmt.Errorf("%s: %w: %w", op, store.ErrNotFound, err)
	}
	var serr *sqlite.Error
	if errors.As(err, &serr) {
		switch serr.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY,
			sqlite3.SQLITE_CONSTRAINT_TRIGGER: // stepwise_history_taken, the one trigger that refuses
			return fmt.Errorf("%s: %w: %w", op, store.ErrAlreadyExists, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%s: %w: %w", op, store.ErrNotFound, err)
		}
		switch serr.Code() & 0xff { // the primary result code
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR,
			sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT,
			sqlite3.SQLITE_BUSY, sqlite3.SQLITE_PERM:
			return fmt.Errorf("%s: %w: %w", op, store.ErrUnavailable, err)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// stmtCache runs reads on the read pool with statements prepared once and
// kept for the driver's life: the API reads the same few queries all the
// time, and parsing them each time costs more than running them.
type stmtCache struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = map[string]*sql.Stmt{}
	}
	c.stmts[query] = st
	return st, nil
}

// prepared returns the statement for query if it was prepared already; it
// never prepares (inside a transaction the writer connection is taken).
func (c *stmtCache) prepared(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[query]
}

func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		// Let the error surface from Scan, as database/sql does.
		return c.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.stmts {
		errs = append(errs, st.Close())
	}
	c.stmts = nil
	return errors.Join(errs...)
}

// txQuerier runs a transaction's statements, preparing each distinct query
// once per transaction: a group commit runs the same few statements for
// every step in it, and parsing them again each time would cost a fifth of
// the commit.
type txQuerier struct {
	tx     *sql.Tx
	writes *stmtCache // the hot statements, prepared on the writer
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt // closed with the transaction
}

func (q *txQuerier) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if s, ok := q.stmts[query]; ok {
		return s, nil
	}
	var s *sql.Stmt
	if hot := q.writes.prepared(query); hot != nil {
		s = q.tx.StmtContext(ctx, hot)
	} else {
		var err error
		if s, err = q.tx.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
	}
	q.stmts[query] = s
	return s, nil
}

func (q *txQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	s, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

func (q *txQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

func (q *txQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := q.stmt(ctx, query)
	if err != nil {
		// A *sql.Row cannot be made with an error: let the transaction
		// fail the same way.
		return q.tx.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// reader is where a read goes: the transaction, or the read pool.
func (e *Executor) reader() querier {
	if e.tx != nil {
		return e.tx
	}
	return &e.driver.reads
}

// writer is where a single-statement write goes: the transaction, or the
// writer connection.
func (e *Executor) writer() querier {
	if e.tx != nil {
		return e.tx
	}
	return e.driver.write
}

// inTx runs fn, a write of several statements, all or none: inside a new
// transaction on the writer, or inside a savepoint of the executor's
// transaction (SQLite undoes only the failing statement, not the ones
// before it).
func (e *Executor) inTx(ctx context.Context, fn func(q querier) error) error {
	if e.tx != nil {
		if _, err := e.tx.ExecContext(ctx, "SAVEPOINT stepwise_write"); err != nil {
			return err
		}
		if err := fn(e.tx); err != nil {
			_, rbErr := e.tx.ExecContext(ctx, "ROLLBACK TO stepwise_write")
			if rbErr == nil {
				_, rbErr = e.tx.ExecContext(ctx, "RELEASE stepwise_write")
			}
			return errors.Join(err, rbErr)
		}
		_, err := e.tx.ExecContext(ctx, "RELEASE stepwise_write")
		return err
	}
	tx, err := e.driver.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	e.driver.ckpt.committed()
	return nil
}

// limit maps the store's "0 or less: no limit" to SQLite's LIMIT -1.
func limit(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}
