package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"time"

	promconfig "github.com/prometheus/common/config"
	"gopkg.in/yaml.v3"
)

// Config is a driftd configuration file, decoded, checked and with the
// global values applied to every target.
type Config struct {
	Global  Global       `yaml:"global"`
	Targets List[Target] `yaml:"targets"`
	// TargetFiles, KubernetesSD and RegistrySD discover more targets
	// (docs/discovery.md); SDCredentials give discovered targets their
	// credentials, which never come from the source.
	TargetFiles   []string           `yaml:"target_files,omitempty"`
	KubernetesSD  List[KubernetesSD] `yaml:"kubernetes_sd,omitempty"`
	RegistrySD    List[RegistrySD]   `yaml:"registry_sd,omitempty"`
	SDCredentials List[SDCredential] `yaml:"sd_credentials,omitempty"`
	// Tracing is where spans go (tracing.go).
	Tracing TracingConfig `yaml:"tracing,omitempty"`

	// Path is the file it was read from, as given.
	Path string `yaml:"-"`
	// Checksum is the SHA-256 of the file's bytes, in hex, for reload logs.
	Checksum string `yaml:"-"`

	file string     // Path, or <config>, as errors name it
	pos  *positions // where each field is written, for Problem
	// warnings are FILE:LINE: FIELD: messages about what still works but
	// should change (Warnings).
	warnings []string
}

// ForgetPositions drops the index of where each field is written, which
// only errors read: about a kilobyte a target, kept for as long as a
// daemon runs the configuration. Problem then places errors at line 0.
func (c *Config) ForgetPositions() { c.pos = nil }

// Problem is an error about field (e.g. targets[1].manifest) found after
// Parse, such as a manifest that does not load, placed like Parse's own.
func (c *Config) Problem(field string, err error) *Error {
	line := 0
	if c.pos != nil {
		line = c.pos.line(field)
	}
	return &Error{File: c.file, Line: line, Field: field, Msg: err.Error()}
}

// Global holds the settings for the whole daemon, and the defaults a
// target inherits (schedule, timeout, max_list_pages, max_response_bytes,
// max_run_bytes).
type Global struct {
	Schedule         Schedule      `yaml:"schedule"`
	Timeout          time.Duration `yaml:"timeout"`
	MaxListPages     int           `yaml:"max_list_pages"`
	MaxResponseBytes ByteSize      `yaml:"max_response_bytes"`
	MaxRunBytes      ByteSize      `yaml:"max_run_bytes"`
	Concurrency      int           `yaml:"concurrency"`
	// MaxInflightBytes bounds the response bytes every run in flight holds
	// together (mcp.Pool). Unset, the daemon takes a quarter of its
	// container's memory limit, or no bound when it finds none.
	MaxInflightBytes   ByteSize `yaml:"max_inflight_bytes,omitempty"`
	StateDir           string   `yaml:"state_dir"`
	PerToolSeriesLimit int      `yaml:"per_tool_series_limit"`
	// OTLPEndpoint is deprecated: Parse moves it to Tracing.Endpoint.
	OTLPEndpoint string `yaml:"otlp_endpoint,omitempty"`
	// Classification rules are checked before the built-in host rules.
	Classification ClassificationRules `yaml:"classification,omitempty"`
	// StateRetention is how long the state of a target that vanished is
	// kept (retention.go).
	StateRetention Retention `yaml:"state_retention"`
	// MaxDiscoveredTargets bounds the targets every discovery source
	// together may add; those past it are rejected, counted and logged.
	MaxDiscoveredTargets int `yaml:"max_discovered_targets"`
}

// DefaultGlobal returns the global section of an empty file.
func DefaultGlobal() Global {
	return Global{
		Schedule:             defaultSchedule(),
		Timeout:              DefaultTimeout,
		MaxListPages:         DefaultMaxListPages,
		MaxResponseBytes:     ByteSize{n: DefaultMaxResponseBytes, src: "16MiB"},
		MaxRunBytes:          ByteSize{n: DefaultMaxRunBytes, src: "64MiB"},
		Concurrency:          DefaultConcurrency,
		StateDir:             DefaultStateDir,
		PerToolSeriesLimit:   DefaultPerToolSeriesLimit,
		StateRetention:       DefaultStateRetention,
		MaxDiscoveredTargets: DefaultMaxDiscoveredTargets,
	}
}

// DefaultMaxDiscoveredTargets bounds the discovered targets of one
// daemon (docs/discovery.md, "Bounds").
const DefaultMaxDiscoveredTargets = 50000

// Load reads and parses the config file at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// Parse decodes b, the contents of the file at path, strictly: unknown
// keys are errors. Paths in it are relative to path's directory. The error
// lists every problem found, joined, each an *Error. An empty file is valid
// and has no targets.
//
// When the file decoded but failed validation, the decoded Config comes
// back with the error, for a checker that reports more in the same pass
// (`driftd config check` also loads the manifests); it must never run.
func Parse(b []byte, path string) (*Config, error) {
	sum := sha256.Sum256(b)
	c := &Config{Global: DefaultGlobal(), Tracing: DefaultTracingConfig(), Path: path, Checksum: hex.EncodeToString(sum[:])}
	file := path
	if file == "" {
		file = "<config>"
	}
	c.file = file
	col, err := decode(b, file, "a config file", c, reflect.TypeFor[Config]())
	if err != nil {
		return nil, err
	}
	c.pos = col.pos
	c.finish(col, dirOf(path))
	if err := col.err(); err != nil {
		return c, err
	}
	return c, nil
}

// decode decodes b, the file named file, strictly into v, whose file shape
// is root. A syntax error or a second document is the one error returned:
// the file means nothing. What yaml could not decode is in the collector,
// with positions for the checks that follow.
func decode(b []byte, file, kind string, v any, root reflect.Type) (*collector, error) {
	col := &collector{file: file, pos: &positions{}}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	// A *yaml.TypeError still decoded the rest; anything else is a file
	// that is not YAML. io.EOF is an empty file.
	var te *yaml.TypeError
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) && !errors.As(err, &te) {
		return nil, syntaxError(file, b, err)
	}
	var extra yaml.Node
	switch more := dec.Decode(&extra); {
	case more == nil:
		return nil, &Error{File: file, Line: extra.Line, Msg: kind + " holds one YAML document; found another"}
	case !errors.Is(more, io.EOF):
		return nil, syntaxError(file, b, more)
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) == nil {
		col.pos = indexPositions(&doc, root)
	}
	if te != nil {
		for _, s := range te.Errors {
			col.decodeError(s)
		}
	}
	return col, nil
}

func dirOf(path string) string {
	dir := filepath.Dir(path)
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}

// finish checks the decoded file, applies the global values to the
// targets and resolves paths against dir.
func (c *Config) finish(col *collector, dir string) {
	g := &c.Global
	col.add("global", g.check())
	g.StateDir = promconfig.JoinDir(dir, g.StateDir)

	seen := map[string]int{} // name → index of the target that has it
	for i := range c.Targets {
		t, at := &c.Targets[i], fmt.Sprintf("targets[%d]", i)
		is := g.settle(t, dir)
		if first, dup := seen[t.Name]; dup && t.Name != "" {
			is = append(is, issue{"name", fmt.Sprintf("%q is already used at line %d", t.Name, col.pos.line(fmt.Sprintf("targets[%d].name", first)))})
		} else {
			seen[t.Name] = i
		}
		col.add(at, is)
	}
	c.finishDiscovery(col, dir)
	c.finishTracing(col, dir)
}

// settle gives t the global values it does not set, checks it, and
// resolves its paths against dir: what every target goes through, written
// in the config, in a target file or discovered.
func (g *Global) settle(t *Target, dir string) []issue {
	inherited := g.inherit(t)
	var is []issue
	for _, x := range t.check() {
		// An inherited value's problem is reported once, at global.
		if !inherited[x.field] {
			is = append(is, x)
		}
	}
	switch {
	case t.Baseline != "" && t.Baseline != BaselineFirstSeen:
		is = append(is, issue{"baseline", fmt.Sprintf("%q is not a baseline mode (the one mode is %q)", t.Baseline, BaselineFirstSeen)})
	case t.Baseline != "" && t.Manifest != "":
		is = append(is, issue{"baseline", "set together with manifest: a target is compared against its manifest or against a baseline, not both"})
	case t.Manifest == "" && t.Baseline == "":
		is = append(is, issue{"manifest", "required: the manifest the server is compared against (or baseline: first_seen to take the first served surface as the baseline)"})
	}
	if t.Manifest != "" {
		t.Manifest = promconfig.JoinDir(dir, t.Manifest)
	}
	t.HTTPClient.SetDirectory(dir)
	t.OAuth.SetDirectory(dir)
	if l := t.OAuth.Login; l != nil {
		// A copy: an sd_credentials entry's block is shared by the
		// targets it matches.
		c := *l
		c.StateFile = filepath.Join(g.StateDir, "sessions", t.Name+".json")
		t.OAuth.Login = &c
	}
	t.Classification = slices.Clone(g.Classification)
	return is
}

// inherit gives t's unset fields the global values, and says which.
func (g *Global) inherit(t *Target) map[string]bool {
	inherited := map[string]bool{}
	if t.Schedule.IsZero() {
		t.Schedule, inherited["schedule"] = g.Schedule, true
	}
	if t.Timeout == 0 {
		t.Timeout, inherited["timeout"] = g.Timeout, true
	}
	if t.MaxListPages == 0 {
		t.MaxListPages, inherited["max_list_pages"] = g.MaxListPages, true
	}
	if t.MaxResponseBytes.IsZero() {
		t.MaxResponseBytes, inherited["max_response_bytes"] = g.MaxResponseBytes, true
	}
	if t.MaxRunBytes.IsZero() {
		t.MaxRunBytes, inherited["max_run_bytes"] = g.MaxRunBytes, true
	}
	return inherited
}

// Redacted returns the effective config (defaults applied, paths resolved)
// as YAML, every secret printed as <secret>. It parses back as a config.
func (c *Config) Redacted() ([]byte, error) {
	if promconfig.MarshalSecretValue {
		// A process-wide switch in prometheus/common; honouring it here
		// would put credentials on the /config page.
		return nil, errors.New("config: prometheus/common's MarshalSecretValue is set; refusing to print secrets")
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
