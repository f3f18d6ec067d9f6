package validate

import (
	"path"
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
		cms := o.configMaps
		for _, s := range o.secrets { // the configuration from a Secret
			cms = append(cms, secretAsConfigMap(s))
		}
		for _, cm := range cms {
			if _, ok := cm.Data[path.Base(configFile)]; !ok {
				continue
			}
			t.Run(bd.name+"/"+cm.Name, func(t *testing.T) {
				if out, err := configCheck(t, bin, cm); err != nil {
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
