package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	promversion "github.com/prometheus/common/version"

	"github.com/driftd/driftd/internal/metrics"
)

// Set at build time: go build -ldflags "-X main.version=… -X main.revision=…"
// (the Makefile's LDFLAGS). Branch, build user and date are
// prometheus/common/version's own variables, set the way promu sets them:
// -X github.com/prometheus/common/version.Branch=….
var (
	version  = "0.1.0-dev"
	revision = "unknown"
)

// init hands the ldflags values to prometheus/common/version, so
// --version, `driftd version`, the startup log line and driftd_build_info
// all read one source. Without a stamped revision, the one Go recorded
// from the VCS (if any) is used.
func init() {
	promversion.Version = version
	if revision != "unknown" {
		promversion.Revision = revision
	}
}

// buildInfo is what driftd_build_info exposes.
func buildInfo() metrics.BuildInfo {
	return metrics.BuildInfo{Version: promversion.Version, Revision: promversion.GetRevision(), GoVersion: promversion.GoVersion}
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
	} {
		if l[1] != "" {
			fmt.Fprintf(&b, "  %-17s %s\n", l[0]+":", l[1])
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func registerVersion(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	app.Version(versionText())
	cmd := app.Command("version", "Print version, revision, branch, build user and date, Go version and platform (the same as --version).")
	cmds[cmd.FullCommand()] = func(_ context.Context, stdout, _ io.Writer) error {
		_, err := fmt.Fprintln(stdout, versionText())
		return err
	}
}
