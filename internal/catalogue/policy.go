package catalogue

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// Ignore is one suppression entry: every criterion given must match.
// Suppression only: an ignore never enables anything.
type Ignore struct {
	Rule        string `yaml:"rule,omitempty" json:"rule,omitempty"`
	Tool        string `yaml:"tool,omitempty" json:"tool,omitempty"`
	Pointer     string `yaml:"pointer,omitempty" json:"pointer,omitempty"`
	Fingerprint string `yaml:"fingerprint,omitempty" json:"fingerprint,omitempty"`
	Reason      string `yaml:"reason" json:"reason"`
	Expires     string `yaml:"expires,omitempty" json:"expires,omitempty"`

	expires time.Time // end of the Expires day, UTC; zero for never
}

// StaleIgnore is an ignore entry that matched nothing, or has expired.
type StaleIgnore struct {
	Ignore
	Why string `json:"why"`
}

// Policy holds per-rule severity overrides and ignore entries.
type Policy struct {
	severity map[string]Severity
	ignores  []Ignore
}

// NewPolicy validates overrides (rule or BRK-* grade id → ERROR, WARN, INFO
// or OFF) and ignore entries, returning every problem found.
func NewPolicy(severity map[string]string, ignores []Ignore) (*Policy, error) {
	p := &Policy{severity: map[string]Severity{}}
	var errs []error
	for id, level := range severity {
		sev, ok := ParseSeverity(level)
		if !ok {
			errs = append(errs, fmt.Errorf("severity %s: %q is not ERROR, WARN, INFO or OFF", id, level))
			continue
		}
		_, isRule := Lookup(id)
		_, isGrade := LookupGrade(id)
		if !isRule && !isGrade {
			errs = append(errs, fmt.Errorf("severity: %q is not a rule or BRK-* grade id (see driftd rules)", id))
			continue
		}
		p.severity[id] = sev
	}
	for i, ig := range ignores {
		if err := ig.compile(); err != nil {
			errs = append(errs, fmt.Errorf("ignore[%d]: %w", i, err))
			continue
		}
		p.ignores = append(p.ignores, ig)
	}
	return p, errors.Join(errs...)
}

func (ig *Ignore) compile() error {
	if ig.Reason == "" {
		return errors.New("reason is required")
	}
	if ig.Rule == "" && ig.Tool == "" && ig.Pointer == "" && ig.Fingerprint == "" {
		return errors.New("needs at least one of rule, tool, pointer, fingerprint")
	}
	if r := ig.Rule; r != "" && !strings.HasSuffix(r, "*") {
		if _, ok := Lookup(r); !ok {
			return fmt.Errorf("rule %q is not in the catalogue (a family prefix ends in *, e.g. MCP-CONF-*)", r)
		}
	}
	if _, err := path.Match(ig.Tool, ""); err != nil {
		return fmt.Errorf("tool %q: %w", ig.Tool, err)
	}
	if ig.Expires != "" {
		day, err := time.Parse(time.DateOnly, ig.Expires)
		if err != nil {
			return fmt.Errorf("expires %q: want YYYY-MM-DD", ig.Expires)
		}
		ig.expires = day.Add(24 * time.Hour)
	}
	return nil
}

func (ig *Ignore) matches(f Finding) bool {
	if r := ig.Rule; r != "" {
		if prefix, ok := strings.CutSuffix(r, "*"); ok {
			if !strings.HasPrefix(f.Rule, prefix) {
				return false
			}
		} else if f.Rule != r {
			return false
		}
	}
	if ig.Tool != "" {
		if ok, _ := path.Match(ig.Tool, f.Tool); !ok {
			return false
		}
	}
	if ig.Pointer != "" && !strings.HasPrefix(f.Pointer, ig.Pointer) {
		return false
	}
	return ig.Fingerprint == "" || ig.Fingerprint == f.Fingerprint
}

// Ignores is the number of ignore entries of the policy.
func (p *Policy) Ignores() int {
	if p == nil {
		return 0
	}
	return len(p.ignores)
}

// Apply applies the overrides, then the ignores in force at now. It
// returns the findings kept, the ones ignored, and the entries that are
// stale (expired, or matched nothing). A nil Policy keeps everything.
func (p *Policy) Apply(fs []Finding, now time.Time) (kept, ignored []Finding, stale []StaleIgnore) {
	kept, ignored, stale = []Finding{}, []Finding{}, []StaleIgnore{}
	if p == nil {
		return append(kept, fs...), ignored, stale
	}
	used := make([]bool, len(p.ignores))
	for _, f := range fs {
		if sev, ok := p.severity[f.Grade]; ok && f.Grade != "" {
			f.Severity = sev
		} else if sev, ok := p.severity[f.Rule]; ok {
			f.Severity = sev
		}
		if f.Severity == Off {
			continue
		}
		hit := -1
		for i := range p.ignores {
			ig := &p.ignores[i]
			if (ig.expires.IsZero() || now.Before(ig.expires)) && ig.matches(f) {
				hit = i
				break
			}
		}
		if hit < 0 {
			kept = append(kept, f)
			continue
		}
		used[hit] = true
		f.IgnoreReason = p.ignores[hit].Reason
		ignored = append(ignored, f)
	}
	for i, ig := range p.ignores {
		switch {
		case !ig.expires.IsZero() && !now.Before(ig.expires):
			stale = append(stale, StaleIgnore{ig, "expired on " + ig.Expires})
		case !used[i]:
			stale = append(stale, StaleIgnore{ig, "matched no finding"})
		}
	}
	return kept, ignored, stale
}
