//go:build !windows

package cli

import (
	"syscall"
	"time"
)

// selfCPU is the user+system CPU time this process used so far.
func selfCPU() time.Duration {
	var usage syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
