package cli

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormatVersion(t *testing.T) {
	t.Parallel()
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "6afcf77aa1b2c3d4e5f60718293a4b5c6d7e8f90"},
		{Key: "vcs.time", Value: "2026-11-27T15:20:00Z"},
		{Key: "vcs.modified", Value: "false"},
	}}
	require.Equal(t, "v1.2.0 (commit 6afcf77aa1b2, 2026-11-27T15:20:00Z, go1.26.8, linux/arm64)",
		formatVersion("v1.2.0", info, "linux/arm64"))

	info.Settings[2].Value = "true"
	require.Equal(t, "devel (commit 6afcf77aa1b2-dirty, 2026-11-27T15:20:00Z, go1.26.8, darwin/amd64)",
		formatVersion("", info, "darwin/amd64"))

	require.Equal(t, "devel (go1.26.8, windows/amd64)",
		formatVersion("", &debug.BuildInfo{GoVersion: "go1.26.8"}, "windows/amd64"))
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	out, errOut, code := execute("--version")
	require.Equal(t, 0, code, errOut)
	require.True(t, strings.HasPrefix(out, "stepwise version devel ("), out)
}
