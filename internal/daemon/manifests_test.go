package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/probe"
)

// TestManifestCacheSyntaxErrors: a run whose manifest does not parse says
// where, as every other surface does; fixing the file is picked up.
func TestManifestCacheSyntaxErrors(t *testing.T) {
	dir := t.TempDir()
	c := newManifestCache(probe.NewCaches(0))
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
	write := fileWriter(t, path)
	c := newManifestCache(probe.NewCaches(0))
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

// TestManifestCacheKeepsHashesNotManifests: the cache keeps per file its
// size, time and hash; the parsed manifest is the memo's. Once the memo
// lets it go, the next load reads the file again and gives an equal
// manifest; with a memo that keeps nothing (nil), every load parses.
// A file that breaks while its manifest is still in the memo keeps it,
// held on the file's entry however much the memo lets go meanwhile,
// until the file reads again.
func TestManifestCacheKeepsHashesNotManifests(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
	write := fileWriter(t, path)
	caches := probe.NewCaches(0)
	c := newManifestCache(caches)
	write(`{"tools": [{"name": "a"}]}`)
	m1, err := c.load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m2, _ := c.load(path); m2 != m1 {
		t.Error("an unchanged file was parsed again while the memo kept it")
	}
	if caches.Manifests().Len() != 1 {
		t.Errorf("memo holds %d manifests, want 1", caches.Manifests().Len())
	}
	caches.Reset() // the memo lets everything go
	m3, err := c.load(path)
	if err != nil || m3 == m1 || len(m3.Tools) != 1 || m3.Tools[0].Name != "a" {
		t.Fatalf("after the memo let it go: %v, %v (same pointer: %v)", m3, err, m3 == m1)
	}

	// Broken while the memo keeps the last good version: it is held.
	write(`{"tools": [`)
	m, err := c.loadOrLast(path)
	if err == nil || m != m3 {
		t.Fatalf("broken: %v, %v; want the last good manifest and the error", m, err)
	}
	caches.Reset()
	if m, err := c.loadOrLast(path); err == nil || m != m3 {
		t.Fatalf("broken, memo emptied: %v, %v; want the held last good manifest", m, err)
	}
	write(`{"tools": [{"name": "bb"}]}`)
	if m, err := c.loadOrLast(path); err != nil || m.Tools[0].Name != "bb" {
		t.Fatalf("fixed: %v, %v", m, err)
	}
	if e := c.byPath[path]; e.last != nil {
		t.Error("a file that reads again still holds its last good version")
	}

	// Broken after the memo let its last good version go: nothing to
	// compare against, and the error says why.
	caches.Reset()
	write(`{"tools": [{"name": "b`)
	if m, err := c.loadOrLast(path); m != nil || err == nil || !strings.Contains(err.Error(), "no longer cached") {
		t.Fatalf("broken after eviction: %v, %v", m, err)
	}

	// No memo: nothing kept, every load parses.
	nc := newManifestCache(nil)
	write(`{"tools": [{"name": "a"}]}`)
	n1, err1 := nc.load(path)
	n2, err2 := nc.load(path)
	if err1 != nil || err2 != nil || n1 == n2 {
		t.Errorf("without a memo: %v %v, same manifest %v", err1, err2, n1 == n2)
	}
}

// TestManifestCacheCheckReadsOnlyChanges: a reload's check of a manifest
// file that loaded and has not changed since reads nothing, even when no
// parsed form is kept; a changed file, a target that plans calls (whose
// gates read the manifest) and a broken file are read.
func TestManifestCacheCheckReadsOnlyChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.json")
	write := fileWriter(t, path)
	write(`{"tools": [{"name": "a"}]}`)
	c := newManifestCache(nil) // keeps no parsed manifest
	tg := config.Target{Manifest: path}
	if m, err := c.check(tg); err != nil || m == nil {
		t.Fatalf("first check: %v, %v; want the manifest read", m, err)
	}
	if m, err := c.check(tg); err != nil || m != nil || c.reads.Load() != 1 {
		t.Fatalf("unchanged: %v, %v, %d reads; want nothing read", m, err, c.reads.Load())
	}
	calls := tg
	calls.Invoke.Execute = true
	if m, err := c.check(calls); err != nil || m == nil || c.reads.Load() != 2 {
		t.Fatalf("a target planning calls: %v, %v, %d reads; want the manifest read", m, err, c.reads.Load())
	}
	write(`{"tools": [`)
	if _, err := c.check(tg); err == nil {
		t.Fatal("a broken file passed the check")
	}
}

// fileWriter returns a function that writes its argument to path, failing
// t if it cannot.
func fileWriter(t *testing.T, path string) func(body string) {
	return func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
