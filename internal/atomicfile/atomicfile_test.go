package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteKeepsOldOnFailure: a failed write leaves the old content and
// no temp file; a good one replaces the content.
func TestWriteKeepsOldOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	if err := Write(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	full := func(*os.File, []byte) (int, error) { return 0, errors.New("no space left on device") }
	if err := WriteFunc(path, []byte("new"), full); err == nil {
		t.Fatal("a failed write returned no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("after a failed write: %q", b)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if IsTemp(e.Name(), "") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
	if err := Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("after a write: %q", b)
	}
}
