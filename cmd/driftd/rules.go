package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/catalogue"
)

func registerRules(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("rules", "Print the rule catalogue: id, default severity, family, doc.")
	asJSON := cmd.Flag("json", "Print the catalogue as JSON.").Bool()
	cmds[cmd.FullCommand()] = func(_ context.Context, stdout, _ io.Writer) error {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(catalogue.Rules)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RULE\tSEVERITY\tFAMILY\tDOC")
		for _, r := range catalogue.Rules {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Severity, r.Family, r.Doc)
		}
		return tw.Flush()
	}
}
