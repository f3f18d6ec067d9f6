package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
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
		oldFile, old, oldErr := loadManifest(*oldPath)
		newFile, updated, newErr := loadManifest(*newPath)
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
		rep := probe.Diff(*target, old, updated, probe.Options{Version: version, Policy: policy, Caches: probe.NewCaches(0)})
		// Findings are located in NEW, the file a pull request changes,
		// and in OLD for what NEW no longer declares.
		run := rf.run("diff", rep, old, newFile, oldFile)
		return rf.finish(stdout, run, func(w io.Writer, paint bool) error {
			fmt.Fprintf(w, "diff %s → %s: %s\n", old.Path, updated.Path, listCounts(old, updated))
			return writeFindingsText(w, rep, paint)
		})
	}
}

// listCounts names the size of each list on both sides, "3 tools → 2
// tools, 2 prompts → 2 prompts"; a list only one side declares is shown
// as "-" there and is not compared.
func listCounts(old, updated *manifest.Manifest) string {
	var parts []string
	for _, k := range mcp.Kinds {
		if !old.Declares(k) && !updated.Declares(k) {
			continue
		}
		n := func(m *manifest.Manifest) string {
			switch {
			case !m.Declares(k):
				return "-"
			case k == mcp.KindTool:
				return fmt.Sprint(len(m.Tools))
			}
			return fmt.Sprint(len(m.Items[k]))
		}
		parts = append(parts, fmt.Sprintf("%s %s → %s %s", n(old), k.Key(), n(updated), k.Key()))
	}
	return strings.Join(parts, ", ")
}
