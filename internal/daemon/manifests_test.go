package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/driftd/driftd/internal/manifest"
)

// TestManifestCacheSyntaxErrors: a run whose manifest does not parse says
// where, as every other surface does; fixing the file is picked up.
func TestManifestCacheSyntaxErrors(t *testing.T) {
	dir := t.TempDir()
	c := newManifestCache()
	for _, tc := range []struct{ file, body, want string }{
		{"a.json", "{\"tools\": [\n  {\"name\": \"a\",}\n]}\n", `:2:16: not valid JSON: expected a "key" in double quotes, found '}': a trailing comma is not allowed`},
		{"a.yaml", "tools:\n  - name: a\n   title: b\n", ":3: not valid YAML: did not find expected '-' indicator"},
	} {
		path := filepath.Join(dir, tc.file)
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := c.load(path)
		var me *manifest.Error
		if !errors.As(err, &me) || err.Error() != path+tc.want {
			t.Errorf("load(%s) = %v\nwant %s%s", tc.file, err, path, tc.want)
		}
		if err := os.WriteFile(path, []byte(`{"tools": [{"name": "a"}]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		if m, err := c.load(path); err != nil || len(m.Tools) != 1 {
			t.Errorf("fixed %s: %v", tc.file, err)
		}
	}
}

// TestManifestCacheLastGood: a manifest that breaks, or goes, after it
// loaded is still served by loadOrLast, with the error; fixed, the new
// version is. A file that never loaded has no last good version.
func TestManifestCacheLastGood(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := newManifestCache()
	if m, err := c.loadOrLast(path); m != nil || err == nil {
		t.Fatalf("never loaded: %v, %v", m, err)
	}
	write(`{"tools": [{"name": "a"}]}`)
	if m, err := c.loadOrLast(path); err != nil || m.Tools[0].Name != "a" {
		t.Fatalf("good: %v", err)
	}
	write(`{"tools": [`)
	if _, err := c.load(path); err == nil {
		t.Fatal("load of a broken manifest succeeded")
	}
	m, err := c.loadOrLast(path)
	var me *manifest.Error
	if !errors.As(err, &me) || m == nil || m.Tools[0].Name != "a" {
		t.Fatalf("broken: %v, %v; want the last good manifest and the parse error", m, err)
	}
	os.Remove(path)
	if m, err := c.loadOrLast(path); !errors.Is(err, os.ErrNotExist) || m == nil || m.Tools[0].Name != "a" {
		t.Fatalf("removed: %v, %v", m, err)
	}
	// Another size: the cache re-reads a file whose size or time changed,
	// and two writes can share a timestamp.
	write(`{"tools": [{"name": "bb"}]}`)
	if m, err := c.loadOrLast(path); err != nil || m.Tools[0].Name != "bb" {
		t.Fatalf("fixed: %v, %v", m, err)
	}
}
