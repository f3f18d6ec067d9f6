package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/mcp/mcptest"
)

// lastRun is what /api/v1/targets/{name} says of a target's last run.
type lastRun struct {
	StartedAt time.Time `json:"started_at"`
	Success   bool      `json:"success"`
	Findings  []struct {
		Rule string `json:"rule"`
	} `json:"findings"`
	ComparedAgainst string `json:"compared_against"`
}

func lastRunOf(t *testing.T, base, name string) (lastRun, bool) {
	t.Helper()
	code, body := get(t, base+"/api/v1/targets/"+name)
	if code != 200 {
		return lastRun{}, false
	}
	var r lastRun
	if err := json.Unmarshal(apiData(body), &r); err != nil {
		t.Fatalf("report of %s: %v", name, err)
	}
	return r, true
}

// bannerOn fails unless every page at paths shows (want) or lacks the
// reload banner; with want, it must name each of problems.
func bannerOn(t *testing.T, base string, paths []string, want bool, problems ...string) {
	t.Helper()
	for _, p := range paths {
		code, body := get(t, base+p)
		if code != 200 {
			t.Fatalf("GET %s: %d", p, code)
		}
		if has := strings.Contains(body, "configuration reload failed"); has != want {
			t.Errorf("GET %s: reload banner shown = %v, want %v", p, has, want)
		}
		for _, pr := range problems {
			if want && !strings.Contains(body, pr) {
				t.Errorf("GET %s: the banner does not name %q", p, pr)
			}
		}
	}
}

// TestReloadBrokenManifestIsRefused: a manifest broken on disk after start
// makes the next reload (SIGHUP's path) a failed one: the metric drops to
// 0, an ERROR line names the config line, every page shows the banner,
// and the target's runs go on comparing against the manifest it last
// read, succeeding, not failing with reason config. Fixed and reloaded:
// the metric is 1 and the banners are gone.
func TestReloadBrokenManifestIsRefused(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a", "b")})
	defer srv.Close()
	e.manifest("orders.json", "a", "b")
	e.config(fmt.Sprintf("global: {schedule: \"@every 1s\", timeout: 5s, state_dir: state}\ntargets:\n  - {name: orders, url: %q, manifest: orders.json}\n", srv.URL))
	d, base := e.start(false)
	waitMetric(t, base, `driftd_probe_success{target="orders"}`, 1)
	waitMetric(t, base, "driftd_config_last_reload_successful", 1)

	// Another size than the good one: the cache re-reads on size or time.
	e.write("orders.json", `{"tools": [{"name": "a"},`)
	broke := time.Now()
	d.RequestReload() // what SIGHUP does
	eventually(t, time.Second, "driftd_config_last_reload_successful 0", func() bool {
		_, body := get(t, base+"/metrics")
		v, ok := metric(body, "driftd_config_last_reload_successful")
		return ok && v == 0
	})
	where := "driftd.yml:3: targets[0].manifest: "
	if !regexp.MustCompile(`level=ERROR msg="configuration reload failed[^\n]*` + regexp.QuoteMeta(where) + `[^\n]*orders.json:1:`).MatchString(e.log.String()) {
		t.Errorf("no ERROR line naming %s and the manifest's place:\n%s", where, e.log.String())
	}
	bannerOn(t, base, []string{"/", "/targets/orders"}, true, where)

	// The next run compares against the manifest read before it broke.
	eventually(t, 20*time.Second, "a run after the break", func() bool {
		r, ok := lastRunOf(t, base, "orders")
		return ok && r.StartedAt.After(broke)
	})
	r, _ := lastRunOf(t, base, "orders")
	if !r.Success || len(r.Findings) > 0 && strings.Contains(fmt.Sprint(r.Findings), "MISSING") || r.ComparedAgainst != "manifest" {
		t.Errorf("run after the break: %+v; want a success against the old manifest", r)
	}
	_, body := get(t, base+"/metrics")
	if v, _ := metric(body, `driftd_probe_failures_total{reason="config",target="orders"}`); v > 0 {
		t.Errorf(`%v runs failed with reason="config"`, v)
	}
	if !strings.Contains(e.log.String(), "manifest unreadable: runs compare against its last good version") {
		t.Error("no log line says the run used the last good manifest")
	}
	if _, page := get(t, base+"/targets/orders"); !strings.Contains(page, "The manifest cannot be read") {
		t.Error("the target page does not say the manifest is broken")
	}

	e.manifest("orders.json", "a", "b")
	if code, out := post(t, base+"/-/reload"); code != 200 {
		t.Fatalf("reload after the fix: %d %s", code, out)
	}
	waitMetric(t, base, "driftd_config_last_reload_successful", 1)
	bannerOn(t, base, []string{"/", "/targets/orders"}, false)
	eventually(t, 20*time.Second, "the manifest banner to go", func() bool {
		_, page := get(t, base+"/targets/orders")
		return !strings.Contains(page, "The manifest cannot be read")
	})
}

// TestReloadMissingCredentialsFileIsRefused: a credentials file a target
// names, removed, makes the reload a failed one, named at its line;
// restored, the next reload succeeds and the banner goes.
func TestReloadMissingCredentialsFileIsRefused(t *testing.T) {
	e := newEnv(t)
	srv := mcptest.NewServer(mcptest.Options{Tools: mockTools("a"), BearerToken: "tok-5e1f"})
	defer srv.Close()
	e.manifest("a.json", "a")
	e.write("token", "tok-5e1f")
	e.config(fmt.Sprintf(`global: {schedule: "@every 1s", timeout: 5s, state_dir: state}
targets:
  - name: authed
    url: %q
    manifest: a.json
    http_client:
      authorization: {type: Bearer, credentials_file: token}
`, srv.URL))
	d, base := e.start(false)
	waitMetric(t, base, `driftd_probe_success{target="authed"}`, 1)

	if err := os.Remove(filepath.Join(e.dir, "token")); err != nil {
		t.Fatal(err)
	}
	d.RequestReload()
	eventually(t, time.Second, "driftd_config_last_reload_successful 0", func() bool {
		_, body := get(t, base+"/metrics")
		v, ok := metric(body, "driftd_config_last_reload_successful")
		return ok && v == 0
	})
	where := "driftd.yml:7: targets[0].http_client.authorization.credentials_file: open "
	if !regexp.MustCompile(`level=ERROR msg="configuration reload failed[^\n]*` + regexp.QuoteMeta(where)).MatchString(e.log.String()) {
		t.Errorf("no ERROR line naming %s:\n%s", where, e.log.String())
	}
	bannerOn(t, base, []string{"/", "/targets/authed"}, true, "targets[0].http_client.authorization.credentials_file")

	e.write("token", "tok-5e1f")
	if code, out := post(t, base+"/-/reload"); code != 200 {
		t.Fatalf("reload after the fix: %d %s", code, out)
	}
	waitMetric(t, base, "driftd_config_last_reload_successful", 1)
	bannerOn(t, base, []string{"/", "/targets/authed"}, false)
	waitMetric(t, base, `driftd_probe_success{target="authed"}`, 1)
}

// TestEmptyConfigWarns: no targets and no discovery is a warning at start,
// at each reload, and from config check, never an error.
func TestEmptyConfigWarns(t *testing.T) {
	e := newEnv(t)
	path := e.config("global: {state_dir: state}\ntargets: []\n")
	_, base := e.start(false)
	const warning = `level=WARN msg="configuration: ` // then the file, its line, the field
	const what = "targets: no targets and no discovery source"
	count := func() int {
		return len(regexp.MustCompile(regexp.QuoteMeta(warning)+`[^\n]*driftd.yml:2: `+what).FindAllString(e.log.String(), -1))
	}
	if n := count(); n != 1 {
		t.Errorf("%d warnings at start, want 1:\n%s", n, e.log.String())
	}
	if code, out := post(t, base+"/-/reload"); code != 200 {
		t.Fatalf("reload: %d %s", code, out)
	}
	if n := count(); n != 2 {
		t.Errorf("%d warnings after a reload, want 2:\n%s", n, e.log.String())
	}
	_, warnings, err := daemon.CheckConfig(path)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "driftd.yml:2: "+what) {
		t.Errorf("CheckConfig = %q, %v; want the warning", warnings, err)
	}
}

// TestCheckConfigFiles: config check fails on a broken manifest, at its
// line, and warns on a secret file it cannot open, a target's or an
// sd_credentials entry's (a Secret is often not mounted where config
// check runs).
func TestCheckConfigFiles(t *testing.T) {
	e := newEnv(t)
	e.write("a.json", `{"tools": [`)
	path := e.config("targets:\n  - name: one\n    url: http://127.0.0.1:1/mcp\n    manifest: a.json\n    http_client: {authorization: {credentials_file: nope}}\n" +
		"sd_credentials:\n  - {url_prefix: \"https://mcp.corp.example/\", http_client: {basic_auth: {username: u, password_file: gone}}}\n")
	_, _, err := daemon.CheckConfig(path)
	if err == nil || !strings.Contains(err.Error(), "driftd.yml:4: targets[0].manifest: ") {
		t.Errorf("CheckConfig with a broken manifest = %v", err)
	}
	e.manifest("a.json", "a")
	_, warnings, err := daemon.CheckConfig(path)
	if err != nil || len(warnings) != 2 || !strings.Contains(warnings[0], "driftd.yml:5: targets[0].http_client.authorization.credentials_file: open ") ||
		!strings.Contains(warnings[1], "driftd.yml:7: sd_credentials[0].http_client.basic_auth.password_file: open ") {
		t.Errorf("CheckConfig with missing secret files = %q, %v; want two warnings", warnings, err)
	}
}
