//go:build !linux

package lambda

import "os/exec"

// Elsewhere than on Linux a function's process gets no parent-death
// signal and its process groups are not recorded (see groups_linux.go).
type groupRecord struct{}

func (*groupRecord) add(int)    {}
func (*groupRecord) remove(int) {}
func (*groupRecord) close()     {}

func startLocked(cmd *exec.Cmd) error { return cmd.Start() }

// DefaultGroupsDir is "": process groups are recorded on Linux only.
func DefaultGroupsDir() string { return "" }

// RecordGroups does nothing: process groups are recorded on Linux only.
func (l *Local) RecordGroups(dir string) (killed int, err error) { return 0, nil }
