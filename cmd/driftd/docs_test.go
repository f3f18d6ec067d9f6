package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fencedAfter returns the body of the first fenced block after marker in
// doc, without its fences.
func fencedAfter(t *testing.T, doc, marker string) string {
	t.Helper()
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("docs lack %q", marker)
	}
	rest := doc[i:]
	open := strings.Index(rest, "```")
	body := rest[open+3:]
	body = body[strings.Index(body, "\n")+1:]
	return body[:strings.Index(body, "```")]
}

// TestConfigErrorsDocumented runs the example of docs/configuration.md's
// Errors section and compares what driftd prints with what the page says.
func TestConfigErrorsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	doc = doc[strings.Index(doc, "\n## Errors\n"):]
	config := fencedAfter(t, doc, "`driftd.yml`:")
	search := fencedAfter(t, doc, "`manifests/search.json`:")
	out := fencedAfter(t, doc, "```\n$ driftd config check driftd.yml")
	want := strings.TrimPrefix(out, "$ driftd config check driftd.yml\n")

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"driftd.yml":            config,
		"manifests/search.json": search,
		"manifests/orders.json": `{"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	code, stdout, stderr := driftd(t, "config", "check", "driftd.yml")
	if code != exitUsage || stdout != "" || stderr != want {
		t.Errorf("exit %d; driftd prints:\n%s\ndocs/configuration.md says:\n%s", code, stderr, want)
	}
}

// TestManifestErrorDocumented runs the README's bad-manifest example.
func TestManifestErrorDocumented(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "$ driftd check manifests/orders.json --base-url https://orders.internal/mcp\n"
	want := strings.TrimPrefix(fencedAfter(t, string(b), "```\n"+cmd), cmd)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The README's manifest: a trailing comma after "a", at line 3, column 18.
	bad := "{\n  \"tools\": [\n    {\"name\": \"a\",}\n  ]\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "manifests", "orders.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, stdout, stderr := driftd(t, strings.Fields(strings.TrimPrefix(cmd, "$ driftd "))...)
	if code != exitUsage || stdout != "" || stderr != want {
		t.Errorf("exit %d; driftd prints:\n%s\nREADME.md says:\n%s", code, stderr, want)
	}
}
