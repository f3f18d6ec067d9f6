package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/sanitize"
	"github.com/driftd/driftd/internal/web"
)

// registerBaseline adds `driftd baseline accept NAME`: the command-line
// way to POST /api/v1/targets/{name}/baseline to a running daemon (which
// needs --web.enable-lifecycle), recording who accepted and why.
func registerBaseline(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("baseline", "Work with the baselines of baseline-mode targets (baseline: first_seen).")
	accept := cmd.Command("accept", "Re-baseline a target after a reviewed change: its next run records the served surface as the baseline. Needs a daemon started with --web.enable-lifecycle.")
	name := accept.Arg("name", "The target.").Required().String()
	daemonURL := accept.Flag("web.url", "The running daemon's base URL (with --web.route-prefix if it has one).").Default("http://127.0.0.1:9820").String()
	by := accept.Flag("by", "Who accepts, recorded in the history (default: $USER).").Default(os.Getenv("USER")).String()
	reason := accept.Flag("reason", "Why, recorded in the history (a review, a ticket).").String()
	timeout := accept.Flag("timeout", "How long to wait for the daemon to answer.").Default("10s").Duration()
	cmds[accept.FullCommand()] = func(ctx context.Context, stdout, _ io.Writer) error {
		u, err := url.Parse(*daemonURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("--web.url: %q is not an http(s) URL", *daemonURL)
		}
		body, _ := json.Marshal(map[string]string{"by": *by, "reason": *reason})
		endpoint := strings.TrimSuffix(u.String(), "/") + "/api/v1/targets/" + url.PathEscape(*name) + "/baseline"
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
		if err != nil {
			return usageErr("%v", err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(web.RequestHeader, "1") // every state-changing request needs it (docs/security.md)
		if pw, ok := u.User.Password(); ok {
			req.SetBasicAuth(u.User.Username(), pw)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return &exitError{exitNoProbe, fmt.Errorf("the daemon at %s did not answer: %v", u.Redacted(), err)}
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		text := sanitize.Text(strings.TrimSpace(string(msg)))
		var answer struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		if json.Unmarshal(msg, &answer) == nil {
			text = sanitize.Text(answer.Status + answer.Error)
		}
		switch {
		case resp.StatusCode == http.StatusAccepted:
			fmt.Fprintf(stdout, "%s: %s\n", *name, text)
			return nil
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusConflict || resp.StatusCode == http.StatusForbidden:
			return &exitError{exitUsage, fmt.Errorf("%s: HTTP %d: %s", *name, resp.StatusCode, text)}
		}
		return &exitError{exitNoProbe, fmt.Errorf("%s: HTTP %d: %s", *name, resp.StatusCode, text)}
	}
}
