// Package mounttest mounts small file systems for tests: a tmpfs that
// fills up, or one mounted read-only.
package mounttest

import (
	"os"
	"os/exec"
	"testing"
)

// Tmpfs mounts a tmpfs with the given mount options (such as "size=5m" or
// "ro,size=1m") on a new directory, unmounted when the test ends. Where
// this process cannot mount (it is not root, or the system refuses) the
// test is skipped with the reason, except in CI (CI=true), where it fails.
func Tmpfs(t testing.TB, options string) string {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") == "true" {
		skip = t.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", options, "tmpfs", dir).CombinedOutput(); err != nil {
		skip("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}
