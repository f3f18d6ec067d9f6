package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"gopkg.in/yaml.v3"

	"github.com/driftd/driftd/internal/catalogue"
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

// policyFile is the --ignore-file format: the same keys as a config target.
type policyFile struct {
	Ignore   []catalogue.Ignore `yaml:"ignore"`
	Severity map[string]string  `yaml:"severity"`
}

// policy builds the catalogue policy; every problem is a usage error.
func (f *policyFlags) policy() (*catalogue.Policy, error) {
	var pf policyFile
	if f.ignoreFile != "" {
		b, err := os.ReadFile(f.ignoreFile)
		if err != nil {
			return nil, usageErr("--ignore-file: %v", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&pf); err != nil && err.Error() != "EOF" {
			return nil, usageErr("--ignore-file %s: %v", f.ignoreFile, err)
		}
	}
	if pf.Severity == nil {
		pf.Severity = map[string]string{}
	}
	for _, s := range f.severity {
		rule, level, ok := strings.Cut(s, "=")
		if !ok {
			return nil, usageErr("--severity %q: want RULE=LEVEL", s)
		}
		pf.Severity[rule] = level
	}
	p, err := catalogue.NewPolicy(pf.Severity, pf.Ignore)
	if err != nil {
		where := "--severity"
		if f.ignoreFile != "" {
			where = f.ignoreFile
		}
		return nil, usageErr("%s: %v", where, strings.ReplaceAll(err.Error(), "\n", fmt.Sprintf("\n%s: ", where)))
	}
	return p, nil
}
