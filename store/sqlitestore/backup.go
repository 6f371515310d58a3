package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// BackupOptions configure Backup.
type BackupOptions struct {
	// Overwrite replaces a file at the destination. Without it Backup
	// refuses one (fs.ErrExist).
	Overwrite bool
}

// Backup writes a consistent copy of the database at dbPath to dest while
// other processes (a running server) read and write it.
//
// The copy is SQLite's VACUUM INTO on a connection of its own, which only
// reads: it reads one snapshot of the database (in WAL mode the server's
// commits go on meanwhile; only the WAL's checkpoint waits for the copy to
// end) and writes it, compacted, to a temporary file beside dest, which is
// synced and then renamed to dest. A crash leaves dest as it was. The copy
// has mode 0600 like the database: it holds the key of task tokens. (A
// read-only connection, mode=ro, would leave -wal and -shm files behind
// when no server has the database open; query_only forbids VACUUM INTO.)
func Backup(ctx context.Context, dbPath, dest string, opts BackupOptions) (err error) {
	if dbPath == Memory {
		return errors.New("an in-memory database has nothing to back up")
	}
	src, err := os.Stat(dbPath)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no database at %s: %w", dbPath, fs.ErrNotExist)
	}
	if err != nil {
		return err
	}
	if dst, err := os.Stat(dest); err == nil {
		if os.SameFile(src, dst) {
			return fmt.Errorf("%s is the database itself", dest)
		}
		if !opts.Overwrite {
			return fmt.Errorf("%s: %w", dest, fs.ErrExist)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// A -wal file left beside dest would be read as part of the copy.
	for _, side := range []string{dest + "-wal", dest + "-shm"} {
		if _, err := os.Lstat(side); err == nil && !opts.Overwrite {
			return fmt.Errorf("%s: %w", side, fs.ErrExist)
		}
	}

	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-*")
	if err != nil {
		return err
	}
	tmpPath := tmp.Name()
	if err := tmp.Close(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmpPath)
		}
	}()
	if err := vacuumInto(ctx, dbPath, tmpPath); err != nil {
		return err
	}
	// SQLite does not sync the file VACUUM INTO writes.
	if err := syncFile(tmpPath); err != nil {
		return err
	}
	if opts.Overwrite {
		for _, side := range []string{dest + "-wal", dest + "-shm"} {
			if err := os.Remove(side); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if err := os.Rename(tmpPath, dest); err != nil {
			return err
		}
	} else {
		// A link fails if dest appeared meanwhile: nothing is replaced.
		if err := os.Link(tmpPath, dest); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s: %w", dest, fs.ErrExist)
			}
			return err
		}
		os.Remove(tmpPath)
	}
	return syncFile(filepath.Dir(dest))
}

// vacuumInto copies the database at dbPath into the empty file at to.
func vacuumInto(ctx context.Context, dbPath, to string) error {
	uri := "file:" + (&url.URL{Path: dbPath}).EscapedPath() + "?" + dsnQuery(false, false, "busy_timeout(5000)")
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return err
	}
	defer db.Close()
	keepOneConn(db)
	var tables int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'stepwise_migration'`).Scan(&tables)
	if err != nil {
		return interpretError("read database "+dbPath, err)
	}
	if tables == 0 {
		return fmt.Errorf("%s is not a stepwise database", dbPath)
	}
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, to); err != nil {
		return interpretError("copy database "+dbPath, err)
	}
	return db.Close()
}

// syncFile flushes a file or a directory to the disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}
