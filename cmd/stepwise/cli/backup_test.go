package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/store/sqlitestore"
)

func TestBackupCommand(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	db := filepath.Join(dir, "stepwise.db")
	d, err := sqlitestore.Open(context.Background(), db, sqlitestore.Options{})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	dest := filepath.Join(dir, "backup.db")

	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := (&CLI{Out: &out, Err: &errOut}).Execute(append([]string{"backup"}, args...))
		return code, out.String(), errOut.String()
	}

	code, out, _ := run("--db", db, dest)
	require.Equal(t, 0, code)
	require.Regexp(t, "^stepwise: backed up "+regexp.QuoteMeta(db)+" to "+regexp.QuoteMeta(dest)+` \([0-9.]+ kB in \d+ms\)\n$`, out)

	code, out, errOut := run("--db", db, dest)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Equal(t, "stepwise: backup: "+dest+": file already exists (--force replaces it)\n", errOut)

	code, _, _ = run("--db", db, "--force", dest)
	require.Equal(t, 0, code)

	code, _, errOut = run("--db", filepath.Join(dir, "none.db"), filepath.Join(dir, "b2.db"))
	require.Equal(t, 1, code)
	require.Equal(t, "stepwise: backup: no database at "+filepath.Join(dir, "none.db")+": file does not exist\n", errOut)

	code, _, _ = run()
	require.Equal(t, 2, code)
}
