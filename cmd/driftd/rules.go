package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/catalogue"
)

func registerRules(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("rules", "Print the catalogue: rules (id, default severity, family, emitting function, doc), BRK grades and CHG changes.")
	asJSON := cmd.Flag("json", "Print the catalogue as JSON.").Bool()
	cmds[cmd.FullCommand()] = func(_ context.Context, stdout, _ io.Writer) error {
		if *asJSON {
			return writeJSON(stdout, catalogue.Catalogue())
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RULE\tSEVERITY\tFAMILY\tEMITTED BY\tDOC")
		for _, r := range catalogue.Rules {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Severity, r.Family, r.Emitter, r.Doc)
		}
		fmt.Fprintln(tw, "\nGRADE\tSEVERITY\tBREAKING\tDOC")
		for _, g := range catalogue.Grades {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", g.ID, g.Severity, g.Breaking, g.Doc)
		}
		fmt.Fprintln(tw, "\nCHANGE\tINPUT GRADE\tOUTPUT GRADE\tDOC")
		for _, c := range catalogue.Changes {
			in := c.Input
			if c.InputOpen != "" {
				in += " | " + c.InputOpen
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, in, c.Output, c.Doc)
		}
		return tw.Flush()
	}
}
