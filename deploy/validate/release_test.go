package validate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	imagevalidate "github.com/google/go-containerregistry/pkg/v1/validate"
)

// repoVersion is the VERSION file: what the Makefile builds and releases.
func repoVersion(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(raw))
	if v == "" || strings.HasPrefix(v, "v") || strings.ContainsAny(v, " \n") {
		t.Fatalf("VERSION %q: want one version without a v, e.g. 0.2.0", raw)
	}
	return v
}

// The chart in the repository is the release's: version and appVersion
// are VERSION, and its default image is the tag `make release` builds.
func TestChartVersionIsVERSION(t *testing.T) {
	want := repoVersion(t)
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	checkChartRelease(t, "Chart.yaml", c, want)
}

// checkChartRelease: version and appVersion are version, and the defaults
// render a Deployment pulling v{version}.
func checkChartRelease(t *testing.T, where string, c *chartv2.Chart, version string) {
	t.Helper()
	if c.Metadata.Version != version || c.Metadata.AppVersion != version {
		t.Errorf("%s: version %q, appVersion %q: want both %q (the VERSION file)", where, c.Metadata.Version, c.Metadata.AppVersion, version)
	}
	out, err := renderLoaded(c, map[string]any{})
	if err != nil {
		t.Fatalf("%s: render: %v", where, err)
	}
	var images []string
	for f, body := range out {
		for _, doc := range splitYAML(t, f, body) {
			var d appsv1.Deployment
			if err := yaml.Unmarshal(doc, &d); err != nil || d.Kind != "Deployment" {
				continue
			}
			for _, ctr := range d.Spec.Template.Spec.Containers {
				images = append(images, ctr.Image)
			}
		}
	}
	if want := driftdImageRef + ":v" + version; !slices.Equal(images, []string{want}) {
		t.Errorf("%s: the default Deployment runs %q, want [%s]", where, images, want)
	}
}

// TestRelease reads back what `make release` wrote (DRIFTD_DIST, version
// DRIFTD_RELEASE_VERSION; by default ../../dist and the VERSION file),
// as a user and a registry would: the checksums, the binaries, the SBOMs,
// the image index and the packaged chart. Without a release it is skipped.
func TestRelease(t *testing.T) {
	dist, version := os.Getenv("DRIFTD_DIST"), os.Getenv("DRIFTD_RELEASE_VERSION")
	if dist == "" {
		dist = filepath.Join(repoRoot, "dist")
	}
	if version == "" {
		version = repoVersion(t)
	}
	if _, err := os.Stat(filepath.Join(dist, "sha256sums.txt")); err != nil {
		t.Skipf("no release in %s (make release): %v", dist, err)
	}
	tag := "v" + version
	sums := checkSums(t, dist)
	for _, p := range []string{"linux-amd64", "linux-arm64", "darwin-arm64"} {
		for _, f := range []string{"driftd-" + p, "driftd-" + p + ".cdx.json"} {
			if !slices.Contains(sums, f) {
				t.Errorf("sha256sums.txt lacks %s", f)
			}
		}
		checkSBOM(t, filepath.Join(dist, "driftd-"+p+".cdx.json"), tag, p)
	}
	checkReleaseBinary(t, filepath.Join(dist, "driftd-"+runtime.GOOS+"-"+runtime.GOARCH), version)
	checkReleaseIndex(t, filepath.Join(dist, "image"), tag)
	checkReleasePush(t, filepath.Join(dist, "image"), tag)

	pkg := filepath.Join(dist, "driftd-"+version+".tgz")
	if !slices.Contains(sums, filepath.Base(pkg)) {
		t.Errorf("sha256sums.txt lacks %s", filepath.Base(pkg))
	}
	c, err := loader.Load(pkg)
	if err != nil {
		t.Fatal(err)
	}
	checkChartRelease(t, pkg, c, version)
}

// checkSums verifies sha256sums.txt as `sha256sum -c` does and returns the
// names it lists.
func checkSums(t *testing.T, dist string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dist, "sha256sums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("sha256sums.txt: line %q", sc.Text())
		}
		body, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(body); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, sha256sums.txt says %s", name, got, sum)
		}
		names = append(names, name)
	}
	return names
}

// checkSBOM: a CycloneDX document describing driftd at the release's
// version for its platform (os-arch), listing the modules it was built from.
func checkSBOM(t *testing.T, path, tag, platform string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		BOMFormat, SpecVersion string
		Metadata               struct {
			Component struct{ Name, Version, Purl string }
		}
		Components []struct{ Name, Version string }
	}
	if err := json.Unmarshal(raw, &bom); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	mc := bom.Metadata.Component
	goos, goarch, _ := strings.Cut(platform, "-")
	if bom.BOMFormat != "CycloneDX" || mc.Name != "github.com/driftd/driftd" || mc.Version != tag ||
		!strings.HasPrefix(mc.Purl, "pkg:golang/github.com/driftd/driftd@"+tag+"?goarch="+goarch+"&goos="+goos+"&") {
		t.Errorf("%s: format %q, component %+v: want CycloneDX, github.com/driftd/driftd %s for %s/%s", path, bom.BOMFormat, mc, tag, goos, goarch)
	}
	if !slices.ContainsFunc(bom.Components, func(c struct{ Name, Version string }) bool {
		return c.Name == "github.com/prometheus/client_golang"
	}) {
		t.Errorf("%s lists %d components, not client_golang", path, len(bom.Components))
	}
}

// checkReleaseBinary runs this machine's release binary: the version
// without the v, its platform, the netgo tag, a static build.
func checkReleaseBinary(t *testing.T, bin, version string) {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		t.Logf("no release binary for %s/%s: not run", runtime.GOOS, runtime.GOARCH)
		return
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	for _, want := range []string{
		"driftd, version " + version + " (branch: ",
		"\n  build date:       ",
		"\n  platform:         " + runtime.GOOS + "/" + runtime.GOARCH + "\n",
		"\n  tags:             netgo",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("%s --version lacks %q:\n%s", bin, want, out)
		}
	}
}

// checkReleaseIndex opens the OCI layout as skopeo and crane do: one entry
// named tag, an image index of linux/amd64 and linux/arm64, each image
// valid, for its platform, labelled with the tag.
func checkReleaseIndex(t *testing.T, dir, tag string) {
	t.Helper()
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Manifests) != 1 || tm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != tag || !tm.Manifests[0].MediaType.IsIndex() {
		t.Fatalf("%s/index.json: %+v: want one image index named %s", dir, tm.Manifests, tag)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := imagevalidate.Index(idx); err != nil {
		t.Fatalf("the image index: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if v := im.Annotations["org.opencontainers.image.version"]; v != tag {
		t.Errorf("index annotation version %q, want %s", v, tag)
	}
	var platforms []string
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkImageConfig(t, img, d.Platform, tag)
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		platforms = append(platforms, cf.OS+"/"+cf.Architecture)
		bin := checkImageFiles(t, img, nil)
		if f, err := elf.NewFile(bytes.NewReader(bin)); err != nil || f.Machine != elfMachine[cf.Architecture] {
			t.Errorf("the %s image's driftd: %v, want an ELF binary for %s", cf.Architecture, err, cf.Architecture)
		}
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("the index holds %v, want linux/amd64 and linux/arm64", platforms)
	}
}

var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkReleasePush pushes the layout's one entry to a registry on loopback
// as `crane push DIR REF` does, and pulls the tag back as a runtime on each
// platform would.
func checkReleasePush(t *testing.T, dir, tag string) {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref, err := name.NewTag(strings.TrimPrefix(srv.URL, "http://")+"/driftd:"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := lp.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("%s: %v, %d entries", dir, err, len(m.Manifests))
	}
	idx, err := lp.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := remote.Image(ref, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: arch}))
		if err != nil {
			t.Fatalf("pull %s for linux/%s: %v", ref, arch, err)
		}
		if cf, err := img.ConfigFile(); err != nil || cf.Architecture != arch || cf.Config.Labels["org.opencontainers.image.version"] != tag {
			t.Errorf("pulled %s for linux/%s: %v, got %s labelled %q", ref, arch, err, cf.Architecture, cf.Config.Labels["org.opencontainers.image.version"])
		}
	}
}
