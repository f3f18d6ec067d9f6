// Command driftd keeps MCP servers honest: it probes them, compares what
// they serve with what their consumers were built against, and reports.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kingpin/v2"
)

// Exit codes, the same for every subcommand.
const (
	exitOK       = 0
	exitFindings = 1
	exitUsage    = 2
	exitNoProbe  = 3
)

// exitError carries an exit code out of a subcommand.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageErr(format string, a ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, a...)}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args, runs the chosen subcommand and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := kingpin.New("driftd", "Keeps MCP servers honest: probes them and reports drift from their declared tool manifests.")
	app.UsageWriter(stderr)
	app.ErrorWriter(stderr)
	// --help and --version print and ask to terminate; remember it instead of
	// exiting the process (tests call run), and stop after parsing.
	terminated := false
	app.Terminate(func(int) { terminated = true })
	app.HelpFlag.Short('h')
	cmds := map[string]func(context.Context, io.Writer, io.Writer) error{}
	registerCheck(app, cmds)
	registerCapture(app, cmds)
	registerDiff(app, cmds)
	registerRules(app, cmds)
	registerRun(app, cmds)
	registerConfigCheck(app, cmds)
	registerDemo(app, cmds)
	registerVersion(app, cmds)

	chosen, err := app.Parse(args)
	switch {
	case len(args) == 0:
		err = fmt.Errorf("command not specified")
	case terminated:
		return exitOK // help was asked for and printed
	}
	if err != nil {
		fmt.Fprintf(stderr, "driftd: %v\n", err)
		return exitUsage
	}
	fn, ok := cmds[chosen]
	if !ok { // --help was handled by kingpin
		return exitOK
	}
	err = fn(ctx, stdout, stderr)
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(stderr, "driftd %s: %v\n", chosen, ee.err)
		}
		return ee.code
	default:
		fmt.Fprintf(stderr, "driftd %s: %v\n", chosen, err)
		return exitUsage
	}
}
