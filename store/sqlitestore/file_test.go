package sqlitestore

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/mounttest"

	"stepwise/store"
)

func TestOpenFiles(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	t.Run("OwnerOnly", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "stepwise.db")
		d, err := Open(ctx, path, Options{})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, d.Close()) })
		seed(ctx, t, d.Executor())
		_, err = d.Executor().ExecutionGet(ctx, "arn:aws:states:us-east-1:123456789012:execution:sm:x")
		require.NoError(t, err)

		for _, name := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(name)
			require.NoError(t, err)
			require.Equal(t, fs.FileMode(0o600), fi.Mode().Perm(), name)
		}
	})

	t.Run("ExistingFileKeepsItsMode", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "stepwise.db")
		require.NoError(t, os.WriteFile(path, nil, 0o640))
		require.NoError(t, os.Chmod(path, 0o640))
		d, err := Open(ctx, path, Options{})
		require.NoError(t, err)
		require.NoError(t, d.Close())
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, fs.FileMode(0o640), fi.Mode().Perm())
	})

	t.Run("MissingDirectory", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "nowhere")
		_, err := Open(ctx, filepath.Join(dir, "x.db"), Options{})
		require.ErrorIs(t, err, store.ErrUnavailable)
		require.EqualError(t, err, "the directory "+dir+" does not exist")
	})

	t.Run("ReadOnlyDirectory", func(t *testing.T) {
		t.Parallel()
		var dir, cause string
		if os.Geteuid() == 0 {
			dir, cause = mounttest.Tmpfs(t, "ro,size=1m"), "read-only file system"
		} else {
			dir, cause = t.TempDir(), "permission denied"
			require.NoError(t, os.Chmod(dir, 0o555))
			t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
		}
		_, err := Open(ctx, filepath.Join(dir, "x.db"), Options{})
		require.ErrorIs(t, err, store.ErrUnavailable)
		require.EqualError(t, err, "the directory "+dir+" is not writable: "+cause)
	})

	t.Run("ReadOnlyFile", func(t *testing.T) {
		t.Parallel()
		var dir, cause string
		if os.Geteuid() == 0 {
			dir, cause = mounttest.Tmpfs(t, "size=1m"), "read-only file system"
		} else {
			dir, cause = t.TempDir(), "permission denied"
		}
		path := filepath.Join(dir, "x.db")
		d, err := Open(ctx, path, Options{})
		require.NoError(t, err)
		seed(ctx, t, d.Executor())
		require.NoError(t, d.Close())
		if os.Geteuid() == 0 {
			out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput()
			require.NoError(t, err, string(out))
		} else {
			require.NoError(t, os.Chmod(path, 0o444))
			require.NoError(t, os.Chmod(dir, 0o555))
			t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
		}
		_, err = Open(ctx, path, Options{})
		require.ErrorIs(t, err, store.ErrUnavailable)
		require.EqualError(t, err, "the file "+path+" is not writable: "+cause)
	})

	t.Run("FullDisk", func(t *testing.T) {
		t.Parallel()
		dir := mounttest.Tmpfs(t, "size=16k")
		_, err := Open(ctx, filepath.Join(dir, "x.db"), Options{})
		require.ErrorIs(t, err, store.ErrUnavailable)
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.EqualError(t, err, "the disk holding "+dir+" is full: no space left on device")
		// The probe left nothing behind.
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			require.Contains(t, []string{"x.db", "x.db-wal", "x.db-shm"}, e.Name())
		}
	})
}

func TestDescribeOpenError(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	path := filepath.Join(dir, "x.db")
	missing := filepath.Join(dir, "nowhere")
	other := errors.New("file is not a database")
	cwd, err := os.Getwd()
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		path string
		err  error
		want string
	}{
		{"ReadOnly", path, &fs.PathError{Op: "open", Path: path, Err: syscall.EROFS}, "the directory " + dir + " is not writable: read-only file system"},
		{"Permission", path, &fs.PathError{Op: "open", Path: path, Err: syscall.EACCES}, "the directory " + dir + " is not writable: permission denied"},
		{"Full", path, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOSPC}, "the disk holding " + dir + " is full: no space left on device"},
		{"Quota", path, &fs.PathError{Op: "open", Path: path, Err: syscall.EDQUOT}, "the disk holding " + dir + " is full: disk quota exceeded"},
		{"RelativePath", "x.db", &fs.PathError{Op: "open", Path: "x.db", Err: syscall.EROFS}, "the directory " + cwd + " is not writable: read-only file system"},
		{"MissingDirectory", filepath.Join(missing, "x.db"), &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}, "the directory " + missing + " does not exist"},
		// Causes without words, and a directory that shows nothing wrong,
		// leave the error as it is.
		{"OtherErrno", path, &fs.PathError{Op: "open", Path: path, Err: syscall.EIO}, "open " + path + ": input/output error"},
		{"NothingWrong", path, other, other.Error()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := describeOpenError(tt.path, tt.err)
			require.EqualError(t, err, tt.want)
			var fe *fileError
			if errors.As(err, &fe) {
				require.ErrorIs(t, err, store.ErrUnavailable)
			}
		})
	}
	// The probe of a sound directory left nothing behind.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}
