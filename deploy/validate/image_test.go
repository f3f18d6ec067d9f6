package validate

import (
	"archive/tar"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	imagevalidate "github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/driftd/driftd/deploy/validate/ociimage"
)

// TestImage opens the image tar as registry clients and runtimes read it:
// the one `make image` wrote (DRIFTD_IMAGE, with DRIFTD_IMAGE_VERSION the
// version it was stamped with), or else one built here, twice, from a
// fresh static driftd and a CA certificate made for the test.
func TestImage(t *testing.T) {
	file, version := os.Getenv("DRIFTD_IMAGE"), os.Getenv("DRIFTD_IMAGE_VERSION")
	var certs []byte
	if file == "" {
		file, version, certs = buildTestImage(t)
	}

	// The OCI image layout (skopeo's oci-archive:, podman load).
	dir := untar(t, file)
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("index.json lists %d manifests, want 1", len(im.Manifests))
	}
	desc := im.Manifests[0]
	if ref := desc.Annotations["io.containerd.image.name"]; !strings.HasPrefix(ref, "registry.example.com/driftd:") || !strings.HasSuffix(ref, ":"+desc.Annotations["org.opencontainers.image.ref.name"]) {
		t.Errorf("index.json annotations %v: want the tag as ref.name and the full reference as io.containerd.image.name", desc.Annotations)
	}
	img, err := lp.Image(desc.Digest)
	if err != nil {
		t.Fatal(err)
	}
	// Every digest, size and diff ID is what it says.
	if err := imagevalidate.Image(img); err != nil {
		t.Fatalf("the OCI layout's image: %v", err)
	}

	// The docker save archive in the same tar (crane push, docker load).
	dimg, err := tarball.ImageFromPath(file, nil)
	if err != nil {
		t.Fatalf("read as a docker archive: %v", err)
	}
	if err := imagevalidate.Image(dimg); err != nil {
		t.Fatalf("the docker archive's image: %v", err)
	}
	if a, b := configName(t, img), configName(t, dimg); a != b {
		t.Errorf("the OCI layout's config %s is not the docker archive's %s", a, b)
	}

	checkImageConfig(t, img, desc.Platform, version)
	bin := checkImageFiles(t, img, certs)

	// The binary is the static driftd, stamped with the version.
	cf, _ := img.ConfigFile()
	if cf.Architecture != runtime.GOARCH {
		t.Logf("image is %s, this machine %s: not running its binary", cf.Architecture, runtime.GOARCH)
		return
	}
	exe := filepath.Join(t.TempDir(), "driftd")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// The image's version is its tag (v0.2.0), the binary's without the v.
	out, err := exec.Command(exe, "version").CombinedOutput()
	if err != nil || (version != "" && !strings.Contains(string(out), "version "+strings.TrimPrefix(version, "v")+" ")) {
		t.Errorf("the image's driftd version: %v\n%s\nwant version %q", err, out, version)
	}
}

func configName(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	h, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkImageConfig: the user, entrypoint, command, port, environment and
// labels the Dockerfile's runtime stage has too.
func checkImageConfig(t *testing.T, img v1.Image, platform *v1.Platform, version string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || platform == nil || platform.OS != cf.OS || platform.Architecture != cf.Architecture {
		t.Errorf("os/arch %s/%s, index platform %+v", cf.OS, cf.Architecture, platform)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/usr/local/bin/driftd"}) {
		t.Errorf("entrypoint %q, want [/usr/local/bin/driftd]", c.Entrypoint)
	}
	if !slices.Equal(c.Cmd, []string{"run", "--config.file", configFile}) {
		t.Errorf("cmd %q, want run --config.file %s", c.Cmd, configFile)
	}
	if _, ok := c.ExposedPorts["9820/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("exposed ports %v, want 9820/tcp only", c.ExposedPorts)
	}
	if !slices.Contains(c.Env, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt") {
		t.Errorf("env %q lacks SSL_CERT_FILE", c.Env)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"source", "version", "revision", "licenses", "created"} {
		k = "org.opencontainers.image." + k
		if c.Labels[k] == "" || m.Annotations[k] != c.Labels[k] {
			t.Errorf("%s: label %q, manifest annotation %q: want both, equal", k, c.Labels[k], m.Annotations[k])
		}
	}
	if l := c.Labels["org.opencontainers.image.licenses"]; l != "Apache-2.0" {
		t.Errorf("licenses %q, want Apache-2.0", l)
	}
	if l := c.Labels["org.opencontainers.image.source"]; l != "https://github.com/driftd/driftd" {
		t.Errorf("source %q", l)
	}
	if version != "" && c.Labels["org.opencontainers.image.version"] != version {
		t.Errorf("version label %q, want %q", c.Labels["org.opencontainers.image.version"], version)
	}
}

// checkImageFiles walks the image's filesystem: the binary executable and
// static, a CA bundle of certificates, the state directory owned by the
// user, the user in /etc/passwd, and no shell anywhere. It returns the
// binary.
func checkImageFiles(t *testing.T, img v1.Image, certs []byte) []byte {
	t.Helper()
	files := map[string]*tar.Header{}
	var bin, bundle, passwd []byte
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := "/" + strings.TrimSuffix(path.Clean(h.Name), "/")
		files[name] = h
		var body *[]byte
		switch name {
		case "/usr/local/bin/driftd":
			body = &bin
		case "/etc/ssl/certs/ca-certificates.crt":
			body = &bundle
		case "/etc/passwd":
			body = &passwd
		}
		if body != nil {
			if *body, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
		if base := path.Base(name); slices.Contains([]string{"sh", "bash", "ash", "dash", "busybox"}, base) || strings.HasPrefix(name, "/bin") || strings.HasPrefix(name, "/sbin") {
			t.Errorf("%s in the image: it must have no shell", name)
		}
	}
	if h := files["/usr/local/bin/driftd"]; h == nil || h.Typeflag != tar.TypeReg || h.Mode&0o111 != 0o111 || len(bin) == 0 {
		t.Fatalf("/usr/local/bin/driftd: %+v, want an executable file", h)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		t.Errorf("/etc/ssl/certs/ca-certificates.crt holds no PEM certificate (%d bytes)", len(bundle))
	}
	if certs != nil && !bytes.Equal(bundle, certs) {
		t.Errorf("the image's CA bundle is not the one it was built with")
	}
	if h := files["/var/lib/driftd"]; h == nil || h.Typeflag != tar.TypeDir || h.Uid != 65532 {
		t.Errorf("/var/lib/driftd: %+v, want a directory owned by 65532", h)
	}
	if !strings.Contains(string(passwd), ":x:65532:65532:") {
		t.Errorf("/etc/passwd has no 65532 user:\n%s", passwd)
	}
	return bin
}

// buildTestImage builds the image from a fresh driftd twice with the same
// inputs, checks both come out the same, and returns the tar's path, the
// version and the CA bundle it carries.
func buildTestImage(t *testing.T) (string, string, []byte) {
	t.Helper()
	dir := t.TempDir()
	certs := testCA(t)
	certFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(certFile, certs, 0o644); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var digests []v1.Hash
	file := filepath.Join(dir, "driftd-image.tar")
	for range 2 {
		img, err := ociimage.Build(ociimage.Options{Binary: driftdBinary(t), CACerts: certFile, Version: testVersion, Revision: "validate", Created: created})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := ociimage.Write(f, img, "registry.example.com/driftd:"+testVersion, created); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds from the same inputs differ: %v", digests)
	}
	return file, testVersion, certs
}

// testCA is a PEM certificate made for the test, so the test needs no CA
// bundle on the machine.
func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "driftd validate CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// untar unpacks a tar of plain files and directories into a temporary
// directory, refusing paths that leave it.
func untar(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsLocal(h.Name) || h.Typeflag != tar.TypeReg {
			t.Fatalf("%s: entry %q (type %c): want plain files with local names", file, h.Name, h.Typeflag)
		}
		p := filepath.Join(dir, h.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
