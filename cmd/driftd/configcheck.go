package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/daemon"
)

func registerConfigCheck(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("config", "Work with configuration files.")
	check := cmd.Command("check", "Validate a configuration file, load every manifest, and print the effective configuration with secrets redacted.")
	flagFile := addConfigFileFlag(check, "The configuration file (or give it as the argument).")
	discover := check.Flag("discover", "Also read every discovery source (target_files, kubernetes_sd, registry_sd) once and print the targets found, with their origin, and those rejected.").Bool()
	argFile := check.Arg("file", "The configuration file, as --config.file does.").String()
	cmds[check.FullCommand()] = func(_ context.Context, stdout, stderr io.Writer) error {
		file := *flagFile
		switch {
		case file != "" && *argFile != "":
			return usageErr("give the configuration file once: --config.file or an argument, not both")
		case file == "":
			file = *argFile
		}
		if file == "" {
			return usageErr("required flag --config.file not provided, try --help")
		}
		out, warnings, err := daemon.CheckConfig(file)
		for _, w := range warnings {
			fmt.Fprintf(stderr, "driftd config check: warning: %s\n", w)
		}
		if err != nil {
			// The problems alone, one a line, each starting FILE:LINE: as
			// editors and CI annotations read them.
			fmt.Fprintln(stderr, err)
			return &exitError{exitUsage, errors.New("")}
		}
		if _, err := stdout.Write(out); err != nil || !*discover {
			return err
		}
		found, err := daemon.DiscoverOnce(file, daemon.Options{Build: buildInfo()})
		if found != nil {
			if _, werr := fmt.Fprintf(stdout, "---\n%s", found); werr != nil {
				return werr
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return &exitError{exitUsage, errors.New("")}
		}
		return nil
	}
}
