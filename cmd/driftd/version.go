package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/alecthomas/kingpin/v2"
)

// Set at build time: go build -ldflags "-X main.version=… -X main.revision=…".
var (
	version  = "0.1.0-dev"
	revision = "unknown"
)

func registerVersion(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("version", "Print version, revision and Go version.")
	cmds[cmd.FullCommand()] = func(_ context.Context, stdout, _ io.Writer) error {
		_, err := fmt.Fprintf(stdout, "driftd, version %s (revision %s, %s)\n", version, revision, runtime.Version())
		return err
	}
}
