package validate

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"
)

// Every driftd ConfigMap, written out as the kubelet mounts it, passes
// `driftd config check`: the real parser and validator, with every manifest
// loaded. The binary is built from the main module at the repository root.
func TestConfigMapsPassConfigCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds driftd; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "driftd")); err != nil {
		t.Skipf("no cmd/driftd at the repository root: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "driftd")
	b := exec.Command(goBin, "build", "-o", bin, "./cmd/driftd")
	b.Dir = root
	if out, err := b.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/driftd: %v\n%s", err, out)
	}
	checked := 0
	for _, bd := range sources() {
		o := bd.load(t)
		for _, cm := range o.configMaps {
			if _, ok := cm.Data[path.Base(configFile)]; !ok {
				continue
			}
			t.Run(bd.name+"/"+cm.Name, func(t *testing.T) {
				dir := t.TempDir()
				for k, v := range cm.Data {
					if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				c := exec.Command(bin, "config", "check", filepath.Join(dir, path.Base(configFile)))
				if out, err := c.CombinedOutput(); err != nil {
					t.Fatalf("driftd config check: %v\n%s", err, out)
				}
			})
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no ConfigMap with driftd.yml in any build")
	}
}
