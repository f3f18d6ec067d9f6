package validate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/driftd/driftd/deploy/validate/ociimage"
)

// key="value" or key=value in a LABEL instruction.
var labelPair = regexp.MustCompile(`([\w.-]+)=("[^"]*"|\S+)`)

// The Dockerfile cannot be built here (no container engine); these checks
// read it as text: the stages, the build command and the final image's
// user, port, entrypoint and default command.

type instruction struct {
	cmd  string // upper case
	args string
}

func readDockerfile(t *testing.T) []instruction {
	t.Helper()
	raw, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(trimmed, "#") {
			continue // a comment inside a continued instruction
		}
		if s, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatal("Dockerfile ends inside a continued line")
	}
	return out
}

func TestDockerfile(t *testing.T) {
	ins := readDockerfile(t)
	var stages [][]instruction
	for _, in := range ins {
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("%s before the first FROM", in.cmd)
			}
			continue
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) != 2 {
		t.Fatalf("%d stages, want 2 (builder, runtime)", len(stages))
	}
	image := func(from string) string {
		f := strings.Fields(from)
		for len(f) > 0 && strings.HasPrefix(f[0], "--") {
			f = f[1:]
		}
		return f[0]
	}
	if img := image(stages[0][0].args); img != "golang:1.26" && !strings.HasPrefix(img, "golang:1.26.") {
		t.Errorf("builder image %q, want golang:1.26", img)
	}
	if img := image(stages[1][0].args); img != "gcr.io/distroless/static-debian12:nonroot" {
		t.Errorf("runtime image %q, want gcr.io/distroless/static-debian12:nonroot", img)
	}

	// The builder: build args and the static, trimmed, stamped build.
	args := map[string]bool{}
	var build string
	for _, in := range stages[0] {
		if in.cmd == "ARG" {
			name, _, _ := strings.Cut(in.args, "=")
			args[name] = true
		}
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	for _, a := range []string{"VERSION", "REVISION", "BRANCH"} {
		if !args[a] {
			t.Errorf("builder stage has no ARG %s", a)
		}
	}
	for _, want := range []string{
		"CGO_ENABLED=0", "-trimpath", "-tags netgo", "-s -w",
		"-X " + promVersion + ".Version=${VERSION}", "-X " + promVersion + ".Revision=${REVISION}",
		"-X " + promVersion + ".Branch=${BRANCH}", "./cmd/driftd",
	} {
		if !strings.Contains(build, want) {
			t.Errorf("go build %q lacks %q", build, want)
		}
	}

	// The runtime: the layout of the image `make image` builds
	// (ociimage): non-root, the port, driftd as entrypoint, run as default,
	// the binary and the state directory where the image has them, the
	// same OCI labels.
	last := map[string]string{}
	var copied []string
	labels := map[string]string{}
	for _, in := range stages[1] {
		last[in.cmd] = in.args
		switch in.cmd {
		case "RUN":
			t.Errorf("RUN in the distroless stage: it has no shell")
		case "COPY":
			f := strings.Fields(in.args)
			copied = append(copied, f[len(f)-1])
		case "LABEL":
			for _, m := range labelPair.FindAllStringSubmatch(in.args, -1) {
				labels[m[1]] = strings.Trim(m[2], `"`)
			}
		}
	}
	if u, want := last["USER"], fmt.Sprintf("%d:%d", ociimage.UID, ociimage.UID); u != want {
		t.Errorf("USER %q, want %s as the image has", u, want)
	}
	if p := last["EXPOSE"]; p+"/tcp" != ociimage.Port {
		t.Errorf("EXPOSE %q, want %s", p, ociimage.Port)
	}
	var entry, cmd []string
	if err := json.Unmarshal([]byte(last["ENTRYPOINT"]), &entry); err != nil || !slices.Equal(entry, []string{ociimage.BinaryPath}) {
		t.Errorf("ENTRYPOINT %q: want the exec form [%q] (%v)", last["ENTRYPOINT"], ociimage.BinaryPath, err)
	}
	if err := json.Unmarshal([]byte(last["CMD"]), &cmd); err != nil || !slices.Equal(cmd, []string{"run", "--config.file", configFile}) || configFile != ociimage.ConfigFile {
		t.Errorf("CMD %q: want [\"run\", \"--config.file\", %q] (%v)", last["CMD"], configFile, err)
	}
	for _, p := range []string{ociimage.BinaryPath, ociimage.StateDir} {
		if !slices.Contains(copied, p) {
			t.Errorf("the runtime stage copies to %v, not to %s", copied, p)
		}
	}
	for k, v := range ociimage.Labels("v${VERSION}", "${REVISION}", time.Time{}) {
		if k == "org.opencontainers.image.created" {
			continue // a docker build stamps its own time
		}
		if labels[k] != v {
			t.Errorf("LABEL %s=%q, want %q as the image has", k, labels[k], v)
		}
	}

}

// .dockerignore keeps the repository's junk out of the build context, but
// nothing the build needs: the embedded demo files included.
func TestDockerignore(t *testing.T) {
	raw, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(raw), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, strings.TrimSuffix(strings.TrimPrefix(l, "/"), "/"))
		}
	}
	ignored := func(p string) bool {
		for _, pat := range patterns {
			pat = strings.TrimPrefix(pat, "**/")
			for _, cand := range []string{p, filepath.Base(p), strings.Split(p, "/")[0]} {
				if ok, _ := filepath.Match(pat, cand); ok {
					return true
				}
			}
		}
		return false
	}
	for _, must := range []string{".git", "bin", "data"} {
		if !ignored(must) {
			t.Errorf(".dockerignore does not exclude %s", must)
		}
	}
	for _, need := range []string{"go.mod", "go.sum", "cmd/driftd/main.go", "internal", "embed.go", "config.example.yaml", "examples/manifests/orders.json"} {
		if ignored(need) {
			t.Errorf(".dockerignore excludes %s, which the build needs", need)
		}
	}
}
