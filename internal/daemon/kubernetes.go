package daemon

import (
	"errors"

	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/discovery"
)

func newKubernetesSource(config.KubernetesSD) (discovery.Source, error) {
	return nil, errors.New("TODO")
}
