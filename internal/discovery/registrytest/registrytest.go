// Package registrytest is an in-process MCP registry serving the v0.1
// API's listing, GET /v0.1/servers, in its published shape: servers[] of
// {server: server.json, _meta: {"io.modelcontextprotocol.registry/official":
// {status, publishedAt, updatedAt, isLatest}}}, metadata {nextCursor,
// count}; cursor pagination, limit, version=latest, updated_since and
// search (a substring of the name).
package registrytest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Remote is one remote of a server.json: type streamable-http, sse, ...
type Remote struct {
	Type    string   `json:"type"`
	URL     string   `json:"url"`
	Headers []Header `json:"headers,omitempty"`
}

// Header is a header a remote takes (server.json's remotes[].headers).
type Header struct {
	Name       string `json:"name"`
	IsRequired bool   `json:"isRequired,omitempty"`
	IsSecret   bool   `json:"isSecret,omitempty"`
}

type entry struct {
	name, version string
	remotes       []Remote
	status        string
	published     time.Time
	updated       time.Time
	latest        bool
}

// Registry is a running test registry. Its methods are safe for
// concurrent use.
type Registry struct {
	*httptest.Server
	// PageSize is the default and largest page; 0 means 30.
	PageSize int
	// Failing makes every request answer 503.
	Failing atomic.Bool
	// Requests counts the listing requests; Incremental those with
	// updated_since.
	Requests, Incremental atomic.Int64

	mu      sync.Mutex
	entries []*entry
	now     func() time.Time
}

// New starts a registry on 127.0.0.1:0.
func New() *Registry {
	r := &Registry{now: time.Now}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// Put publishes version of server name with remotes; it becomes the
// latest version.
func (r *Registry) Put(name, version string, remotes ...Remote) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for _, e := range r.entries {
		if e.name == name && e.latest {
			e.latest, e.updated = false, now
		}
	}
	r.entries = append(r.entries, &entry{name: name, version: version, remotes: remotes, status: "active", published: now, updated: now, latest: true})
}

// Delete marks every version of name deleted.
func (r *Registry) Delete(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if e.name == name {
			e.status, e.updated = "deleted", r.now()
		}
	}
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v0.1/servers" || req.Method != http.MethodGet {
		http.NotFound(w, req)
		return
	}
	r.Requests.Add(1)
	if r.Failing.Load() {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	q := req.URL.Query()
	size := r.PageSize
	if size <= 0 {
		size = 30
	}
	if l, err := strconv.Atoi(q.Get("limit")); err == nil && l > 0 && l < size {
		size = l
	}
	var since time.Time
	if s := q.Get("updated_since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			http.Error(w, `{"title":"Bad Request","status":400,"detail":"invalid updated_since"}`, http.StatusBadRequest)
			return
		}
		since = t
		r.Incremental.Add(1)
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if n, aerr := strconv.Atoi(string(b)); err != nil || aerr != nil || n < 0 {
			http.Error(w, `{"title":"Bad Request","status":400,"detail":"invalid cursor"}`, http.StatusBadRequest)
			return
		} else {
			start = n
		}
	}
	r.mu.Lock()
	var match []*entry
	for _, e := range r.entries {
		switch {
		case q.Get("version") == "latest" && !e.latest && since.IsZero():
		case q.Get("version") != "" && q.Get("version") != "latest" && e.version != q.Get("version"):
		case !since.IsZero() && e.updated.Before(since):
		case !since.IsZero() && q.Get("version") == "latest" && !e.latest && e.status != "deleted":
		case q.Get("search") != "" && !strings.Contains(e.name, q.Get("search")):
		case since.IsZero() && e.status == "deleted":
		default:
			match = append(match, e)
		}
	}
	slices.SortStableFunc(match, func(a, b *entry) int { return strings.Compare(a.name+"\x00"+a.version, b.name+"\x00"+b.version) })
	type meta struct {
		Status      string    `json:"status"`
		PublishedAt time.Time `json:"publishedAt"`
		UpdatedAt   time.Time `json:"updatedAt"`
		IsLatest    bool      `json:"isLatest"`
	}
	type server struct {
		Schema  string   `json:"$schema"`
		Name    string   `json:"name"`
		Desc    string   `json:"description"`
		Version string   `json:"version"`
		Remotes []Remote `json:"remotes,omitempty"`
	}
	type item struct {
		Server server                     `json:"server"`
		Meta   map[string]json.RawMessage `json:"_meta"`
	}
	out := struct {
		Servers  []item `json:"servers"`
		Metadata struct {
			NextCursor string `json:"nextCursor,omitempty"`
			Count      int    `json:"count"`
		} `json:"metadata"`
	}{Servers: []item{}}
	end := min(start+size, len(match))
	for _, e := range match[min(start, len(match)):end] {
		m, _ := json.Marshal(meta{e.status, e.published, e.updated, e.latest})
		out.Servers = append(out.Servers, item{
			Server: server{"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json", e.name, "a server " + e.name, e.version, e.remotes},
			Meta:   map[string]json.RawMessage{"io.modelcontextprotocol.registry/official": m},
		})
	}
	r.mu.Unlock()
	out.Metadata.Count = len(out.Servers)
	if end < len(match) {
		out.Metadata.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
