package config

import (
	"os"
	"reflect"

	"github.com/driftd/driftd/internal/catalogue"
)

// Policy is a file of severity overrides and ignore entries on their own
// (check's and diff's --ignore-file), written as in a config target.
type Policy struct {
	Severity map[string]string      `yaml:"severity"`
	Ignore   List[catalogue.Ignore] `yaml:"ignore"`
}

// LoadPolicy reads and checks the policy file at path.
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePolicy(b, path)
}

// ParsePolicy decodes b, the policy file at path, as strictly as a config
// and with the same checks: every problem in one pass, each an *Error
// with its line. An empty file is an empty policy.
func ParsePolicy(b []byte, path string) (*Policy, error) {
	file := path
	if file == "" {
		file = "<policy>"
	}
	p := &Policy{}
	col, err := decode(b, file, "a policy file", p, reflect.TypeFor[Policy]())
	if err != nil {
		return nil, err
	}
	col.add("", checkPolicy(p.Severity, p.Ignore))
	if err := col.err(); err != nil {
		return nil, err
	}
	return p, nil
}
