package config

import (
	"time"

	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v3"
)

// DefaultStateRetention is how long the state of a target that vanished
// from the configuration and discovery is kept when global.state_retention
// is not set.
const DefaultStateRetention = Retention(7 * 24 * time.Hour)

// Retention is global.state_retention: how long the daemon keeps the state
// and snapshot files of a target that is no longer configured or
// discovered, counted from when this process saw it go (a target that
// comes back within it resumes its state: baseline, findings, history).
// 0 keeps them for ever. It is written as Prometheus writes durations
// (2s, 12h, 7d, 1w), parsed by prometheus/common/model.
type Retention time.Duration

// UnmarshalYAML parses a duration such as 7d.
func (r *Retention) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return nodeError(n, "want a duration such as 7d")
	}
	d, err := model.ParseDuration(n.Value)
	if err != nil {
		return nodeError(n, "want a duration such as 7d (0s keeps the state of vanished targets for ever): %v", err)
	}
	*r = Retention(d)
	return nil
}

// MarshalYAML writes it back as it is parsed.
func (r Retention) MarshalYAML() (any, error) { return r.String(), nil }

func (r Retention) String() string { return model.Duration(r).String() }

// Duration is the retention as a time.Duration; 0 is for ever.
func (r Retention) Duration() time.Duration { return time.Duration(r) }
