package daemon

import (
	"path/filepath"

	"k8s.io/klog/v2"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/discovery"
)

// newKubernetesSource builds a kubernetes_sd source: the client from the
// block's kubeconfig or the in-cluster service account (client-go loads
// both); manifests from ConfigMaps are kept under
// state_dir/kubernetes-manifests.
func (d *Daemon) newKubernetesSource(cfg *config.Config, k config.KubernetesSD) (discovery.Source, error) {
	// client-go logs through klog, to stderr unless told: into driftd's log.
	klog.SetSlogLogger(d.log.With("component", "kubernetes"))
	client, err := discovery.NewKubeClient(k.Kubeconfig, d.opts.Build.Version)
	if err != nil {
		return nil, err
	}
	return discovery.NewKubernetes(k, client, filepath.Join(cfg.Global.StateDir, "kubernetes-manifests")), nil
}
