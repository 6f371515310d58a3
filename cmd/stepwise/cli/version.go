package cli

import (
	"cmp"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the release a binary was built as: scripts/build-release.sh
// sets it with -ldflags "-X stepwise/cmd/stepwise/cli.Version=v1.2.3".
// A plain go build or go install leaves it empty ("devel").
var Version string

// versionString is what `stepwise --version` prints after "stepwise
// version ": the release, then the commit and its time when the build
// recorded them, the Go version and the platform.
func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return formatVersion(Version, info, runtime.GOOS+"/"+runtime.GOARCH)
}

func formatVersion(version string, info *debug.BuildInfo, platform string) string {
	var details []string
	goVersion := runtime.Version()
	if info != nil {
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if settings["vcs.modified"] == "true" {
				rev += "-dirty"
			}
			details = append(details, "commit "+rev)
		}
		if t := settings["vcs.time"]; t != "" {
			details = append(details, t)
		}
		goVersion = cmp.Or(info.GoVersion, goVersion)
	}
	details = append(details, goVersion, platform)
	return cmp.Or(version, "devel") + " (" + strings.Join(details, ", ") + ")"
}
