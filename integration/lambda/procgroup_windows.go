//go:build windows

package lambda

import "os/exec"

// killAsGroup leaves cmd as it is on Windows, which has no process
// groups to signal: cancellation kills the command alone.
func killAsGroup(*exec.Cmd) {}

// killGroup does nothing on Windows.
func killGroup(*exec.Cmd) {}
