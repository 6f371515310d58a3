// Package migrate applies a store driver's embedded, numbered SQL migrations
// and records the applied versions in a stepwise_migration table.
//
// A driver embeds its scripts as NNN_name.up.sql and NNN_name.down.sql and
// builds a Migrator from them:
//
//	//go:embed migration/*.sql
//	var migrationFS embed.FS
//
//	sub, _ := fs.Sub(migrationFS, "migration")
//	m, err := migrate.New(sub)
//	res, err := m.Migrate(ctx, tx, migrate.DirectionUp, nil)
//
// Migrate runs through whatever Executor it is given. Pass a transaction to
// make the run atomic, or to migrate inside a caller's own transaction (as
// river's rivermigrate does): nothing here begins or commits one.
//
// The SQL the migrator runs itself is plain enough for both SQLite and
// PostgreSQL: BIGINT columns and $N placeholders.
package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Direction is the way a migration runs.
type Direction string

const (
	DirectionUp   Direction = "up"
	DirectionDown Direction = "down"
)

// Executor runs SQL. *sql.DB, *sql.Conn and *sql.Tx satisfy it.
type Executor interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	Up      string
	Down    string
}

// Opts bounds a Migrate run.
type Opts struct {
	// MaxSteps caps how many migrations run; 0 means no cap, except when
	// migrating down without a TargetVersion, where it means one.
	MaxSteps int
	// TargetVersion is where the run stops. Up applies migrations up to and
	// including it (0: the latest). Down reverts every migration above it;
	// -1 reverts them all, 0 defers to MaxSteps.
	TargetVersion int
}

// Result says what a Migrate run did.
type Result struct {
	Direction Direction
	// Versions are the migrations applied or reverted, in the order they ran.
	Versions []int
}

// Migrator applies one driver's migrations.
type Migrator struct {
	migrations []Migration // by version

	// Upgrading, when set, is told of each migration about to be applied
	// to a database that had some already (an upgrade, which may rewrite
	// a large table and take a while), not of those that build a new
	// database.
	Upgrading func(Migration)
}

const (
	createTableSQL = `CREATE TABLE IF NOT EXISTS stepwise_migration (
    version    BIGINT NOT NULL PRIMARY KEY,
    name       TEXT   NOT NULL,
    applied_at BIGINT NOT NULL
)`
	selectVersionsSQL = `SELECT version FROM stepwise_migration ORDER BY version`
	insertVersionSQL  = `INSERT INTO stepwise_migration (version, name, applied_at) VALUES ($1, $2, $3)`
	deleteVersionSQL  = `DELETE FROM stepwise_migration WHERE version = $1`
)

var fileRE = regexp.MustCompile(`^(\d+)_([a-z0-9_]+)\.(up|down)\.sql$`)

// NewDir is New of the directory dir of fsys, such as a driver's
// embedded migration files.
func NewDir(fsys fs.FS, dir string) (*Migrator, error) {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, err
	}
	return New(sub)
}

// New reads the migrations in the root of fsys. Every version needs both an
// up and a down script; other files are an error.
func New(fsys fs.FS) (*Migrator, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	byVersion := map[int]*Migration{}
	for _, ent := range entries {
		m := fileRE.FindStringSubmatch(ent.Name())
		if ent.IsDir() || m == nil {
			return nil, fmt.Errorf("migration file %q: want NNN_name.up.sql or NNN_name.down.sql", ent.Name())
		}
		version, _ := strconv.Atoi(m[1])
		if version < 1 {
			return nil, fmt.Errorf("migration file %q: versions start at 1", ent.Name())
		}
		body, err := fs.ReadFile(fsys, ent.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", ent.Name(), err)
		}
		mig := byVersion[version]
		if mig == nil {
			mig = &Migration{Version: version, Name: m[2]}
			byVersion[version] = mig
		}
		if mig.Name != m[2] {
			return nil, fmt.Errorf("migration %d has two names: %q and %q", version, mig.Name, m[2])
		}
		if m[3] == "up" {
			mig.Up = string(body)
		} else {
			mig.Down = string(body)
		}
	}
	mr := &Migrator{}
	for _, mig := range byVersion {
		if mig.Up == "" || mig.Down == "" {
			return nil, fmt.Errorf("migration %03d_%s: want both an up and a down script", mig.Version, mig.Name)
		}
		mr.migrations = append(mr.migrations, *mig)
	}
	slices.SortFunc(mr.migrations, func(a, b Migration) int { return a.Version - b.Version })
	return mr, nil
}

// Migrations returns every migration, by version.
func (mr *Migrator) Migrations() []Migration {
	return slices.Clone(mr.migrations)
}

// Applied returns the versions recorded in the database, in order.
func (mr *Migrator) Applied(ctx context.Context, db Executor) ([]int, error) {
	if _, err := db.ExecContext(ctx, createTableSQL); err != nil {
		return nil, fmt.Errorf("create stepwise_migration: %w", err)
	}
	rows, err := db.QueryContext(ctx, selectVersionsSQL)
	if err != nil {
		return nil, fmt.Errorf("list applied migrations: %w", err)
	}
	defer rows.Close()
	var versions []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("list applied migrations: %w", err)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list applied migrations: %w", err)
	}
	return versions, nil
}

// Migrate applies (up) or reverts (down) migrations through db. Migrating
// up fails when the database holds a version this migrator does not know,
// that is when it was migrated by a newer build.
func (mr *Migrator) Migrate(ctx context.Context, db Executor, dir Direction, opts *Opts) (*Result, error) {
	if opts == nil {
		opts = &Opts{}
	}
	applied, err := mr.Applied(ctx, db)
	if err != nil {
		return nil, err
	}
	res := &Result{Direction: dir}
	switch dir {
	case DirectionUp:
		for _, v := range applied {
			if !slices.ContainsFunc(mr.migrations, func(m Migration) bool { return m.Version == v }) {
				return nil, fmt.Errorf("database has migration %d, which this build does not know: it was migrated by a newer version", v)
			}
		}
		for _, m := range mr.migrations {
			if slices.Contains(applied, m.Version) {
				continue
			}
			if opts.TargetVersion > 0 && m.Version > opts.TargetVersion {
				break
			}
			if opts.MaxSteps > 0 && len(res.Versions) == opts.MaxSteps {
				break
			}
			if len(applied) > 0 && mr.Upgrading != nil {
				mr.Upgrading(m)
			}
			if _, err := db.ExecContext(ctx, m.Up); err != nil {
				return nil, fmt.Errorf("migration %03d_%s up: %w", m.Version, m.Name, err)
			}
			if _, err := db.ExecContext(ctx, insertVersionSQL, m.Version, m.Name, time.Now().UnixMilli()); err != nil {
				return nil, fmt.Errorf("record migration %d: %w", m.Version, err)
			}
			res.Versions = append(res.Versions, m.Version)
		}
	case DirectionDown:
		maxSteps := opts.MaxSteps
		if maxSteps == 0 && opts.TargetVersion == 0 {
			maxSteps = 1
		}
		for i := len(mr.migrations) - 1; i >= 0; i-- {
			m := mr.migrations[i]
			if !slices.Contains(applied, m.Version) {
				continue
			}
			if m.Version <= opts.TargetVersion {
				break
			}
			if maxSteps > 0 && len(res.Versions) == maxSteps {
				break
			}
			if _, err := db.ExecContext(ctx, m.Down); err != nil {
				return nil, fmt.Errorf("migration %03d_%s down: %w", m.Version, m.Name, err)
			}
			if _, err := db.ExecContext(ctx, deleteVersionSQL, m.Version); err != nil {
				return nil, fmt.Errorf("unrecord migration %d: %w", m.Version, err)
			}
			res.Versions = append(res.Versions, m.Version)
		}
	default:
		return nil, fmt.Errorf("unknown migration direction %q", dir)
	}
	return res, nil
}

// Up brings db's schema up to date in one transaction. first, unless
// empty, runs with args at the transaction's start: a driver takes a lock
// there, so that servers starting together take turns.
func (mr *Migrator) Up(ctx context.Context, db *sql.DB, first string, args ...any) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if first != "" {
		if _, err := tx.ExecContext(ctx, first, args...); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if _, err := mr.Migrate(ctx, tx, DirectionUp, nil); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
