package validate

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const unitPath = "../systemd/driftd.service"

// unit is a systemd unit file: section → key → values, in order (a key
// may repeat, as SystemCallFilter= does).
type unit map[string]map[string][]string

func readUnit(t *testing.T) unit {
	t.Helper()
	f, err := os.Open(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unit{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" || strings.HasSuffix(line, "\\") {
				t.Fatalf("%s:%d: %q: want KEY=VALUE on one line inside a section", unitPath, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

func (u unit) get(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// The unit runs driftd as the Kubernetes manifests do, hardened, with the
// state in its StateDirectory and reload by SIGHUP.
func TestSystemdUnit(t *testing.T) {
	u := readUnit(t)
	if f := strings.Fields(u.get("Service", "ExecStart")); len(f) == 0 || f[0] != "/usr/local/bin/driftd" ||
		!slices.Equal(f[1:], []string{"run", "--config.file=" + configFile, fmt.Sprintf("--web.listen-address=:%d", driftdPort)}) {
		t.Errorf("ExecStart %q: want /usr/local/bin/driftd run --config.file=%s --web.listen-address=:%d", u.get("Service", "ExecStart"), configFile, driftdPort)
	}
	for _, want := range [][3]string{
		{"Service", "ExecReload", "/bin/kill -HUP $MAINPID"},
		{"Service", "DynamicUser", "yes"},
		{"Service", "StateDirectory", "driftd"},
		{"Service", "ProtectSystem", "strict"},
		{"Service", "NoNewPrivileges", "yes"},
		{"Service", "CapabilityBoundingSet", ""},
		{"Service", "ProtectHome", "yes"},
		{"Service", "PrivateTmp", "yes"},
		{"Service", "PrivateDevices", "yes"},
		{"Service", "RestrictSUIDSGID", "yes"},
		{"Service", "MemoryDenyWriteExecute", "yes"},
		{"Service", "SystemCallArchitectures", "native"},
		{"Service", "RestartPreventExitStatus", "2"},
		{"Install", "WantedBy", "multi-user.target"},
	} {
		if v, ok := u[want[0]][want[1]]; !ok || v[len(v)-1] != want[2] {
			t.Errorf("[%s] %s=%q, want %q", want[0], want[1], u.get(want[0], want[1]), want[2])
		}
	}
	if !slices.Contains(u[("Service")]["SystemCallFilter"], "@system-service") {
		t.Errorf("SystemCallFilter %q: want @system-service", u["Service"]["SystemCallFilter"])
	}
	// The state directory is /var/lib/<StateDirectory>, where the image
	// and the manifests keep it too.
	if d := "/var/lib/" + u.get("Service", "StateDirectory"); d != "/var/lib/driftd" {
		t.Errorf("state directory %s, want /var/lib/driftd", d)
	}
	// driftd exits within 10 s of SIGTERM; systemd must wait longer.
	if d, err := time.ParseDuration(u.get("Service", "TimeoutStopSec")); err != nil || d <= 10*time.Second {
		t.Errorf("TimeoutStopSec %q: want more than driftd's 10 s shutdown", u.get("Service", "TimeoutStopSec"))
	}
}

// systemd's own reading of the unit, with the binary where ExecStart
// names it: `systemd-analyze verify` says nothing, and `systemd-analyze
// security --offline` rates its exposure at most 2.0 ("OK"; --threshold
// counts in tenths). In CI the
// tool must be there (.ci/run installs Debian's systemd).
func TestSystemdAnalyze(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("systemd-analyze missing in CI (apt-get install systemd)")
		}
		t.Skip("systemd-analyze not installed (apt-get install systemd)")
	}
	bin := driftdBinary(t)
	raw, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	// verify checks that ExecStart's binary exists: point it at the one
	// just built, and change nothing else.
	text := strings.Replace(string(raw), "ExecStart=/usr/local/bin/driftd ", "ExecStart="+bin+" ", 1)
	if text == string(raw) {
		t.Fatal("no ExecStart=/usr/local/bin/driftd to point at the built binary")
	}
	file := filepath.Join(t.TempDir(), "driftd.service")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", "--man=no", file).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command(sa, "security", "--offline=true", "--threshold=20", "--no-pager", file).CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for driftd.service: ([0-9.]+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Errorf("systemd-analyze security: %v\n%s", err, out)
	} else {
		t.Logf("systemd-analyze security: exposure %s", m[1])
	}
}

// ExecReload sends SIGHUP, and driftd reloads on it: run the binary with
// the unit's ExecStart arguments (the config file and a loopback port
// swapped in), send what ExecReload sends, and see a successful reload of
// an unchanged file (so the file watch had no part in it).
func TestSystemdReloadIsSIGHUP(t *testing.T) {
	bin := driftdBinary(t)
	u := readUnit(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "driftd.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  state_dir: "+filepath.Join(dir, "state")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var args []string
	for _, a := range strings.Fields(u.get("Service", "ExecStart"))[1:] {
		switch {
		case strings.HasPrefix(a, "--config.file="):
			a = "--config.file=" + cfg
		case strings.HasPrefix(a, "--web.listen-address="):
			a = "--web.listen-address=" + addr
		}
		args = append(args, a)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	reloaded := func() (float64, bool) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return 0, false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		m := regexp.MustCompile(`(?m)^driftd_config_last_reload_success_timestamp_seconds (\S+)$`).FindSubmatch(body)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		return v, err == nil
	}
	var first float64
	waitUntil(t, "driftd serves /metrics", func() bool { v, ok := reloaded(); first = v; return ok })

	reload := strings.Fields(strings.ReplaceAll(u.get("Service", "ExecReload"), "$MAINPID", strconv.Itoa(cmd.Process.Pid)))
	if out, err := exec.Command(reload[0], reload[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("ExecReload %q: %v\n%s", reload, err, out)
	}
	waitUntil(t, "a reload after ExecReload", func() bool { v, ok := reloaded(); return ok && v > first })
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
