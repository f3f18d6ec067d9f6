package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/mcp/mcptest"
	"github.com/driftd/driftd/internal/probe"
)

// The demo's declared manifest and the drifted tool set its mock serves:
// cancel_order is gone, debug_dump appeared, search_orders gained a
// required argument, and nothing asks for credentials.
var (
	//go:embed demodata/declared.json
	demoDeclared []byte
	//go:embed demodata/served.json
	demoServed []byte
)

func registerDemo(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("demo", "Start a mock MCP server with deliberate drift, probe it, and keep it serving until Ctrl-C.")
	listen := cmd.Flag("mock.listen-address", "Where the mock MCP server listens.").Default("127.0.0.1:9821").String()
	once := cmd.Flag("once", "Probe once and exit instead of serving until interrupted.").Bool()
	cmds[cmd.FullCommand()] = func(ctx context.Context, stdout, stderr io.Writer) error {
		var served []json.RawMessage
		if err := json.Unmarshal(demoServed, &served); err != nil {
			return err
		}
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("mock server: %w", err)}
		}
		mux := http.NewServeMux()
		mux.Handle(mcptest.EndpointPath, mcptest.NewHandler(mcptest.Options{Tools: served, ServerName: "orders-demo", ServerVersion: "2.3.0"}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		url := "http://" + ln.Addr().String() + mcptest.EndpointPath

		dir, err := os.MkdirTemp("", "driftd-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "orders.json")
		if err := os.WriteFile(path, demoDeclared, 0o644); err != nil {
			return err
		}
		declared, err := manifest.Load(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "mock MCP server with drift: %s\ndeclared manifest: %s\n\n", url, path)
		rep := probe.Run(ctx, config.NewTarget("orders-demo", url), declared, probe.Options{Version: version})
		if err := probe.WriteText(stdout, rep); err != nil {
			return err
		}
		if *once {
			return nil
		}
		fmt.Fprintf(stdout, "\nThe mock keeps serving; try:\n  driftd check %s --base-url %s\n  driftd capture --base-url %s\nCtrl-C stops it.\n", path, url, url)
		<-ctx.Done()
		return nil
	}
}
