package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	driftdfiles "github.com/driftd/driftd"
	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// demoAddress is the mock's address written in config.example.yaml.
const demoAddress = "127.0.0.1:9821"

// demoWebAddress is demo's --web.listen-address: loopback, like the mock,
// because a demo need not be reachable from the network (run keeps :9820).
const demoWebAddress = "127.0.0.1:9820"

func registerDemo(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("demo", "Run the daemon against a mock MCP server with deliberate drift (config.example.yaml); Ctrl-C stops both.")
	mockAddr := cmd.Flag("mock.listen-address", "Where the mock MCP server listens.").Default(demoAddress).String()
	df := addDaemonFlags(cmd, demoWebAddress, "text")
	cmds[cmd.FullCommand()] = func(ctx context.Context, stdout, stderr io.Writer) error {
		dir, err := os.MkdirTemp("", "driftd-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		ln, err := net.Listen("tcp", *mockAddr)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("mock server: %w", err)}
		}
		mock, err := demoMock(ln.Addr().String())
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: mock, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		configFile, err := unpackDemo(dir, ln.Addr().String())
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "mock MCP server with drift: http://%s/mcp (and /auth/mcp, bearer token required)\nconfiguration: %s\n", browsable(ln.Addr().String()), configFile)
		return serveDaemon(ctx, df, stderr, daemon.Options{ConfigFile: configFile, WatchConfig: true, OnStart: func(addrs []string) {
			for _, a := range addrs {
				a = browsable(a)
				fmt.Fprintf(stdout, "driftd: status page http://%s/  metrics http://%s/metrics\n", a, a)
			}
			fmt.Fprintln(stdout, "findings appear within seconds; Ctrl-C stops both.")
		}})
	}
}

// browsable turns a listener's address into one a browser on this machine
// opens: a wildcard host ([::], 0.0.0.0) becomes 127.0.0.1.
func browsable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// demoMock serves the drifted surface (tools, prompts, resources and
// resource templates) anonymously on /mcp and behind the example's bearer
// token on /auth/mcp.
func demoMock(addr string) (http.Handler, error) {
	b, err := fs.ReadFile(driftdfiles.Demo, "examples/demo-served.json")
	if err != nil {
		return nil, err
	}
	var served struct {
		Tools             []json.RawMessage `json:"tools"`
		Prompts           []json.RawMessage `json:"prompts"`
		Resources         []json.RawMessage `json:"resources"`
		ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	}
	if err := json.Unmarshal(b, &served); err != nil {
		return nil, err
	}
	token, err := fs.ReadFile(driftdfiles.Demo, "examples/secrets/orders-token")
	if err != nil {
		return nil, err
	}
	opts := mcptest.Options{Tools: served.Tools, Prompts: served.Prompts, Resources: served.Resources,
		ResourceTemplates: served.ResourceTemplates, ServerName: "orders-demo", ServerVersion: "2.3.0"}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcptest.NewHandler(opts))
	opts.BearerToken = strings.TrimSpace(string(token))
	// The challenge points at the mock's own protected resource metadata
	// (RFC 9728), which it serves: driftd records the URL, never fetches
	// it, but a person following it finds the document.
	metadata := "/.well-known/oauth-protected-resource/auth/mcp"
	opts.Challenge = `Bearer resource_metadata="http://` + addr + metadata + `", scope="orders:read"`
	mux.Handle("/auth/mcp", mcptest.NewHandler(opts))
	mux.HandleFunc("GET "+metadata, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": "http://" + addr + "/auth/mcp",
			"scopes_supported": []string{"orders:read"}, "bearer_methods_supported": []string{"header"}})
	})
	return mux, nil
}

// unpackDemo writes config.example.yaml and its files into dir, pointing
// the targets at the mock's actual address.
func unpackDemo(dir, mockAddr string) (string, error) {
	err := fs.WalkDir(driftdfiles.Demo, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(driftdfiles.Demo, path)
		if err != nil {
			return err
		}
		if path == "config.example.yaml" {
			b = []byte(strings.ReplaceAll(string(b), demoAddress, mockAddr))
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	return filepath.Join(dir, "config.example.yaml"), err
}
