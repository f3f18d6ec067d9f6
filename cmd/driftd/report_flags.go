package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/format"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/probe"
)

// reportFlags are the flags of the commands that print a report and gate
// on it: check and diff.
type reportFlags struct {
	asJSON    *bool
	formatArg *string
	output    *string
	failOn    *string
	policy    *policyFlags
	threshold catalogue.Severity
	// format is the chosen format, once parse has run.
	format string
}

func addReportFlags(cmd *kingpin.CmdClause) *reportFlags {
	return &reportFlags{
		asJSON:    cmd.Flag("json", "Print the report artifact as JSON (the same as --format json).").Bool(),
		formatArg: cmd.Flag("format", "Output format: "+strings.Join(format.Names, ", ")+" (docs/ci.md); default text.").PlaceHolder("FORMAT").String(),
		output:    cmd.Flag("output", "Write the output to FILE (replaced atomically) instead of stdout.").Short('o').PlaceHolder("FILE").String(),
		failOn:    cmd.Flag("fail-on", "Exit 1 when a finding is at or above this severity (ERROR, WARN, INFO).").Default("ERROR").String(),
		policy:    addPolicyFlags(cmd),
	}
}

// parse checks --format, --json and --fail-on and builds the policy from
// --ignore-file and --severity.
func (f *reportFlags) parse() (*catalogue.Policy, error) {
	f.format = strings.ToLower(*f.formatArg)
	switch {
	case f.format == "" && *f.asJSON:
		f.format = "json"
	case f.format == "":
		f.format = "text"
	case !slices.Contains(format.Names, f.format):
		return nil, usageErr("--format %q: want %s", *f.formatArg, strings.Join(format.Names, ", "))
	case *f.asJSON && f.format != "json":
		return nil, usageErr("--json is --format json; it cannot go with --format %s", f.format)
	}
	threshold, ok := catalogue.ParseSeverity(*f.failOn)
	if !ok || threshold == catalogue.Off {
		return nil, usageErr("--fail-on %q: want ERROR, WARN or INFO", *f.failOn)
	}
	f.threshold = threshold
	return f.policy.policy()
}

// run is what the format renderers read: the report, the manifest that
// was declared, and the files its findings are located in.
func (f *reportFlags) run(command string, rep *probe.Report, declared *manifest.Manifest, files ...format.File) *format.Run {
	wd, _ := os.Getwd()
	return &format.Run{
		Report: rep, Command: command, Declared: format.DeclaredOf(declared), Files: files,
		FailOn: f.threshold, Version: version, WorkDir: wd,
	}
}

// finish prints run in the chosen format (text through text, coloured
// only on a terminal), to stdout or --output, and maps the report to the
// exit codes of DESIGN §3.
func (f *reportFlags) finish(stdout io.Writer, run *format.Run, text func(io.Writer, bool) error) error {
	var buf bytes.Buffer
	w, paint := io.Writer(&buf), false
	if *f.output == "" {
		w, paint = stdout, colour(stdout)
	}
	var err error
	switch f.format {
	case "json":
		err = writeJSON(w, run.Report)
	case "sarif":
		err = format.SARIF(w, run)
	case "junit":
		err = format.JUnit(w, run)
	case "markdown":
		err = format.Markdown(w, run)
	default:
		err = text(w, paint)
	}
	if err == nil && *f.output != "" {
		if werr := atomicfile.WriteReport(*f.output, buf.Bytes()); werr != nil {
			return &exitError{exitUsage, werr}
		}
	}
	switch {
	case err != nil:
		return err
	case !run.Report.Success:
		return &exitError{exitNoProbe, errors.New("")}
	case run.Report.MaxSeverity() >= f.threshold.Rank():
		return &exitError{exitFindings, errors.New("")}
	}
	return nil
}

// loadManifest reads a manifest file once, for the comparison and for
// locating findings in it.
func loadManifest(path string) (format.File, *manifest.Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return format.File{}, nil, err
	}
	m, err := manifest.FromBytes(path, b)
	return format.File{Path: path, Bytes: b}, m, err
}
