package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/driftd/driftd/internal/daemon"
	"github.com/driftd/driftd/internal/metrics"
	"github.com/driftd/driftd/internal/web"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// mockTool is a valid tool definition.
func mockTool(name string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"does %s","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}`, name, name))
}

func mockTools(names ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(names))
	for i, n := range names {
		out[i] = mockTool(n)
	}
	return out
}

// env is one test daemon's directory: config, manifests, state, logs.
type env struct {
	t   *testing.T
	dir string
	log *syncBuffer
	// tweak, if set, adjusts the daemon's options before New.
	tweak func(*daemon.Options)
}

func newEnv(t *testing.T) *env {
	return &env{t: t, dir: t.TempDir(), log: &syncBuffer{}}
}

// manifest writes a manifest declaring names and returns its file name.
func (e *env) manifest(file string, names ...string) string {
	b, _ := json.Marshal(map[string]any{"tools": mockTools(names...)})
	e.write(file, string(b))
	return file
}

func (e *env) write(file, body string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, file), []byte(body), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) config(body string) string {
	e.write("driftd.yml", body)
	return filepath.Join(e.dir, "driftd.yml")
}

// start runs a daemon on 127.0.0.1:0 with the env's config and stops it at
// the end of the test.
func (e *env) start(watch bool) (*daemon.Daemon, string) {
	e.t.Helper()
	opts := daemon.Options{
		ConfigFile:      filepath.Join(e.dir, "driftd.yml"),
		ListenAddresses: []string{"127.0.0.1:0"},
		EnableLifecycle: true,
		WatchConfig:     watch,
		Logger:          slog.New(slog.NewTextHandler(e.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Build:           metrics.BuildInfo{Version: "test", Revision: "abc", GoVersion: "go"},
	}
	if e.tweak != nil {
		e.tweak(&opts)
	}
	d, err := daemon.New(opts)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		e.t.Fatal(err)
	}
	stopped := false
	e.t.Cleanup(func() {
		if !stopped {
			stop(e.t, d)
		}
	})
	return d, "http://" + d.Addrs()[0]
}

func stop(t *testing.T, d *daemon.Daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Errorf("stop: %v", err)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// apiData is the data of an /api/v1 answer ({"status": "success",
// "data": …}); an answer that is not one reads as null.
func apiData(body string) []byte {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal([]byte(body), &env) != nil || env.Data == nil {
		return []byte("null")
	}
	return env.Data
}

// post sends a state-changing request as the CLI does, with the header
// every such request needs (docs/security.md).
func post(t *testing.T, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, nil)
	req.Header.Set(web.RequestHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metric returns the value of the series whose line starts with prefix
// (name and labels as exposed), and whether it exists.
func metric(body, prefix string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, prefix+" ") {
			var v float64
			fmt.Sscanf(line[len(prefix)+1:], "%g", &v)
			return v, true
		}
	}
	return 0, false
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s", within, what)
}

func waitMetric(t *testing.T, base, prefix string, want float64) string {
	t.Helper()
	var body string
	eventually(t, 20*time.Second, prefix+" = "+fmt.Sprint(want), func() bool {
		_, body = get(t, base+"/metrics")
		v, ok := metric(body, prefix)
		return ok && v == want
	})
	return body
}

// waitMetricAtLeast is waitMetric for a counter that goes on rising: a
// run every second can take it past want between two scrapes.
func waitMetricAtLeast(t *testing.T, base, prefix string, want float64) string {
	t.Helper()
	var body string
	eventually(t, 20*time.Second, prefix+" >= "+fmt.Sprint(want), func() bool {
		_, body = get(t, base+"/metrics")
		v, ok := metric(body, prefix)
		return ok && v >= want
	})
	return body
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// nowhere fails if needle (named what, for the messages) shows in any page
// at paths (each must answer 200), and, once d has stopped, in a log line
// or a state file.
func (e *env) nowhere(d *daemon.Daemon, base string, paths []string, needle, what string) {
	e.t.Helper()
	for _, path := range paths {
		code, out := get(e.t, base+path)
		if code != 200 {
			e.t.Errorf("GET %s: %d", path, code)
		}
		if strings.Contains(out, needle) {
			e.t.Errorf("GET %s shows %s", path, what)
		}
	}
	stop(e.t, d)
	if strings.Contains(e.log.String(), needle) {
		e.t.Errorf("a log line contains %s", what)
	}
	files, _ := filepath.Glob(filepath.Join(e.dir, "state", "*"))
	if len(files) == 0 {
		e.t.Fatal("no state files written")
	}
	for _, f := range files {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), needle) {
			e.t.Errorf("state file %s contains %s", f, what)
		}
	}
}
