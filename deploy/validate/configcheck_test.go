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
	bin := driftdBinary(t)
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
