// Package discovery finds targets outside the config file's targets:
// target files, an MCP registry, Kubernetes Services. A source only finds
// them; the daemon checks, names, credentials and reconciles them through
// the same path as the targets written in the config (docs/discovery.md).
package discovery

import (
	"context"

	"github.com/driftd/driftd/internal/config"
)

// Target is a target as its source found it, before the running
// configuration's global values and credentials are applied
// (config.Config.Discovered).
type Target struct {
	// Origin says where it came from: file:PATH, kubernetes:NS/SERVICE,
	// registry:BASE-URL.
	Origin string
	// Source is the key of the source that found it (Source.Key).
	Source string
	// Identity is what the source names it by, exactly: a registry
	// server's name. sd_credentials' server: matches it.
	Identity string
	// Previous are names an earlier release gave the same target: its
	// state is taken over from the first that has one (docs/discovery.md).
	Previous []string
	// RequiredHeaders are headers the source says the server requires
	// (a registry remote's isRequired headers): the credentials that
	// match it must send each, or it is rejected with that reason.
	RequiredHeaders []string
	Target          config.Target
}

// Source is one discovery block of the config.
type Source interface {
	// Key is the source label of its metrics (file:GLOB, registry:URL,
	// kubernetes:NAMESPACES[;SELECTOR]), unique in a config.
	Key() string
	// Refresh reads the source once. On error the set found before stays.
	Refresh(ctx context.Context) error
	// Targets is the current set, in a stable order. The caller must not
	// modify it.
	Targets() []Target
	// Watch calls changed whenever the source may have changed, until ctx
	// ends.
	Watch(ctx context.Context, changed func())
}
