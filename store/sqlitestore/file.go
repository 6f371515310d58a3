package sqlitestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"stepwise/store"
)

// fileMode is the mode of a database file the driver creates: the file
// holds the key that signs task tokens, so only its owner reads it.
const fileMode = 0o600

// createFile creates the database file at path with fileMode, whatever
// the umask, unless it exists. SQLite gives the -wal and -shm files it
// creates beside it the database file's mode.
func createFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	err = f.Chmod(fileMode)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fileError is a failure to open a database that the file system
// explains, in words: "the directory /data is not writable: read-only
// file system". It is store.ErrUnavailable.
type fileError struct {
	Msg string
	Err error // the system's error, such as syscall.EROFS
}

func (e *fileError) Error() string   { return e.Msg }
func (e *fileError) Unwrap() []error { return []error{store.ErrUnavailable, e.Err} }

// probeSize is how much describeOpenError writes to see whether the disk
// has room: more than SQLite needs to start a database.
const probeSize = 64 * 1024

// describeOpenError returns a fileError saying why the database at path
// could not be opened, when the file system tells: its directory does not
// exist or cannot be written (WAL mode creates the -wal and -shm files
// beside the database), the file cannot be written, or the disk is full.
// Otherwise it returns err. It looks at the file system as it is, so it
// runs before the driver's connections close.
func describeOpenError(path string, err error) error {
	dir := filepath.Dir(path)
	if abs, aerr := filepath.Abs(dir); aerr == nil {
		dir = abs // "the directory ." would say little
	}
	if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
		return &fileError{Msg: fmt.Sprintf("the directory %s does not exist", dir), Err: serr}
	}
	// An error of the driver's own file operations names its cause.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if fe := describeErrno(dir, pe.Err); fe != nil {
			return fe
		}
		return err
	}
	// SQLite's codes do not: ask the file system.
	if f, werr := os.OpenFile(path, os.O_WRONLY, 0); werr == nil {
		f.Close()
	} else if !errors.Is(werr, fs.ErrNotExist) {
		if errno, ok := errnoOf(werr); ok && (errors.Is(errno, fs.ErrPermission) || errno == syscall.EROFS) {
			return &fileError{Msg: fmt.Sprintf("the file %s is not writable: %v", path, errno), Err: errno}
		}
	}
	if fe := probeDir(dir); fe != nil {
		return fe
	}
	var serr *sqlite.Error
	if errors.As(err, &serr) && serr.Code()&0xff == sqlite3.SQLITE_FULL {
		return &fileError{Msg: fmt.Sprintf("the disk holding %s is full: %v", dir, syscall.ENOSPC), Err: syscall.ENOSPC}
	}
	return err
}

// probeDir creates and fills a file in dir and removes it, and returns
// what stopped it.
func probeDir(dir string) *fileError {
	f, err := os.CreateTemp(dir, ".stepwise-probe-*")
	if err != nil {
		return describeErrno(dir, err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, probeSize))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return describeErrno(dir, err)
	}
	return nil
}

// describeErrno words the failure to create or write a file in dir, or
// returns nil for a cause it has no words for.
func describeErrno(dir string, err error) *fileError {
	errno, ok := errnoOf(err)
	if !ok {
		return nil
	}
	switch {
	case errors.Is(errno, fs.ErrPermission), errno == syscall.EROFS:
		return &fileError{Msg: fmt.Sprintf("the directory %s is not writable: %v", dir, errno), Err: errno}
	case errno == syscall.ENOSPC, errno == syscall.EDQUOT:
		return &fileError{Msg: fmt.Sprintf("the disk holding %s is full: %v", dir, errno), Err: errno}
	}
	return nil
}

func errnoOf(err error) (syscall.Errno, bool) {
	var errno syscall.Errno
	ok := errors.As(err, &errno)
	return errno, ok
}
