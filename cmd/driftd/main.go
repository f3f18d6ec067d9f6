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
	"slices"
	"strings"
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

// command is a top-level command: its name, and what adds it (and its
// subcommands) to the application.
type command struct {
	name     string
	register func(*kingpin.Application, map[string]func(context.Context, io.Writer, io.Writer) error)
}

// commands, in the order --help lists them.
var commands = []command{
	{"check", registerCheck},
	{"capture", registerCapture},
	{"diff", registerDiff},
	{"rules", registerRules},
	{"run", registerRun},
	{"config", registerConfigCheck},
	{"baseline", registerBaseline},
	{"auth", registerAuth},
	{"demo", registerDemo},
	{"version", registerVersion},
}

// run parses args, runs the chosen subcommand and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := kingpin.New("driftd", "Keeps MCP servers honest: probes them and reports drift from their declared tool manifests.")
	// Asked-for help and --version go to stdout (driftd --help | less);
	// usage errors go to stderr with exit 2, and so does the usage printed
	// when no command was given.
	app.UsageWriter(stdout)
	if len(args) == 0 {
		app.UsageWriter(stderr)
	}
	app.ErrorWriter(stderr)
	app.HelpFlag.Short('h')
	cmds := map[string]func(context.Context, io.Writer, io.Writer) error{}
	named := len(args) > 0 && slices.ContainsFunc(commands, func(c command) bool { return c.name == args[0] })
	for _, c := range commands {
		// A command line that starts with a command's name builds that
		// command only (and version, which --version also answers): every
		// command's flags are most of a millisecond of a check's start.
		// Anything else (--help, a typo kingpin suggests a command for)
		// builds them all.
		if !named || c.name == args[0] || c.name == "version" {
			c.register(app, cmds)
		}
	}

	chosen, terminated, err := parse(app, args)
	switch {
	case len(args) == 0:
		err = fmt.Errorf("command not specified")
	case terminated:
		return exitOK // help or the version was asked for and printed
	}
	if err != nil {
		fmt.Fprintf(stderr, "driftd: %v, try --help\n", err)
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
			printErr(stderr, chosen, ee.err)
		}
		return ee.code
	default:
		printErr(stderr, chosen, err)
		return exitUsage
	}
}

// printErr prints a command's error. Several problems (a configuration's,
// each FILE:LINE: …) go one a line under the command's name, so that every
// line starts with its position, as editors and CI annotations read them.
func printErr(w io.Writer, cmd string, err error) {
	if msg := err.Error(); strings.Contains(msg, "\n") {
		fmt.Fprintf(w, "driftd %s:\n%s\n", cmd, msg)
		return
	}
	fmt.Fprintf(w, "driftd %s: %v\n", cmd, err)
}

// terminate is what kingpin's Terminate hook panics with.
type terminate struct{}

// parse runs app.Parse. --help and --version print, then call kingpin's
// Terminate, which would exit the process; here it unwinds back to parse
// instead (tests call run), so nothing after the printing runs.
func parse(app *kingpin.Application, args []string) (chosen string, terminated bool, err error) {
	app.Terminate(func(int) { panic(terminate{}) })
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(terminate); !ok {
				panic(r)
			}
			terminated = true
		}
	}()
	chosen, err = app.Parse(args)
	return chosen, false, err
}
