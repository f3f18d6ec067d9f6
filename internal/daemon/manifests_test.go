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
