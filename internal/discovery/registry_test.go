package discovery

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/discovery/registrytest"
	"github.com/driftd/driftd/internal/mcp"
)

func registryConfig(t *testing.T, url string) config.RegistrySD {
	t.Helper()
	c, err := config.Parse([]byte("registry_sd:\n  - {url: \""+url+"\", timeout: 2s, max_response_bytes: 2KiB, max_pages: 3}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	return c.RegistrySD[0]
}

// TestRegistryBounds: a redirect is not followed, a page past
// max_response_bytes, more pages than max_pages, a repeating cursor and
// a slow registry each fail the refresh with their reason, and the
// targets found before stay.
func TestRegistryBounds(t *testing.T) {
	reg := registrytest.New()
	defer reg.Close()
	reg.Put("io.example/a", "1", registrytest.Remote{Type: "streamable-http", URL: "https://a.example/mcp"})
	var mode atomic.Value
	mode.Store("")
	var followed atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load().(string) {
		case "redirect":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "large":
			w.Write([]byte(`{"servers": [` + strings.Repeat(" ", 4096) + `]}`))
		case "pages":
			w.Write([]byte(`{"servers": [], "metadata": {"nextCursor": "` + time.Now().String() + `"}}`))
		case "loop":
			w.Write([]byte(`{"servers": [], "metadata": {"nextCursor": "same"}}`))
		case "slow":
			time.Sleep(3 * time.Second)
		default:
			if r.URL.Path == "/elsewhere" {
				followed.Store(true)
			}
			reg.Config.Handler.ServeHTTP(w, r)
		}
	}))
	defer srv.Close()
	r, err := NewRegistry(registryConfig(t, srv.URL), "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(context.Background()); err != nil || len(r.Targets()) != 1 {
		t.Fatalf("first refresh: %v, %d targets", err, len(r.Targets()))
	}
	for _, c := range []struct {
		mode   string
		reason mcp.Reason
	}{
		{"redirect", mcp.ReasonHTTPStatus},
		{"large", mcp.ReasonResponseTooLarge},
		{"pages", mcp.ReasonResponseTooLarge},
		{"loop", mcp.ReasonInvalidResponse},
		{"slow", mcp.ReasonTimeout},
	} {
		mode.Store(c.mode)
		err := r.Refresh(context.Background())
		if got := Reason(err); got != c.reason {
			t.Errorf("%s: reason %q (%v), want %q", c.mode, got, err, c.reason)
		}
		if len(r.Targets()) != 1 {
			t.Errorf("%s: the targets found before are gone", c.mode)
		}
	}
	if followed.Load() {
		t.Error("a redirect was followed")
	}
}

// TestRegistryEchoedCredential: a registry that echoes its own credential
// into a remote URL or a server name does not have driftd carry it to a
// server: those remotes are skipped and counted, the others taken.
func TestRegistryEchoedCredential(t *testing.T) {
	const token = "s3cr3t-registry-token"
	reg := registrytest.New()
	defer reg.Close()
	reg.Put("io.example/ok", "1", registrytest.Remote{Type: "streamable-http", URL: "https://ok.example/mcp"})
	reg.Put("io.example/url", "1", registrytest.Remote{Type: "streamable-http", URL: "https://evil.example/mcp?t=" + token})
	reg.Put("io.example/"+token, "1", registrytest.Remote{Type: "streamable-http", URL: "https://named.example/mcp"})
	c, err := config.Parse([]byte("registry_sd:\n  - url: \""+reg.URL+"\"\n    http_client: {authorization: {credentials: "+token+"}}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(c.RegistrySD[0], "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := r.Targets()
	if len(ts) != 1 || ts[0].Target.URL != "https://ok.example/mcp" || r.Skipped() != 2 {
		t.Fatalf("targets %+v, %d skipped; want ok.example's alone and 2 skipped", ts, r.Skipped())
	}
	for _, tg := range ts {
		if strings.Contains(tg.Target.URL+tg.Target.Name, token) {
			t.Fatalf("a target carries the registry's credential: %+v", tg.Target)
		}
	}
}

// TestRegistryIdentities: look-alike servers get names of their own and
// only their own credentials (sd_credentials' server: is exact); a server
// going from two remotes to one keeps the remaining target's name; a URL
// template is not probed; a header the registry says is required must be
// sent by the credentials, or the target is rejected saying so.
func TestRegistryIdentities(t *testing.T) {
	reg := registrytest.New()
	defer reg.Close()
	const real, lookalike = "io.github.acme/crm-x", "io.github.acme-crm/x"
	sh := func(u string) registrytest.Remote { return registrytest.Remote{Type: "streamable-http", URL: u} }
	reg.Put(real, "1", sh("https://crm.acme.example/mcp"), sh("https://crm-eu.acme.example/mcp"))
	reg.Put(lookalike, "1", sh("https://crm.acme.example/mcp"))
	reg.Put("io.example/tenant", "1", sh("https://mcp.example/{tenant}/mcp"))
	reg.Put("io.example/keyed", "1", registrytest.Remote{Type: "streamable-http", URL: "https://keyed.example/mcp",
		Headers: []registrytest.Header{{Name: "X-Api-Key", IsRequired: true, IsSecret: true}, {Name: "X-Optional"}}})
	cfg, err := config.Parse([]byte(`registry_sd:
  - {url: "`+reg.URL+`", timeout: 5s}
sd_credentials:
  - server: io.github.acme/crm-x
    http_client: {authorization: {credentials: marker-real-token}}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(cfg.RegistrySD[0], "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	byName := map[string]Target{}
	for _, f := range r.Targets() {
		byName[f.Target.Name] = f
	}
	realName := RegistryName(real, "https://crm.acme.example/mcp")
	fakeName := RegistryName(lookalike, "https://crm.acme.example/mcp")
	euName := RegistryName(real, "https://crm-eu.acme.example/mcp")
	if len(byName) != 4 || byName[realName].Identity != real || byName[fakeName].Identity != lookalike || byName[euName].Identity != real {
		t.Fatalf("targets: %v", slices.Collect(maps.Keys(byName)))
	}
	if r.Skipped() != 1 {
		t.Errorf("the URL template is not skipped: skipped %d", r.Skipped())
	}
	token := func(name string) string {
		f := byName[name]
		got, err := cfg.Discovered(config.Found{Target: f.Target, Origin: f.Origin, Identity: f.Identity, RequiredHeaders: f.RequiredHeaders})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a := got.HTTPClient.Authorization; a != nil {
			return string(a.Credentials)
		}
		return ""
	}
	if token(realName) != "marker-real-token" || token(euName) != "marker-real-token" || token(fakeName) != "" {
		t.Errorf("credentials: real %q, eu %q, look-alike %q", token(realName), token(euName), token(fakeName))
	}
	keyed := byName[RegistryName("io.example/keyed", "https://keyed.example/mcp")]
	_, err = cfg.Discovered(config.Found{Target: keyed.Target, Origin: keyed.Origin, Identity: keyed.Identity, RequiredHeaders: keyed.RequiredHeaders})
	if err == nil || !strings.Contains(err.Error(), `requires header "X-Api-Key"`) || strings.Contains(err.Error(), "X-Optional") {
		t.Errorf("a required header without credentials: %v", err)
	}

	// Two remotes to one: the remaining target keeps its name, and so
	// its state and baseline.
	reg.Put(real, "2", sh("https://crm.acme.example/mcp"))
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range r.Targets() {
		if f.Identity == real {
			names = append(names, f.Target.Name)
		}
	}
	if !slices.Equal(names, []string{realName}) {
		t.Errorf("after going to one remote: %v, want [%s]", names, realName)
	}
}

// TestRegistryHugeListing: a registry listing 300,000 servers (pages made
// on the fly, 1,000 servers a page whatever limit says) leaves the block
// at max_targets, flagged as cut, its heap within the documented figure,
// and a cursor past its bound fails the refresh.
func TestRegistryHugeListing(t *testing.T) {
	const servers, perPage = 300000, 1000
	var longCursor atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := 0
		fmt.Sscan(r.URL.Query().Get("cursor"), &start)
		var b strings.Builder
		b.WriteString(`{"servers":[`)
		for i := start; i < min(start+perPage, servers); i++ {
			if i > start {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"server":{"name":"io.example/s%06d","version":"1","remotes":[{"type":"streamable-http","url":"https://s%06d.example/mcp"}]}}`, i, i)
		}
		next := ""
		if start+perPage < servers {
			next = fmt.Sprint(start + perPage)
			if longCursor.Load() {
				next += strings.Repeat("0", 2*maxCursor)
			}
		}
		fmt.Fprintf(&b, `],"metadata":{"nextCursor":%q}}`, next)
		w.Write([]byte(b.String()))
	}))
	defer srv.Close()
	cfg, err := config.Parse([]byte("registry_sd:\n  - {url: \""+srv.URL+"\", timeout: 1m}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(cfg.RegistrySD[0], "test")
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := len(r.Targets()); n != config.DefaultSDMaxTargets || !r.Capped() {
		t.Fatalf("%d targets, capped %v; want the block's max_targets, %d, and capped", n, r.Capped(), config.DefaultSDMaxTargets)
	}
	// docs/discovery.md, "Bounds": a block at its default max_targets
	// holds some 40 MiB at most; these targets' names and URLs are short.
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 40<<20 {
		t.Errorf("the heap grew by %d MiB holding %d targets", grew>>20, len(r.Targets()))
	}
	longCursor.Store(true)
	if err := r.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "nextCursor is") {
		t.Errorf("a cursor past its bound: %v", err)
	}
}
