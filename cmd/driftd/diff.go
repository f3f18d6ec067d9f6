package main

import (
	"context"
	"fmt"
	"io"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/probe"
)

func registerDiff(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("diff", "Compare two manifests through the same rules: OLD as declared, NEW as served.")
	oldPath := cmd.Arg("old", "The manifest consumers were built against.").Required().String()
	newPath := cmd.Arg("new", "The manifest to compare with it.").Required().String()
	target := cmd.Flag("target", "Target name used in fingerprints (to match a daemon target's ignores).").Default("diff").String()
	rf := addReportFlags(cmd)
	cmds[cmd.FullCommand()] = func(_ context.Context, stdout, _ io.Writer) error {
		policy, err := rf.parse()
		if err != nil {
			return err
		}
		old, err := manifest.Load(*oldPath)
		if err != nil {
			return usageErr("old manifest: %v", err)
		}
		updated, err := manifest.Load(*newPath)
		if err != nil {
			return usageErr("new manifest: %v", err)
		}
		rep := probe.Diff(*target, old, updated, probe.Options{Version: version, Policy: policy})
		return rf.finish(stdout, rep, func() error {
			fmt.Fprintf(stdout, "diff %s → %s: %d tools → %d tools\n", old.Path, updated.Path, len(old.Tools), len(updated.Tools))
			return writeFindingsText(stdout, rep, colour(stdout))
		})
	}
}
