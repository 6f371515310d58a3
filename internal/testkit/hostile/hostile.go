// Package hostile makes the hostile inputs the tests of the readers of
// user-named files give them: a YAML alias bomb, a FIFO no one writes.
package hostile

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// AliasBomb is a YAML mapping of a few hundred bytes whose last key, "i",
// expands to 9⁹ strings: nine levels of nine aliases.
func AliasBomb() string {
	var b strings.Builder
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n")
		prev = n
	}
	return b.String()
}

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
