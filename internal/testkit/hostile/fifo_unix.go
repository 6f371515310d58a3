//go:build unix

package hostile

import (
	"path/filepath"
	"syscall"
	"testing"
)

// FIFO makes a named pipe called name in a temporary folder of the
// test's, which no one writes: a reader that opens it blocks.
func FIFO(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
	return path
}
