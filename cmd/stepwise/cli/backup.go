package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"stepwise/config"
	"stepwise/store/sqlitestore"
)

type backupCommand struct {
	*CommandBase
	db    string
	force bool
}

func (c *backupCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Copy the database to FILE, consistently, while the server runs",
		Long: `Copy the database (--db) to FILE: one consistent snapshot, taken while
"stepwise serve" goes on reading and writing it. The server's commits are
not held up; its WAL grows until the copy ends. FILE is written beside its
final name and renamed into place, so it is never half-written.

Start a server on the copy (stepwise serve --db FILE) to restore it: it
resumes the executions that were running when the copy was taken.

FILE must not exist unless --force is given.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context(), args[0]) },
	}
	cmd.Flags().StringVar(&c.db, "db", config.DefaultDB, "SQLite database file to copy (the one serve --db names)")
	cmd.Flags().BoolVar(&c.force, "force", false, "replace FILE if it exists")
	return cmd
}

func (c *backupCommand) run(ctx context.Context, dest string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if config.IsPostgresURL(c.db) {
		return &UsageError{"backup copies a SQLite database; back a PostgreSQL database up with its own tools (pg_dump, or the server's base backups)"}
	}
	src, err := filepath.Abs(c.db)
	if err != nil {
		return err
	}
	if dest, err = filepath.Abs(dest); err != nil {
		return err
	}
	began := time.Now()
	err = sqlitestore.Backup(ctx, src, dest, sqlitestore.BackupOptions{Overwrite: c.force})
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("backup: %w (--force replaces it)", err)
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fi, err := os.Stat(dest)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "stepwise: backed up %s to %s (%s in %s)\n", src, dest, byteSize(fi.Size()), time.Since(began).Round(time.Millisecond))
	return nil
}

// byteSize writes n bytes for a person: 912 B, 3.4 MB.
func byteSize(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
