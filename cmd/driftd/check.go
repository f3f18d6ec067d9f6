package main

import (
	"github.com/driftd/driftd/internal/atomicfile"

	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/format"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/tracing"
)

func registerCheck(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("check", "Probe one MCP server once and compare it with a declared manifest.")
	manifestPath := cmd.Arg("manifest", "The declared manifest (JSON or YAML).").Required().String()
	tf := addTargetFlags(cmd)
	tf.addInvokeFlags(cmd)
	rf := addReportFlags(cmd)
	otlp := cmd.Flag("otlp-endpoint", "Send traces over OTLP/HTTP to this collector, e.g. http://localhost:4318; headers, TLS, compression and timeout come from OTEL_EXPORTER_OTLP_* (docs/tracing.md).").PlaceHolder("URL").String()
	shadow := cmd.Flag("shadow-tool", "A tool name of another server the same agents use: MCP-SEC-SHADOWING also reports texts that try to change how it is used (repeatable).").PlaceHolder("NAME").Strings()
	cmds[cmd.FullCommand()] = func(ctx context.Context, stdout, stderr io.Writer) error {
		limitOneShotMemory()
		policy, err := rf.parse()
		if err != nil {
			return err
		}
		t, err := tf.target()
		if err != nil {
			return err
		}
		t.ShadowTools = *shadow
		t.Manifest = *manifestPath
		// The manifest is read while the run connects, unless calls are
		// planned: their gates read it before anything is sent. A
		// manifest that cannot be read is a usage error either way, even
		// when the discovery's requests went out meanwhile.
		var file format.File
		caches := probe.NewCaches(0) // the process's one set of caches
		prep, wait := probe.PrepareBeside(t, caches, func() (*manifest.Manifest, error) {
			var m *manifest.Manifest
			var err error
			file, m, err = loadManifest(*manifestPath)
			return m, err
		})
		if prep.Pending == nil {
			if _, err := wait(ctx); err != nil {
				return usageErr("manifest: %v", err)
			}
			if prep.Refused != nil {
				// Every gate is checked before a single request is sent.
				return usageErr("%v", prep.Refused)
			}
		}
		opts := probe.Options{Version: version, Policy: policy, Caches: caches}
		if err := tf.sessionLogin(ctx, t, &opts, stderr); err != nil {
			return err
		}
		if *otlp != "" {
			var once sync.Once
			tc := config.DefaultTracingConfig()
			tc.Endpoint = *otlp
			tp, err := tracing.New(tc, version, func(err error) {
				once.Do(func() { fmt.Fprintf(stderr, "driftd check: warning: trace export failed: %v\n", err) })
			})
			if err != nil {
				return usageErr("--otlp-endpoint: %v", err)
			}
			defer func() {
				flush, cancel := context.WithTimeout(context.Background(), flushTimeout)
				defer cancel()
				if err := tp.Shutdown(flush); err != nil {
					once.Do(func() { fmt.Fprintf(stderr, "driftd check: warning: %v\n", err) })
				}
			}()
			opts.Tracer = tp.Tracer()
		}
		rep := probe.Run(ctx, prep, opts)
		declared, err := wait(context.Background())
		if err != nil {
			return usageErr("manifest: %v", err)
		}
		run := rf.run("check", rep, declared, file)
		err = rf.finish(stdout, run, func(w io.Writer, paint bool) error { return writeCheckText(w, rep, paint) })
		if hint := checkHint(rep, rf.threshold, *manifestPath); hint != "" && rf.format == "text" {
			// On stderr: stdout's last line stays the outcome, and the
			// hint is for the person at the terminal, not for a file.
			if colour(stderr) {
				hint = style(ansiDim, hint)
			}
			fmt.Fprintln(stderr, hint)
		}
		return err
	}
}

// flushTimeout bounds the trace flush at exit: a down collector delays
// check by at most this.
const flushTimeout = 2 * time.Second

func registerCapture(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("capture", "Write the served surface as a canonical manifest: tools and every list the server advertises (prompts, resources, resource templates).")
	tf := addTargetFlags(cmd)
	out := cmd.Flag("output", "Write the manifest to FILE instead of stdout.").Short('o').PlaceHolder("FILE").String()
	only := cmd.Flag("only", "Write only these lists, comma-separated: tools, prompts, resources, resourceTemplates.").PlaceHolder("LISTS").String()
	cmds[cmd.FullCommand()] = func(ctx context.Context, stdout, stderr io.Writer) error {
		limitOneShotMemory()
		kinds, err := parseOnly(*only)
		if err != nil {
			return err
		}
		t, err := tf.target()
		if err != nil {
			return err
		}
		opts := probe.Options{Version: version, Caches: probe.NewCaches(0)}
		if err := tf.sessionLogin(ctx, t, &opts, stderr); err != nil {
			return err
		}
		rep := probe.Run(ctx, probe.Prepare(t, nil), opts)
		if !rep.Success {
			return &exitError{exitNoProbe, fmt.Errorf("probe failed (%s): %s", rep.FailureReason, rep.FailureMessage)}
		}
		m, counts, warnings, err := probe.ServedManifest(rep, kinds, *only != "")
		for _, w := range warnings {
			fmt.Fprintf(stderr, "driftd capture: warning: %s\n", w)
		}
		if err != nil {
			if strings.Contains(err.Error(), "page cap") {
				err = fmt.Errorf("%v; raise --max-list-pages", err)
			}
			return &exitError{exitNoProbe, err}
		}
		b, err := m.Canonical()
		if err != nil {
			return err
		}
		if *out == "" {
			_, err = stdout.Write(b)
			return err
		}
		if err := atomicfile.WriteReport(*out, b); err != nil {
			return &exitError{exitUsage, err}
		}
		fmt.Fprintf(stderr, "driftd capture: wrote %s (%s era, %s) to %s\n", strings.Join(counts, ", "), rep.Era, revisionText(rep), *out)
		return nil
	}
}

// parseOnly reads --only: the kinds to write, all when empty.
func parseOnly(s string) ([]mcp.Kind, error) {
	if s == "" {
		return mcp.Kinds, nil
	}
	var kinds []mcp.Kind
	for _, part := range strings.Split(s, ",") {
		k, ok := mcp.ParseKind(strings.TrimSpace(part))
		if !ok {
			return nil, usageErr("--only: unknown list %q (want tools, prompts, resources or resourceTemplates)", part)
		}
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds, nil
}

func revisionText(rep *probe.Report) string {
	if rep.ProtocolRevision.Value != nil {
		return "revision " + *rep.ProtocolRevision.Value
	}
	return "revision not claimed"
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
