package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	promversion "github.com/prometheus/common/version"

	"github.com/driftd/driftd/internal/metrics"
)

// The version is stamped the way promu stamps Prometheus' binaries, into
// prometheus/common/version's own variables (the Makefile's LDFLAGS):
//
//	-X github.com/prometheus/common/version.Version=0.2.0
//	-X github.com/prometheus/common/version.Revision=…  .Branch=…
//	-X github.com/prometheus/common/version.BuildUser=…  .BuildDate=…
//
// so --version, `driftd version`, the startup log line and
// driftd_build_info all read one source. version is that source's value
// for the commands that name themselves (User-Agent, reports).
var version string

func init() {
	if promversion.Version == "" {
		promversion.Version = unstampedVersion()
	}
	version = promversion.Version
}

// unstampedVersion is the version of a binary built without the
// Makefile: the module version Go recorded (`go install
// github.com/driftd/driftd/cmd/driftd@v0.2.0` gives 0.2.0; a build in a
// checkout, a pseudo-version from its VCS tags), else "devel".
func unstampedVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return "devel"
}

// buildInfo is what driftd_build_info exposes and the daemon identifies
// itself as (User-Agent, traces).
func buildInfo() metrics.BuildInfo {
	return metrics.BuildInfo{
		Version:   promversion.Version,
		Revision:  promversion.GetRevision(),
		Branch:    promversion.Branch,
		GoVersion: promversion.GoVersion,
		GoOS:      promversion.GoOS,
		GoArch:    promversion.GoArch,
		Tags:      promversion.GetTags(),
	}
}

// versionText is version.Print's layout without the lines a plain
// `go build` leaves empty.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "driftd, version %s (", promversion.Version)
	if promversion.Branch != "" {
		fmt.Fprintf(&b, "branch: %s, ", promversion.Branch)
	}
	fmt.Fprintf(&b, "revision: %s)\n", promversion.GetRevision())
	for _, l := range [][2]string{
		{"build user", promversion.BuildUser},
		{"build date", promversion.BuildDate},
		{"go version", promversion.GoVersion},
		{"platform", promversion.GoOS + "/" + promversion.GoArch},
		{"tags", promversion.GetTags()},
	} {
		if l[1] != "" {
			fmt.Fprintf(&b, "  %-17s %s\n", l[0]+":", l[1])
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func registerVersion(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	app.Version(versionText())
	cmd := app.Command("version", "Print version, revision, branch, build user and date, Go version, platform and build tags (the same as --version).")
	cmds[cmd.FullCommand()] = func(_ context.Context, stdout, _ io.Writer) error {
		_, err := fmt.Fprintln(stdout, versionText())
		return err
	}
}
