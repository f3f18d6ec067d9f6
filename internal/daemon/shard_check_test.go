package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/scheduler"
)

// TestShardReadsItsOwnManifests: a replica reads and checks only the
// manifests of the targets in its shard. A broken manifest of another
// replica's target refuses that replica's reload, not this one's.
func TestShardReadsItsOwnManifests(t *testing.T) {
	dir := t.TempDir()
	name := func(shard int) string {
		for i := 0; ; i++ {
			if n := fmt.Sprintf("t%d", i); scheduler.InShard(n, shard, 2) {
				return n
			}
		}
	}
	mine, theirs := name(0), name(1)
	good := `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`
	write := func(file, body string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("mine.json", good)
	write("theirs.json", good)
	write("driftd.yml", fmt.Sprintf("global: {schedule: \"@every 1h\", state_dir: state}\ntargets:\n"+
		"  - {name: %s, url: \"http://127.0.0.1:1/mcp\", manifest: mine.json}\n"+
		"  - {name: %s, url: \"http://127.0.0.1:1/mcp\", manifest: theirs.json}\n", mine, theirs))
	cfg := filepath.Join(dir, "driftd.yml")
	replicas := make([]*Daemon, 2)
	for i := range replicas {
		d, err := New(Options{ConfigFile: cfg, ListenAddresses: []string{"127.0.0.1:0"}, Shard: i, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		replicas[i] = d
	}
	if err := replicas[0].reload(); err != nil {
		t.Fatal(err)
	}
	if n := replicas[0].manifests.reads.Load(); n != 1 {
		t.Errorf("replica 0's reload read %d manifests, want its own one", n)
	}
	write("theirs.json", `{"tools": [`)
	if err := replicas[0].reload(); err != nil {
		t.Errorf("replica 0 refused a reload over another replica's manifest: %v", err)
	}
	if err := replicas[1].reload(); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("replica 1 accepted its own broken manifest: %v", err)
	}
}
