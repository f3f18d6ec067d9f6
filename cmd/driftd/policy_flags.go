package main

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/driftd/driftd/internal/catalogue"
	"github.com/driftd/driftd/internal/config"
)

// policyFlags are --ignore-file and --severity, shared by check and diff.
type policyFlags struct {
	ignoreFile string
	severity   []string
}

func addPolicyFlags(cmd *kingpin.CmdClause) *policyFlags {
	f := &policyFlags{}
	cmd.Flag("ignore-file", "YAML file with ignore: entries (rule, tool, pointer, fingerprint, reason, expires) and an optional severity: map.").PlaceHolder("PATH").StringVar(&f.ignoreFile)
	cmd.Flag("severity", "Override a rule's or BRK grade's severity: RULE=ERROR|WARN|INFO|OFF (repeatable).").PlaceHolder("RULE=LEVEL").StringsVar(&f.severity)
	return f
}

// policy builds the catalogue policy; every problem is a usage error. The
// --ignore-file is checked as a config is (config.LoadPolicy): every
// problem in one pass, each with its line.
func (f *policyFlags) policy() (*catalogue.Policy, error) {
	pf, errs := &config.Policy{}, []error(nil)
	if f.ignoreFile != "" {
		p, err := config.LoadPolicy(f.ignoreFile)
		var ce *config.Error
		switch {
		case err != nil && !errors.As(err, &ce):
			errs = append(errs, fmt.Errorf("--ignore-file: %w", err))
		case err != nil:
			errs = append(errs, err) // each line starts FILE:LINE:
		default:
			pf = p
		}
	}
	severity := maps.Clone(pf.Severity)
	if severity == nil {
		severity = map[string]string{}
	}
	for _, s := range f.severity {
		rule, level, ok := strings.Cut(s, "=")
		if !ok {
			errs = append(errs, fmt.Errorf("--severity %q: want RULE=LEVEL", s))
			continue
		}
		for _, err := range config.CheckSeverity(rule, level) {
			errs = append(errs, fmt.Errorf("--severity %s: %w", s, err))
		}
		severity[rule] = level
	}
	if err := errors.Join(errs...); err != nil {
		return nil, usageErr("%v", err)
	}
	p, err := catalogue.NewPolicy(severity, pf.Ignore)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return p, nil
}
