package state

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/driftd/driftd/internal/manifest"
)

// deepAnswer is a tools/list answer whose one tool's inputSchema nests
// levels objects deep ({"type":"object","properties":{"a":…}}): 36 KB at
// 1,000 levels.
func deepAnswer(levels int) []byte {
	schema := `{"type":"string"}`
	for range levels {
		schema = `{"type":"object","properties":{"a":` + schema + `}}`
	}
	return []byte(`{"tools":[{"name":"deep","inputSchema":` + schema + `}]}`)
}

// TestDeepBaselineStaysLinear is issue 36's case: a 36 KB deeply nested
// answer stored as a baseline makes a state file of about its own size
// (MarshalIndent made it grow with the square of the depth), and a
// reopened store loads the same baseline.
func TestDeepBaselineStaysLinear(t *testing.T) {
	answer := deepAnswer(1000)
	if n := len(answer); n < 35<<10 || n > 38<<10 {
		t.Fatalf("the answer is %d bytes, want about 36 KB", n)
	}
	m, err := manifest.Parse(answer, ".json")
	if err != nil {
		t.Fatal(err)
	}
	canon, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if len(canon) > 2*len(answer) {
		t.Fatalf("the canonical form is %d bytes for a %d-byte answer", len(canon), len(answer))
	}
	dir := t.TempDir()
	s := openStore(t, dir)
	b := &Baseline{Manifest: canon, Digest: SurfaceDigest(nil, m), RecordedAt: t0, Origin: OriginFirstSeen}
	run := WithBaseline(Loaded(NewState("deep")), b, "1 tools", 0)
	mustSave(t, s, run.State)
	fi, err := os.Stat(filepath.Join(dir, "deep.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("state file %d bytes for a %d-byte answer", fi.Size(), len(answer))
	if fi.Size() >= 1<<20 || fi.Size() > 2*int64(len(answer)) {
		t.Fatalf("state file is %d bytes", fi.Size())
	}

	st := mustLoad(t, openStore(t, dir), "deep") // a restart
	var compact bytes.Buffer
	_ = json.Compact(&compact, canon)
	if st.Baseline == nil || !bytes.Equal(st.Baseline.Manifest, compact.Bytes()) || st.Baseline.Digest != b.Digest {
		t.Fatal("the reloaded baseline differs")
	}
	again, err := manifest.Parse(st.Baseline.Manifest, ".json")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := manifest.Parse(canon, ".json")
	if SurfaceDigest(nil, again) != SurfaceDigest(nil, before) {
		t.Fatal("the reloaded baseline holds another surface")
	}
	if c2, _ := again.Canonical(); !bytes.Equal(c2, canon) {
		t.Fatal("the reloaded baseline renders differently")
	}
}
