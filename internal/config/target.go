// Package config holds driftd's configuration types, their defaults and
// their validation.
package config

import (
	"errors"
	"fmt"
	"slices"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/driftd/driftd/internal/catalogue"
)

// Defaults of DESIGN §4.
const (
	DefaultSchedule         = "@every 5m"
	DefaultTimeout          = 30 * time.Second
	DefaultMaxListPages     = 50
	DefaultMaxResponseBytes = 16 << 20
	// DefaultMaxRunBytes bounds the bytes one run reads across every
	// response of every listing and call: what bounds a run's memory.
	DefaultMaxRunBytes        = 64 << 20
	DefaultConcurrency        = 32
	DefaultStateDir           = "./data"
	DefaultPerToolSeriesLimit = 200
)

// BaselineFirstSeen is the one baseline mode: trust on first use.
const BaselineFirstSeen = "first_seen"

// Classes are the environment classifications a target can have.
var Classes = []string{"local", "dev", "staging", "production", "unknown"}

// targetNamePattern is the rule for target names, as users read it.
const targetNamePattern = `^[a-z0-9][a-z0-9_.-]{0,62}$`

// ValidTargetName reports whether name is a valid target name: whether it
// matches targetNamePattern, written out, because compiling the pattern's
// {0,62} took half a millisecond of every driftd check
// (TestValidTargetName holds the two to each other).
func ValidTargetName(name string) bool {
	if len(name) == 0 || len(name) > MaxTargetNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Target is one (name, URL, manifest) triple and how to probe it: the
// effective settings, with the global ones inherited. Its YAML keys are
// those of DESIGN §4, decoded straight into it.
type Target struct {
	Name     string `yaml:"name"`
	URL      string `yaml:"url"`
	Manifest string `yaml:"manifest,omitempty"`
	// Baseline is "first_seen" for a target without a manifest: its first
	// successful run's served surface becomes the baseline it is compared
	// against (docs/configuration.md#baseline-mode). Empty with a manifest.
	Baseline         string        `yaml:"baseline,omitempty"`
	Schedule         Schedule      `yaml:"schedule,omitempty"`
	Timeout          time.Duration `yaml:"timeout,omitempty"`
	MaxListPages     int           `yaml:"max_list_pages,omitempty"`
	MaxResponseBytes ByteSize      `yaml:"max_response_bytes,omitempty"`
	// MaxRunBytes bounds the bytes read in one run, all responses together.
	MaxRunBytes ByteSize `yaml:"max_run_bytes,omitempty"`
	Environment string   `yaml:"environment,omitempty"`
	// Labels are exported on driftd_target_info only.
	Labels     map[string]string `yaml:"labels,omitempty"`
	HTTPClient HTTPClient        `yaml:"http_client,omitempty"`
	// OAuth is the target's machine identity (docs/authentication.md);
	// the zero value presents none.
	OAuth         OAuth `yaml:"oauth,omitempty"`
	SkipAuthProbe bool  `yaml:"skip_auth_probe,omitempty"`
	// Severity overrides a rule's (or BRK-* grade's) severity: ERROR, WARN,
	// INFO or OFF. Only the level is checked here; the catalogue checks ids.
	Severity map[string]string      `yaml:"severity,omitempty"`
	Ignore   List[catalogue.Ignore] `yaml:"ignore,omitempty"`
	// Classification is the global host rules, copied into every target so
	// a probe needs nothing but its target.
	Classification []ClassificationRule `yaml:"-"`
	// Invoke configures opt-in tools/call, prompts/get and resources/read
	// (docs/invoking.md).
	Invoke Invoke `yaml:"invoke,omitempty"`
	// ShadowTools are tool names of other servers the same agents use:
	// MCP-SEC-SHADOWING also reports this server's texts that try to
	// change how one of them is used (docs/security.md).
	ShadowTools []string `yaml:"shadow_tools,omitempty"`
}

// Invoke is the opt-in tools/call, prompts/get and resources/read of a
// target. Tools and Prompts are exact names and Resources exact URIs,
// resolved against the declared manifest, never globs; without Execute
// only the plan is made; a target that is not local, dev or staging also
// needs IKnowThisIsProduction. Annotations open no gate.
type Invoke struct {
	Tools []string `yaml:"tools,omitempty"`
	// Prompts are the declared prompts to get (prompts/get), by name.
	Prompts []string `yaml:"prompts,omitempty"`
	// Resources are the declared resources to read (resources/read), by uri.
	Resources             []string `yaml:"resources,omitempty"`
	Execute               bool     `yaml:"execute,omitempty"`
	IKnowThisIsProduction bool     `yaml:"i_know_this_is_production,omitempty"`
	// Seed makes the generated arguments deterministic; recorded in the report.
	Seed uint64 `yaml:"seed,omitempty"`
	// Arguments, per tool named in Tools, replace the generated arguments
	// with these; they are validated against the declared inputSchema
	// before anything is sent, as generated ones are.
	Arguments map[string]map[string]any `yaml:"arguments,omitempty"`
	// PromptArguments, per prompt named in Prompts, give argument values
	// (prompt arguments are strings); a required argument without one is
	// generated from Seed, a name the declared prompt lacks is refused.
	PromptArguments map[string]map[string]string `yaml:"prompt_arguments,omitempty"`
}

// IsZero reports whether nothing is configured: the block is left out
// when a target is printed.
func (inv Invoke) IsZero() bool {
	return !inv.Named() && !inv.Execute && !inv.IKnowThisIsProduction && inv.Seed == 0 &&
		len(inv.Arguments) == 0 && len(inv.PromptArguments) == 0
}

// Named reports whether anything is named to invoke: a tool, a prompt or
// a resource.
func (inv Invoke) Named() bool {
	return len(inv.Tools)+len(inv.Prompts)+len(inv.Resources) > 0
}

// ClassificationRule maps hosts matching a regexp to a class.
type ClassificationRule struct {
	Match Regexp `yaml:"match"`
	Class string `yaml:"class"`
}

// NewTarget returns a target with the defaults applied.
func NewTarget(name, rawURL string) Target {
	return Target{
		Name:             name,
		URL:              rawURL,
		Schedule:         defaultSchedule(),
		Timeout:          DefaultTimeout,
		MaxListPages:     DefaultMaxListPages,
		MaxResponseBytes: ByteSize{n: DefaultMaxResponseBytes},
		MaxRunBytes:      ByteSize{n: DefaultMaxRunBytes},
		HTTPClient:       DefaultHTTPClient(),
	}
}

// DefaultHTTPClientConfig is prometheus/common's default with redirects off:
// following one would resend credentials and the body to a place nobody
// configured.
func DefaultHTTPClientConfig() promconfig.HTTPClientConfig {
	c := promconfig.DefaultHTTPClientConfig
	c.FollowRedirects = false
	return c
}

// Validate checks the target and returns every problem found, joined, each
// as "FIELD: message". It is for targets built in code; a config file's
// targets are checked by Parse, which also knows the lines.
func (t *Target) Validate() error {
	issues := t.check()
	for i, r := range t.Classification {
		issues = append(issues, checkRule(fmt.Sprintf("classification[%d]", i), r)...)
	}
	errs := make([]error, len(issues))
	for i, is := range issues {
		errs[i] = fmt.Errorf("%s: %s", is.field, is.msg)
	}
	return errors.Join(errs...)
}

func validClass(c string) bool {
	return slices.Contains(Classes, c)
}
