package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/mcp"
	"github.com/driftd/driftd/internal/probe"
	"github.com/driftd/driftd/internal/sanitize"
)

// The registry API v0.1 (frozen; the official registry, subregistries and
// gateways serve it): GET /v0.1/servers?cursor=&limit=&version=latest&updated_since=
// answers {"servers": [{"server": server.json, "_meta": {...}}],
// "metadata": {"nextCursor": "...", "count": N}}.
const (
	registryPath = "/v0.1/servers"
	registryPage = 100
	officialMeta = "io.modelcontextprotocol.registry/official"
	// fullEvery: every so many refreshes is a full listing, not only what
	// changed since the last, so that a server removed without a
	// "deleted" status goes too.
	fullEvery = 12
	// sinceSkew covers clocks that disagree and updates committed while
	// the last refresh was listing.
	sinceSkew = time.Minute
	// streamableHTTP is the one remote type driftd probes.
	streamableHTTP = "streamable-http"
	// maxCursor, maxName and maxURL bound what one entry of a listing may
	// make driftd keep: a cursor is sent back, names and URLs are held per
	// target. The registry's own schema caps a name at 200 characters.
	maxCursor = 1024
	maxName   = 256
	maxURL    = 2048
)

type registryList struct {
	Servers []struct {
		Server struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			Remotes []struct {
				Type    string `json:"type"`
				URL     string `json:"url"`
				Headers []struct {
					Name       string `json:"name"`
					IsRequired bool   `json:"isRequired"`
				} `json:"headers"`
			} `json:"remotes"`
		} `json:"server"`
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor"`
		Count      int    `json:"count"`
	} `json:"metadata"`
}

type officialStatus struct {
	Status   string `json:"status"`
	IsLatest *bool  `json:"isLatest"`
}

// Registry is a registry_sd: block: the streamable-http remotes of the
// servers an MCP registry lists, refreshed incrementally with
// updated_since.
type Registry struct {
	cfg    config.RegistrySD
	client *http.Client

	mu        sync.Mutex
	servers   map[string][]remote // server name → its streamable-http remotes
	skipped   int                 // remotes of other types, or with a bad URL
	capped    bool                // the last listing was cut at max_targets
	since     time.Time           // start of the last successful refresh
	refreshes int
	targets   []Target
}

// remote is one streamable-http remote of a server.
type remote struct {
	url string
	// required are the headers the registry says the remote requires.
	required []string
}

// NewRegistry returns the source for cfg; version goes in the User-Agent.
func NewRegistry(cfg config.RegistrySD, version string) (*Registry, error) {
	c, err := probe.NewHTTPClient(cfg.HTTPClient.HTTPClientConfig, version, 2*cfg.RefreshInterval)
	if err != nil {
		return nil, err
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Registry{cfg: cfg, client: c, servers: map[string][]remote{}}, nil
}

// Key implements Source.
func (r *Registry) Key() string { return r.cfg.Source() }

// Skipped is how many remotes the last listing had that are not
// streamable-http (or whose URL is not one driftd probes).
func (r *Registry) Skipped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped
}

// Capped reports whether the last listing was cut at max_targets.
func (r *Registry) Capped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.capped
}

// Targets implements Source.
func (r *Registry) Targets() []Target {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.targets
}

// Watch implements Source: every refresh_interval.
func (r *Registry) Watch(ctx context.Context, changed func()) {
	tick := time.NewTicker(r.cfg.RefreshInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			changed()
		}
	}
}

// Refresh implements Source: a full listing the first time and every
// fullEvery refreshes, else the servers updated since the last one. It
// fails whole (the last set stays) on any error, within the block's
// timeout, page and byte bounds.
func (r *Registry) Refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	r.mu.Lock()
	full := r.since.IsZero() || r.refreshes%fullEvery == 0
	servers, since := map[string][]remote{}, r.since
	if !full {
		servers = maps.Clone(r.servers)
	}
	r.mu.Unlock()

	start := time.Now()
	// The registry's own credentials, read as each refresh sends them: a
	// registry that echoes one into a server's name or remote URL would
	// otherwise have driftd carry it to that server.
	secrets := sanitize.NewSecrets(config.SecretValues(&r.cfg.HTTPClient.HTTPClientConfig)...)
	skipped, cursor, seen := 0, "", map[string]bool{}
	held := 0
	for _, rs := range servers {
		held += len(rs)
	}
	capped := false
	for page := 0; ; page++ {
		if page == r.cfg.MaxPages {
			return &Error{Reason: mcp.ReasonResponseTooLarge, Err: fmt.Errorf("more than max_pages (%d) pages", r.cfg.MaxPages)}
		}
		q := url.Values{"limit": {fmt.Sprint(registryPage)}, "version": {"latest"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		if !full {
			q.Set("updated_since", since.Add(-sinceSkew).UTC().Format(time.RFC3339))
		}
		list, err := r.page(ctx, q)
		if err != nil {
			return err
		}
		var n int
		n, held, capped = r.merge(servers, list, secrets, held)
		skipped += n
		cursor = list.Metadata.NextCursor
		if cursor == "" || capped {
			break
		}
		if len(cursor) > maxCursor {
			return &Error{Reason: mcp.ReasonInvalidResponse, Err: fmt.Errorf("the listing's nextCursor is %d bytes, more than %d", len(cursor), maxCursor)}
		}
		if seen[cursor] {
			return &Error{Reason: mcp.ReasonInvalidResponse, Err: errors.New("the listing's nextCursor repeats")}
		}
		seen[cursor] = true
	}
	targets, collided := r.build(servers)
	skipped += collided
	r.mu.Lock()
	defer r.mu.Unlock()
	if !full {
		skipped = r.skipped + skipped // an incremental listing adds to what the full one counted
	}
	r.servers, r.skipped, r.since, r.targets, r.capped = servers, skipped, start, targets, capped
	r.refreshes++
	return nil
}

// page fetches one page of the listing.
func (r *Registry) page(ctx context.Context, q url.Values) (*registryList, error) {
	u := strings.TrimRight(r.cfg.URL, "/") + registryPath + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &Error{Reason: mcp.ReasonConfig, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, &Error{Reason: mcp.Classify(err), Err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("GET %s: status %d", registryPath, resp.StatusCode)
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			msg += " (redirects are not followed)"
		}
		return nil, &Error{Reason: mcp.ReasonHTTPStatus, Err: errors.New(msg)}
	}
	limit := r.cfg.MaxResponseBytes.Bytes()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, &Error{Reason: mcp.Classify(err), Err: fmt.Errorf("reading the listing: %w", err)}
	}
	if int64(len(b)) > limit {
		return nil, &Error{Reason: mcp.ReasonResponseTooLarge, Err: fmt.Errorf("a page of the listing is larger than max_response_bytes (%d)", limit)}
	}
	var list registryList
	if err := json.Unmarshal(b, &list); err != nil {
		// Not the registry's text: only where it broke.
		var se *json.SyntaxError
		off := int64(-1)
		if errors.As(err, &se) {
			off = se.Offset
		}
		return nil, &Error{Reason: mcp.ReasonInvalidResponse, Err: fmt.Errorf("a page of the listing is not the registry API's JSON (%d bytes, offset %d)", len(b), off)}
	}
	return &list, nil
}

// merge applies one page to servers, which hold held remotes, and
// returns how many remotes it skipped (of another type, with a URL driftd
// does not probe, a name or URL past its bound, or carrying one of the
// registry's own credentials), the remotes held after it, and whether
// max_targets stopped it: a server whose remotes would pass it is left
// out, and so is the rest of the listing.
func (r *Registry) merge(servers map[string][]remote, list *registryList, secrets *sanitize.Secrets, held int) (skipped, _ int, capped bool) {
	for _, e := range list.Servers {
		s := e.Server
		if s.Name == "" || !r.wanted(s.Name) {
			continue
		}
		if len(s.Name) > maxName {
			skipped += len(s.Remotes)
			continue
		}
		var st officialStatus
		if raw, ok := e.Meta[officialMeta]; ok {
			_ = json.Unmarshal(raw, &st) // a meta block of another shape says nothing
		}
		if st.IsLatest != nil && !*st.IsLatest {
			continue
		}
		if st.Status == "deleted" {
			held -= len(servers[s.Name])
			delete(servers, s.Name)
			continue
		}
		if secrets.Contains(s.Name) {
			skipped += len(s.Remotes)
			held -= len(servers[s.Name])
			delete(servers, s.Name)
			continue
		}
		var remotes []remote
		for _, rm := range s.Remotes {
			// A URL with {variables} is a template the registry expects
			// its client to fill in: probed as written it would reach
			// another resource, or none.
			if rm.Type != streamableHTTP || len(rm.URL) > maxURL || strings.ContainsAny(rm.URL, "{}") ||
				config.CheckTargetURL(rm.URL) != nil || secrets.Contains(rm.URL) {
				skipped++
				continue
			}
			rt := remote{url: rm.URL}
			for _, h := range rm.Headers {
				if h.IsRequired && h.Name != "" {
					rt.required = append(rt.required, h.Name)
				}
			}
			remotes = append(remotes, rt)
		}
		old := len(servers[s.Name])
		if len(remotes) == 0 {
			held -= old
			delete(servers, s.Name)
			continue
		}
		if held-old+len(remotes) > r.cfg.MaxTargets {
			return skipped, held, true
		}
		held += len(remotes) - old
		servers[s.Name] = remotes
	}
	return skipped, held, false
}

func (r *Registry) wanted(name string) bool {
	if len(r.cfg.NamePrefixes) == 0 {
		return true
	}
	for _, p := range r.cfg.NamePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// build turns the servers into targets, in name order. Names are
// injective in (server, URL) but for a digest collision, which is refused:
// the second target is left out and counted as skipped, never given the
// first's name (and with it its state and credentials).
func (r *Registry) build(servers map[string][]remote) (out []Target, collided int) {
	origin := r.Key()
	named := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		remotes := servers[name]
		for i, rm := range remotes {
			t := config.Target{Name: RegistryName(name, rm.url), URL: rm.url, Labels: maps.Clone(r.cfg.Labels), HTTPClient: config.DefaultHTTPClient()}
			if named[t.Name] {
				collided++
				continue
			}
			named[t.Name] = true
			legacy := LegacyRegistryName(name, i, len(remotes))
			if m := findManifest(r.cfg.ManifestsDir, t.Name, legacy); m != "" {
				t.Manifest = m
			} else {
				t.Baseline = config.BaselineFirstSeen
			}
			out = append(out, Target{Origin: origin, Identity: name, Previous: []string{legacy},
				RequiredHeaders: slices.Clone(rm.required), Target: t})
		}
	}
	return out, collided
}

// findManifest returns dir/NAME.json (or .yaml, .yml) for the first of
// names that has one.
func findManifest(dir string, names ...string) string {
	if dir == "" {
		return ""
	}
	for _, name := range names {
		for _, ext := range []string{".json", ".yaml", ".yml"} {
			p := filepath.Join(dir, name+ext)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
	}
	return ""
}

// Error is a failed refresh with its reason from the fixed set
// (docs/probe.md), as a target's failed run has.
type Error struct {
	Reason mcp.Reason
	Err    error
}

func (e *Error) Error() string { return string(e.Reason) + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Reason classifies a refresh error: a file that does not parse is config.
func Reason(err error) mcp.Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		return mcp.ReasonConfig
	}
	if r := mcp.Classify(err); r != "" {
		return r
	}
	return mcp.ReasonConfig
}
