package main

import (
	"context"
	"errors"
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
		// Both are read before either is reported: two bad files, one pass.
		old, oldErr := manifest.Load(*oldPath)
		updated, newErr := manifest.Load(*newPath)
		var errs []error
		if oldErr != nil {
			errs = append(errs, fmt.Errorf("old manifest: %w", oldErr))
		}
		if newErr != nil {
			errs = append(errs, fmt.Errorf("new manifest: %w", newErr))
		}
		if err := errors.Join(errs...); err != nil {
			return usageErr("%v", err)
		}
		rep := probe.Diff(*target, old, updated, probe.Options{Version: version, Policy: policy})
		return rf.finish(stdout, rep, func() error {
			fmt.Fprintf(stdout, "diff %s → %s: %d tools → %d tools\n", old.Path, updated.Path, len(old.Tools), len(updated.Tools))
			return writeFindingsText(stdout, rep, colour(stdout))
		})
	}
}
