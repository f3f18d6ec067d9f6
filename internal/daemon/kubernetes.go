package daemon

import (
	"path/filepath"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/discovery"
)

// newKubernetesSource builds a kubernetes_sd source: the client from the
// block's kubeconfig or the in-cluster service account; manifests from
// ConfigMaps are kept under state_dir/kubernetes-manifests.
func (d *Daemon) newKubernetesSource(cfg *config.Config, k config.KubernetesSD) (discovery.Source, error) {
	client, err := discovery.NewKubeClient(k.Kubeconfig, d.opts.Build.Version)
	if err != nil {
		return nil, err
	}
	return discovery.NewKubernetes(k, client, filepath.Join(cfg.Global.StateDir, "kubernetes-manifests")), nil
}
