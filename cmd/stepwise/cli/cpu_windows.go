//go:build windows

package cli

import "time"

// selfCPU is not measured on Windows: the bench reports the client's CPU
// as zero there.
func selfCPU() time.Duration { return 0 }
