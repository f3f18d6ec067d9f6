package config

import (
	"slices"
	"time"

	promconfig "github.com/prometheus/common/config"
	"gopkg.in/yaml.v3"

	"github.com/driftd/driftd/internal/catalogue"
)

// The unmarshalers here use yaml's older func(any) error form on purpose:
// it decodes with the caller's decoder, so KnownFields(true) still holds
// inside (yaml.Node.Decode would start a lenient decoder).

// configYAML is the file's top level.
type configYAML struct {
	Global        *Global            `yaml:"global"`
	Targets       list[Target]       `yaml:"targets"`
	TargetFiles   []string           `yaml:"target_files"`
	KubernetesSD  list[KubernetesSD] `yaml:"kubernetes_sd"`
	RegistrySD    list[RegistrySD]   `yaml:"registry_sd"`
	SDCredentials list[SDCredential] `yaml:"sd_credentials"`
	Tracing       *TracingConfig     `yaml:"tracing"`
}

// UnmarshalYAML decodes the file over c, which holds the defaults.
func (c *Config) UnmarshalYAML(unmarshal func(any) error) error {
	raw := configYAML{Global: &c.Global, Tracing: &c.Tracing}
	err := unmarshal(&raw)
	c.Targets = raw.Targets
	c.TargetFiles, c.KubernetesSD, c.RegistrySD, c.SDCredentials = raw.TargetFiles, raw.KubernetesSD, raw.RegistrySD, raw.SDCredentials
	return err
}

// list decodes a sequence keeping every element, even one with errors:
// yaml.v3 drops an element whose unmarshaler fails, which would shift the
// index of every later one, and errors would name the wrong entry.
type list[T any] []T

// item is one element of a list, with the errors decoding it.
type item[T any] struct {
	v    T
	errs []string
}

// UnmarshalYAML keeps the element and holds its errors for the list.
func (it *item[T]) UnmarshalYAML(unmarshal func(any) error) error {
	err := unmarshal(&it.v)
	if te, ok := err.(*yaml.TypeError); ok {
		// A copy: te.Errors shares the decoder's backing array, which the
		// next element's errors overwrite.
		it.errs = slices.Clone(te.Errors)
		return nil
	}
	return err
}

// UnmarshalYAML decodes every element and reports all their errors.
func (l *list[T]) UnmarshalYAML(unmarshal func(any) error) error {
	var items []item[T]
	err := unmarshal(&items)
	var msgs []string
	if te, ok := err.(*yaml.TypeError); ok {
		msgs = slices.Clone(te.Errors)
	} else if err != nil {
		return err
	}
	*l = make(list[T], len(items))
	for i, it := range items {
		(*l)[i] = it.v
		msgs = append(msgs, it.errs...)
	}
	if len(msgs) > 0 {
		return &yaml.TypeError{Errors: msgs}
	}
	return nil
}

// ClassificationRules are the global host rules, in order.
type ClassificationRules []ClassificationRule

// UnmarshalYAML decodes the rules, keeping their indices in errors.
func (rs *ClassificationRules) UnmarshalYAML(unmarshal func(any) error) error {
	return (*list[ClassificationRule])(rs).UnmarshalYAML(unmarshal)
}

// targetYAML is a target as written in the file. Target is what it means:
// sizes in bytes, the HTTP client with driftd's defaults.
type targetYAML struct {
	Name             string                 `yaml:"name"`
	URL              string                 `yaml:"url"`
	Manifest         string                 `yaml:"manifest,omitempty"`
	Baseline         string                 `yaml:"baseline,omitempty"`
	Schedule         Schedule               `yaml:"schedule,omitempty"`
	Timeout          time.Duration          `yaml:"timeout,omitempty"`
	MaxListPages     int                    `yaml:"max_list_pages,omitempty"`
	MaxResponseBytes ByteSize               `yaml:"max_response_bytes,omitempty"`
	MaxRunBytes      ByteSize               `yaml:"max_run_bytes,omitempty"`
	Environment      string                 `yaml:"environment,omitempty"`
	Labels           map[string]string      `yaml:"labels,omitempty"`
	HTTPClient       *httpClientYAML        `yaml:"http_client,omitempty"`
	SkipAuthProbe    bool                   `yaml:"skip_auth_probe,omitempty"`
	Severity         map[string]string      `yaml:"severity,omitempty"`
	Ignore           list[catalogue.Ignore] `yaml:"ignore,omitempty"`
	Invoke           *Invoke                `yaml:"invoke,omitempty"`
	ShadowTools      []string               `yaml:"shadow_tools,omitempty"`
}

// httpClientYAML decodes prometheus/common's HTTPClientConfig from
// driftd's defaults rather than prometheus' own, which follow redirects: a
// block without follow_redirects must still mean false.
type httpClientYAML struct {
	promconfig.HTTPClientConfig `yaml:",inline"`
	// err is a plain error from a prometheus/common unmarshaler (TLS and
	// OAuth2 validate while decoding). Returned as is, it would stop
	// decoding without a line; the target attaches its position instead.
	err error
}

// UnmarshalYAML implements the yaml.v3 obsolete unmarshaler interface.
func (h *httpClientYAML) UnmarshalYAML(unmarshal func(any) error) error {
	type plain promconfig.HTTPClientConfig
	h.HTTPClientConfig = DefaultHTTPClientConfig()
	err := unmarshal((*plain)(&h.HTTPClientConfig))
	if _, ok := err.(*yaml.TypeError); err != nil && !ok {
		h.err = err
		return nil
	}
	return err
}

// UnmarshalYAML decodes a target strictly. Global values are not known
// here: Parse applies them afterwards.
func (t *Target) UnmarshalYAML(unmarshal func(any) error) error {
	var raw targetYAML
	err := unmarshal(&raw)
	if h := raw.HTTPClient; h != nil && h.err != nil {
		herr := httpClientError(unmarshal, h.err)
		switch e := err.(type) {
		case nil:
			err = herr
		case *yaml.TypeError:
			e.Errors = append(e.Errors, herr.Errors...)
		}
	}
	*t = Target{
		Name:             raw.Name,
		URL:              raw.URL,
		Manifest:         raw.Manifest,
		Baseline:         raw.Baseline,
		Schedule:         raw.Schedule,
		Timeout:          raw.Timeout,
		MaxListPages:     raw.MaxListPages,
		MaxResponseBytes: raw.MaxResponseBytes.Bytes(),
		MaxRunBytes:      raw.MaxRunBytes.Bytes(),
		Environment:      raw.Environment,
		Labels:           raw.Labels,
		HTTPClient:       DefaultHTTPClientConfig(),
		SkipAuthProbe:    raw.SkipAuthProbe,
		Severity:         raw.Severity,
		Ignore:           raw.Ignore,
		ShadowTools:      raw.ShadowTools,
	}
	if raw.Invoke != nil {
		t.Invoke = *raw.Invoke
	}
	if raw.HTTPClient != nil {
		t.HTTPClient = raw.HTTPClient.HTTPClientConfig
	}
	return err
}

// httpClientError places err at the target's http_client value.
func httpClientError(unmarshal func(any) error, err error) *yaml.TypeError {
	var values map[string]yaml.Node
	_ = unmarshal(&values) // positions only: the strict decode reported the rest
	n := values["http_client"]
	return nodeError(&n, "%v", err)
}

// MarshalYAML prints the target in the file's shape.
func (t Target) MarshalYAML() (any, error) {
	return targetYAML{
		Name:             t.Name,
		URL:              RedactedURL(t.URL),
		Manifest:         t.Manifest,
		Baseline:         t.Baseline,
		Schedule:         t.Schedule,
		Timeout:          t.Timeout,
		MaxListPages:     t.MaxListPages,
		MaxResponseBytes: ByteSize{n: t.MaxResponseBytes},
		MaxRunBytes:      ByteSize{n: t.MaxRunBytes},
		Environment:      t.Environment,
		Labels:           t.Labels,
		HTTPClient:       &httpClientYAML{HTTPClientConfig: t.HTTPClient},
		SkipAuthProbe:    t.SkipAuthProbe,
		Severity:         t.Severity,
		Ignore:           t.Ignore,
		Invoke:           invokeOrNil(t.Invoke),
		ShadowTools:      t.ShadowTools,
	}, nil
}

func invokeOrNil(inv Invoke) *Invoke {
	if !inv.Named() && !inv.Execute && !inv.IKnowThisIsProduction && inv.Seed == 0 {
		return nil
	}
	return &inv
}

type classificationYAML struct {
	Match Regexp `yaml:"match"`
	Class string `yaml:"class"`
}

// UnmarshalYAML decodes {match, class}, compiling match.
func (r *ClassificationRule) UnmarshalYAML(unmarshal func(any) error) error {
	var raw classificationYAML
	err := unmarshal(&raw)
	r.Match, r.Class = raw.Match.Regexp, raw.Class
	return err
}

// MarshalYAML prints the rule as written.
func (r ClassificationRule) MarshalYAML() (any, error) {
	return classificationYAML{Regexp{r.Match}, r.Class}, nil
}
