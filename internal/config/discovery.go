package config

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
)

// Defaults of the discovery blocks (docs/discovery.md).
const (
	DefaultSDRefreshInterval  = 5 * time.Minute
	DefaultSDTimeout          = 30 * time.Second
	DefaultSDMaxResponseBytes = 4 << 20
	DefaultSDMaxPages         = 100
	// DefaultSDMaxTargets bounds the targets one registry_sd block holds.
	DefaultSDMaxTargets        = 10000
	DefaultSDRescanInterval    = 5 * time.Minute
	kubernetesAllNamespacesKey = "*"
)

// KubernetesSD discovers annotated Services (kubernetes_sd:).
type KubernetesSD struct {
	// Namespaces to watch; empty means every namespace.
	Namespaces []string `yaml:"namespaces,omitempty"`
	// Selector is a label selector (app=mcp,tier!=test) the Services must match.
	Selector string `yaml:"selector,omitempty"`
	// Kubeconfig is a kubeconfig file; empty means in-cluster.
	Kubeconfig string `yaml:"kubeconfig,omitempty"`
	// Labels are added to every target found, for sd_credentials to match.
	Labels map[string]string `yaml:"labels,omitempty"`
}

// Source is the source label of the block's metrics: kubernetes:NS,NS
// (kubernetes:* for every namespace), plus ;SELECTOR when one is set.
func (k KubernetesSD) Source() string {
	ns := strings.Join(k.Namespaces, ",")
	if ns == "" {
		ns = kubernetesAllNamespacesKey
	}
	if k.Selector != "" {
		return "kubernetes:" + ns + ";" + k.Selector
	}
	return "kubernetes:" + ns
}

// RegistrySD discovers the streamable-http remotes of an MCP registry's
// servers (registry_sd:).
type RegistrySD struct {
	// URL is the registry's base URL; the servers are at URL/v0.1/servers.
	URL string `yaml:"url"`
	// NamePrefixes keep only servers whose name starts with one of them.
	NamePrefixes []string `yaml:"name_prefixes,omitempty"`
	// ManifestsDir holds manifests named TARGET.json (or .yaml): a found
	// server with one is compared against it, one without runs in
	// baseline mode.
	ManifestsDir    string        `yaml:"manifests_dir,omitempty"`
	RefreshInterval time.Duration `yaml:"refresh_interval,omitempty"`
	// Timeout bounds one refresh, every page together.
	Timeout time.Duration `yaml:"timeout,omitempty"`
	// MaxResponseBytes bounds one page of the listing.
	MaxResponseBytes ByteSize `yaml:"max_response_bytes,omitempty"`
	MaxPages         int      `yaml:"max_pages,omitempty"`
	// MaxTargets bounds the targets (streamable-http remotes) the block
	// holds: a listing past it is cut there, logged and counted.
	MaxTargets int               `yaml:"max_targets,omitempty"`
	Labels     map[string]string `yaml:"labels,omitempty"`
	// HTTPClient is how driftd reaches the registry itself (TLS, its
	// credentials); redirects are never followed.
	HTTPClient HTTPClient `yaml:"http_client,omitempty"`
}

// Source is the source label of the block's metrics: registry:URL.
func (r RegistrySD) Source() string { return "registry:" + RedactedURL(r.URL) }

// plainRegistrySD is RegistrySD without its methods.
type plainRegistrySD RegistrySD

// UnmarshalYAML decodes the block with driftd's HTTP client defaults.
func (r *RegistrySD) UnmarshalYAML(unmarshal func(any) error) error {
	*r = RegistrySD{HTTPClient: DefaultHTTPClient()}
	err := unmarshal((*plainRegistrySD)(r))
	return withHTTPClientError(unmarshal, &r.HTTPClient, err)
}

// MarshalYAML prints the block in the file's shape, its URL redacted.
func (r RegistrySD) MarshalYAML() (any, error) {
	r.URL = RedactedURL(r.URL)
	return plainRegistrySD(r), nil
}

// SDCredential gives the discovered targets it matches their HTTP client
// settings: every criterion set must hold (name, a glob on the target's
// name; url_prefix; labels, each equal), and the first entry that matches
// wins. A discovered target never takes credentials from its source.
type SDCredential struct {
	// Server is the exact name a source knows the target by (a registry
	// server's name, such as io.github.acme/crm): unlike a glob on the
	// generated target name it cannot match a look-alike.
	Server     string            `yaml:"server,omitempty"`
	Name       string            `yaml:"name,omitempty"`
	URLPrefix  string            `yaml:"url_prefix,omitempty"`
	Labels     map[string]string `yaml:"labels,omitempty"`
	HTTPClient HTTPClient        `yaml:"http_client,omitempty"`
	// OAuth is the machine identity the matched targets present
	// (docs/authentication.md).
	OAuth OAuth `yaml:"oauth,omitempty"`
}

// plainSDCredential is SDCredential without its methods.
type plainSDCredential SDCredential

// UnmarshalYAML decodes the entry with driftd's HTTP client defaults.
func (s *SDCredential) UnmarshalYAML(unmarshal func(any) error) error {
	*s = SDCredential{HTTPClient: DefaultHTTPClient()}
	err := unmarshal((*plainSDCredential)(s))
	return withHTTPClientError(unmarshal, &s.HTTPClient, err)
}

// matches reports whether the entry applies to t.
func (s *SDCredential) matches(t *Target, identity string) bool {
	if s.Server != "" && s.Server != identity {
		return false
	}
	if s.Name != "" {
		if ok, _ := path.Match(s.Name, t.Name); !ok {
			return false
		}
	}
	if s.URLPrefix != "" && !HasURLPrefix(t.URL, s.URLPrefix) {
		return false
	}
	for k, v := range s.Labels {
		if got, ok := t.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// HasURLPrefix reports whether u starts with prefix at a boundary: the
// prefix ends in /, or what follows it in u starts with /, ? or nothing.
// https://mcp.example.com must not match https://mcp.example.com.evil.net.
func HasURLPrefix(u, prefix string) bool {
	rest, ok := strings.CutPrefix(u, prefix)
	return ok && (strings.HasSuffix(prefix, "/") || rest == "" || rest[0] == '/' || rest[0] == '?')
}

// finishDiscovery checks the discovery blocks and resolves their paths.
func (c *Config) finishDiscovery(col *collector, dir string) {
	sources := map[string]string{} // source label → field of the first block with it
	source := func(at, label string) []issue {
		if first, dup := sources[label]; dup {
			return []issue{{"", fmt.Sprintf("watches what %s (line %d) watches (%s): merge them", first, col.pos.line(first), label)}}
		}
		sources[label] = at
		return nil
	}
	for i, g := range c.TargetFiles {
		at := fmt.Sprintf("target_files[%d]", i)
		var is issues
		switch _, err := filepath.Match(g, ""); {
		case g == "":
			is.add("", "empty: a glob of target files, such as targets/*.yml")
		case err != nil:
			is.add("", "%q: %v", g, err)
		case hasMeta(filepath.Dir(g)):
			is.add("", "%q: only the file name may hold *, ? or [ ]: driftd watches the directory", g)
		}
		c.TargetFiles[i] = promconfig.JoinDir(dir, g)
		col.add(at, append(is, source(at, "file:"+c.TargetFiles[i])...))
	}
	for i := range c.KubernetesSD {
		k, at := &c.KubernetesSD[i], fmt.Sprintf("kubernetes_sd[%d]", i)
		var is issues
		for j, ns := range k.Namespaces {
			if !kubernetesName(ns) {
				is.add(fmt.Sprintf("namespaces[%d]", j), "%q is not a namespace name", ns)
			}
		}
		is = append(is, checkLabels(k.Labels)...)
		k.Kubeconfig = promconfig.JoinDir(dir, k.Kubeconfig)
		col.add(at, append(is, source(at, k.Source())...))
	}
	for i := range c.RegistrySD {
		r, at := &c.RegistrySD[i], fmt.Sprintf("registry_sd[%d]", i)
		is := r.settle(dir)
		col.add(at, append(is, source(at, r.Source())...))
	}
	for i := range c.SDCredentials {
		s, at := &c.SDCredentials[i], fmt.Sprintf("sd_credentials[%d]", i)
		var is issues
		if s.Server == "" && s.Name == "" && s.URLPrefix == "" && len(s.Labels) == 0 {
			is.add("", "matches every discovered target: give server, name, url_prefix or labels")
		}
		if _, err := path.Match(s.Name, ""); err != nil {
			is.add("name", "%q: %v", s.Name, err)
		}
		if s.URLPrefix != "" {
			if err := CheckTargetURL(s.URLPrefix); err != nil {
				is.add("url_prefix", "%v", err)
			}
		}
		if s.HTTPClient.FollowRedirects {
			is.add("http_client.follow_redirects", "must be false: driftd never follows redirects")
		}
		if err := s.HTTPClient.Validate(); err != nil {
			is.add("http_client", "%v", err)
		}
		is = append(is, s.OAuth.check(&s.HTTPClient)...)
		s.HTTPClient.SetDirectory(dir)
		s.OAuth.SetDirectory(dir)
		col.add(at, is)
	}
}

// settle applies the block's defaults, checks it and resolves its paths.
func (r *RegistrySD) settle(dir string) []issue {
	var is issues
	if err := CheckTargetURL(r.URL); err != nil {
		is.add("url", "%v", err)
	}
	if r.RefreshInterval == 0 {
		r.RefreshInterval = DefaultSDRefreshInterval
	}
	if r.Timeout == 0 {
		r.Timeout = DefaultSDTimeout
	}
	if r.MaxResponseBytes.IsZero() {
		r.MaxResponseBytes = ByteSize{n: DefaultSDMaxResponseBytes, src: "4MiB"}
	}
	if r.MaxPages == 0 {
		r.MaxPages = DefaultSDMaxPages
	}
	if r.MaxTargets == 0 {
		r.MaxTargets = DefaultSDMaxTargets
	}
	switch {
	case r.RefreshInterval < time.Second:
		is.add("refresh_interval", "%v must be at least 1s", r.RefreshInterval)
	case r.Timeout <= 0:
		is.add("timeout", "%v must be positive", r.Timeout)
	}
	if r.MaxResponseBytes.Bytes() < 1024 {
		is.add("max_response_bytes", "%d must be at least 1024 (1KiB)", r.MaxResponseBytes.Bytes())
	}
	if r.MaxPages < 1 {
		is.add("max_pages", "%d must be at least 1", r.MaxPages)
	}
	if r.MaxTargets < 1 {
		is.add("max_targets", "%d must be at least 1", r.MaxTargets)
	}
	if r.HTTPClient.FollowRedirects {
		is.add("http_client.follow_redirects", "must be false: driftd never follows redirects")
	}
	if err := r.HTTPClient.Validate(); err != nil {
		is.add("http_client", "%v", err)
	}
	is = append(is, checkLabels(r.Labels)...)
	r.ManifestsDir = promconfig.JoinDir(dir, r.ManifestsDir)
	r.HTTPClient.SetDirectory(dir)
	return is
}

func checkLabels(labels map[string]string) []issue {
	var is issues
	for _, name := range slices.Sorted(maps.Keys(labels)) {
		if msg := checkLabel(name); msg != "" {
			is.add("labels."+name, "%s", msg)
		}
	}
	return is
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// kubernetesName reports whether s is a DNS-1123 label, as namespace names are.
func kubernetesName(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// MaxTargetNameLen is the longest valid target name.
const MaxTargetNameLen = 63

// ParseTargetFile decodes b, the target file at path (a list of targets in
// the schema of targets:), strictly, and checks each target as Parse does
// (with the default global values; Discovered applies the running ones).
// Paths resolve against the file's directory, and a manifest must be
// under root (the main config's directory; the file's own when empty). A
// target file carries no credentials: those come from sd_credentials.
// Errors are FILE:LINE: [i].FIELD.
func ParseTargetFile(b []byte, path, root string) ([]Target, error) {
	var ts List[Target]
	col, err := decode(b, path, "a target file", &ts, reflect.TypeFor[List[Target]]())
	if err != nil {
		return nil, err
	}
	dir := dirOf(path)
	if root == "" {
		root = dir
	}
	g := DefaultGlobal()
	seen := map[string]int{}
	for i := range ts {
		check := ts[i] // checked with the defaults; kept without them
		is := g.settle(&check, dir)
		if ts[i].Credentials().Any() {
			is = append(is, issue{"http_client", "carries credentials: a discovered target's credentials come from sd_credentials in the main config"})
		}
		if check.Manifest != "" && !within(root, check.Manifest) {
			is = append(is, issue{"manifest", fmt.Sprintf("must be under %s, the main config's directory: a target file names manifests, not any file driftd can read", root)})
		}
		if first, dup := seen[check.Name]; dup && check.Name != "" {
			is = append(is, issue{"name", fmt.Sprintf("%q is already used at line %d", check.Name, col.pos.line(fmt.Sprintf("[%d].name", first)))})
		} else {
			seen[check.Name] = i
		}
		col.add(fmt.Sprintf("[%d]", i), is)
		ts[i].Manifest, ts[i].HTTPClient = check.Manifest, check.HTTPClient
	}
	if err := col.err(); err != nil {
		return nil, err
	}
	return ts, nil
}

// within reports whether path, once cleaned, is dir or below it. A
// symlink inside dir may still point out of it: whoever can write in the
// directory can also write the manifest itself.
func within(dir, path string) bool {
	dir, derr := filepath.Abs(dir)
	path, perr := filepath.Abs(path)
	if derr != nil || perr != nil {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Found is a target as a discovery source found it.
type Found struct {
	Target Target
	// Origin says where it came from (file:PATH, registry:URL, …).
	Origin string
	// Identity is what the source names it by, exactly (a registry
	// server's name), for sd_credentials' server criterion.
	Identity string
	// RequiredHeaders are headers the source says the server requires.
	RequiredHeaders []string
}

// Discovered returns f's target as the running configuration probes it:
// credentials from the first sd_credentials entry that matches (any the
// source set are an error), the global values, the host rules, checked
// like a written target. A header the source says is required must be
// sent by those credentials. The error names the origin and each field.
func (c *Config) Discovered(f Found) (Target, error) {
	t := f.Target
	t.Labels = maps.Clone(t.Labels)
	if t.Credentials().Any() {
		return t, fmt.Errorf("%s: target %q: http_client: carries credentials from its source; they come from sd_credentials", f.Origin, t.Name)
	}
	for i := range c.SDCredentials {
		if s := &c.SDCredentials[i]; s.matches(&t, f.Identity) {
			t.HTTPClient, t.OAuth = s.HTTPClient, s.OAuth
			break
		}
	}
	is := c.Global.settle(&t, "")
	sent := t.Credentials().Headers
	for _, h := range f.RequiredHeaders {
		if !slices.ContainsFunc(sent, func(s string) bool { return strings.EqualFold(s, h) }) {
			is = append(is, issue{"http_client", fmt.Sprintf("the source says the server requires header %q, and no sd_credentials entry that matches sends it", h)})
		}
	}
	if len(is) == 0 {
		return t, nil
	}
	errs := make([]error, len(is))
	for i, x := range is {
		errs[i] = fmt.Errorf("%s: target %q: %s: %s", f.Origin, t.Name, x.field, x.msg)
	}
	return t, errors.Join(errs...)
}
