//go:build !windows

package lambda

import (
	"os/exec"
	"syscall"
)

// killAsGroup starts cmd in a process group of its own and makes its
// cancellation kill the whole group.
func killAsGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup kills what is left of the process group of cmd, which has
// exited.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
