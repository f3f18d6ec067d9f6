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
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/sanitize"
	"github.com/driftd/driftd/internal/web"
)

// registerBaseline adds `driftd baseline accept NAME`: the command-line
// way to POST /api/v1/targets/{name}/baseline to a running daemon (which
// needs --web.enable-lifecycle). An accept is bound to the digest of the
// surface that was reviewed: without --digest the command only shows the
// target's current digests and accepts nothing, so nobody accepts a
// surface they have not seen (docs/security.md#baseline-approval).
func registerBaseline(app *kingpin.Application, cmds map[string]func(context.Context, io.Writer, io.Writer) error) {
	cmd := app.Command("baseline", "Work with the baselines of baseline-mode targets (baseline: first_seen).")
	accept := cmd.Command("accept", "Re-baseline a target after a reviewed change, to the served surface with --digest. Without --digest, show the digests and accept nothing. Needs a daemon started with --web.enable-lifecycle.")
	name := accept.Arg("name", "The target.").Required().String()
	daemonURL := accept.Flag("web.url", "The running daemon's base URL (with --web.route-prefix if it has one; user:password@ for basic auth).").Default("http://127.0.0.1:9820").String()
	digest := accept.Flag("digest", "The surface digest reviewed (sha256:…, as the target page and the API show it). The accept is refused unless the target serves it.").String()
	by := accept.Flag("by", "Who accepts, as a claim recorded apart from the identity the daemon authenticated (default: $USER).").Default(os.Getenv("USER")).String()
	reason := accept.Flag("reason", "Why, recorded in the history (a review, a ticket).").String()
	timeout := accept.Flag("timeout", "How long to wait for the daemon to answer.").Default("10s").Duration()
	cmds[accept.FullCommand()] = func(ctx context.Context, stdout, _ io.Writer) error {
		u, err := url.Parse(*daemonURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("--web.url: %q is not an http(s) URL", *daemonURL)
		}
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		c := &daemonClient{base: u, name: *name}
		if *digest == "" {
			return c.showDigests(ctx, stdout)
		}
		body, _ := json.Marshal(map[string]string{"digest": *digest, "by": *by, "reason": *reason})
		code, msg, err := c.do(ctx, http.MethodPost, "/baseline", body)
		if err != nil {
			return err
		}
		// The API's envelope (docs/daemon.md#api); an answer that is not
		// one (the lifecycle flag's refusal is text) is shown as it is.
		text := sanitize.Text(strings.TrimSpace(string(msg)))
		var answer web.Response[web.AcceptAnswer]
		if json.Unmarshal(msg, &answer) == nil && answer.Status != "" {
			text = sanitize.Text(answer.Data.Message + answer.Error)
		}
		switch {
		case code == http.StatusAccepted:
			fmt.Fprintf(stdout, "%s: %s\n", *name, text)
			return nil
		case code == http.StatusNotFound || code == http.StatusConflict || code == http.StatusForbidden:
			return &exitError{exitUsage, fmt.Errorf("%s: HTTP %d: %s", *name, code, text)}
		}
		return &exitError{exitNoProbe, fmt.Errorf("%s: HTTP %d: %s", *name, code, text)}
	}
}

// daemonClient asks one running daemon about one target.
type daemonClient struct {
	base *url.URL
	name string
}

// do sends a request to the target's API path ("" for the list of
// targets) and returns the status and the first 64 KiB of the answer (a
// list of targets is read to 16 MiB).
func (c *daemonClient) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	endpoint := strings.TrimSuffix(c.base.String(), "/") + "/api/v1/targets"
	limit := int64(16 << 20)
	if path != "" {
		endpoint, limit = endpoint+"/"+url.PathEscape(c.name)+path, 64<<10
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, nil, usageErr("%v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(web.RequestHeader, "1") // every state-changing request needs it (docs/security.md)
	}
	if pw, ok := c.base.User.Password(); ok {
		req.SetBasicAuth(c.base.User.Username(), pw)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, &exitError{exitNoProbe, fmt.Errorf("the daemon at %s did not answer: %v", c.base.Redacted(), err)}
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	return resp.StatusCode, msg, nil
}

// showDigests prints the target's served and baseline digests and how to
// accept, and exits with the usage code: nothing was accepted.
func (c *daemonClient) showDigests(ctx context.Context, stdout io.Writer) error {
	code, msg, err := c.do(ctx, http.MethodGet, "", nil)
	if err != nil {
		return err
	}
	// The list has every target's status, a restored one's too (the
	// report of /api/v1/targets/NAME waits for a run since start).
	var answer web.Response[[]web.TargetStatus]
	_ = json.Unmarshal(msg, &answer)
	rows := answer.Data
	i := slices.IndexFunc(rows, func(r web.TargetStatus) bool { return r.Name == c.name })
	if code != http.StatusOK || i < 0 || rows[i].Baseline == nil || rows[i].Baseline.ServedDigest == "" {
		return &exitError{exitUsage, fmt.Errorf("%s: no served surface digest to show (HTTP %d): is it a baseline-mode target with a successful run?", c.name, code)}
	}
	b := rows[i].Baseline
	fmt.Fprintf(stdout, "%s: drift %s\n  served surface  %s\n", c.name, sanitize.Text(rows[i].Drift), sanitize.Text(b.ServedDigest))
	if b.Digest != "" {
		fmt.Fprintf(stdout, "  baseline        %s (%s)\n", sanitize.Text(b.Digest), sanitize.Text(b.Origin))
	}
	if p := b.PendingAccept; p != nil {
		fmt.Fprintf(stdout, "  pending accept  %s (expires %s)\n", sanitize.Text(p.Digest), p.Expires.UTC().Format(time.RFC3339))
	}
	if b.NeedsReview != "" {
		fmt.Fprintf(stdout, "  needs review    %s\n", sanitize.Text(b.NeedsReview))
	}
	fmt.Fprintf(stdout, "Review the drift (the target page, GET /api/v1/targets/%s), then accept the surface reviewed with:\n  driftd baseline accept %s --digest %s\n",
		c.name, c.name, sanitize.Text(b.ServedDigest))
	return &exitError{exitUsage, fmt.Errorf("%s: nothing accepted without --digest", c.name)}
}
