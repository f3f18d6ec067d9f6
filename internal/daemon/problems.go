package daemon

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/driftd/driftd/internal/atomicfile"
	"github.com/driftd/driftd/internal/config"
	"github.com/driftd/driftd/internal/manifest"
	"github.com/driftd/driftd/internal/probe"
)

// targetProblems are what would keep the configuration's own targets from
// running, each placed at the line of the field it is about: in
// manifests, a manifest that load cannot read or parse, and an invocation
// the manifest refuses; in files, a file a target's http_client names
// (a credentials, password, header or TLS file) that cannot be opened, or
// one an sd_credentials entry gives the discovered targets it matches.
// `driftd config check` and a reload ask the same questions: config check
// fails on manifests and warns on files (a Secret is often not mounted
// where it runs); a reload refuses both (docs/daemon.md).
//
// The manifests are loaded over every processor the program has (a
// fleet's reload parses thousands of new files), each checked by the
// worker that loaded it and let go: what is kept of a target is its
// problem, if any, read in the targets' order, so the problems are the
// same whatever finished first.
func targetProblems(cfg *config.Config, load func(config.Target) (*manifest.Manifest, error)) (manifests, files []error) {
	problems := make([]error, len(cfg.Targets))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range cfg.Targets {
		g.Go(func() error { problems[i] = manifestProblem(cfg, i, load); return nil })
	}
	_ = g.Wait() // a problem is a value, not the group's error
	for i, t := range cfg.Targets {
		for _, f := range config.ClientFiles(&t.HTTPClient.HTTPClientConfig) {
			if err := readable(f.Path); err != nil {
				files = append(files, cfg.Problem(fmt.Sprintf("targets[%d].http_client.%s", i, f.Field), err))
			}
		}
		if problems[i] != nil {
			manifests = append(manifests, problems[i])
		}
	}
	for i, c := range cfg.SDCredentials {
		for _, f := range config.ClientFiles(&c.HTTPClient.HTTPClientConfig) {
			if err := readable(f.Path); err != nil {
				files = append(files, cfg.Problem(fmt.Sprintf("sd_credentials[%d].http_client.%s", i, f.Field), err))
			}
		}
	}
	return manifests, files
}

// manifestProblem is what keeps target i's manifest from running: the
// file cannot be read or parsed, or it refuses the target's invocation.
// nil for a target compared against a baseline, and for a file load
// knows to load with nothing to check in it (it returns nil, nil).
func manifestProblem(cfg *config.Config, i int, load func(config.Target) (*manifest.Manifest, error)) error {
	t := cfg.Targets[i]
	if t.Manifest == "" {
		return nil // compared against a baseline, or reported by config as required
	}
	m, err := load(t)
	if err != nil {
		var me *manifest.Error
		if errors.As(err, &me) {
			me.Path = besideConfig(cfg.Path, me.Path)
		}
		return cfg.Problem(fmt.Sprintf("targets[%d].manifest", i), err)
	}
	if m == nil {
		return nil
	}
	if p := probe.Prepare(t, m); p.Refused != nil {
		return cfg.Problem(fmt.Sprintf("targets[%d].invoke", i), p.Refused)
	}
	return nil
}

// readable reports why the file at path cannot be opened for reading, as
// the HTTP client will at each request; nil if it can. Nothing is read,
// and nothing waits: a FIFO is refused at once (atomicfile.OpenRegular)
// where opening it would block the reload.
func readable(path string) error {
	f, err := atomicfile.OpenRegular(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// emptyWarning is the warning for a configuration that probes nothing: no
// targets and no discovery source; "" when it has either.
func emptyWarning(cfg *config.Config) string {
	if len(cfg.Targets) > 0 || len(cfg.TargetFiles) > 0 || len(cfg.KubernetesSD) > 0 || len(cfg.RegistrySD) > 0 {
		return ""
	}
	return cfg.Problem("targets", errors.New("no targets and no discovery source (target_files, kubernetes_sd, registry_sd): driftd probes nothing")).Error()
}
