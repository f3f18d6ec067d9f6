// Command release assembles what `make release` ships, from the binaries
// the Makefile cross-compiled into the dist directory:
//
//   - image/: an OCI image layout holding a multi-platform image index
//     (linux/amd64 and linux/arm64, the ociimage layout) tagged v{VERSION};
//   - driftd-{VERSION}.tgz: the Helm chart, packaged with the helm library,
//     version and appVersion {VERSION}, so its default image is that tag;
//   - sha256sums.txt: `sha256sum -c` over every file of dist.
//
// Every time inside is -created (SOURCE_DATE_EPOCH), so one commit gives
// the same bytes on every machine with the same CA bundle.
//
//	cd deploy/validate && go run ./cmd/release -dist ../../dist -version 0.2.0 \
//	  -revision "$(git rev-parse HEAD)" -created "$(git log -1 --format=%ct)"
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/driftd/driftd/deploy/validate/ociimage"
)

// ImageDir is the OCI layout's directory inside dist.
const ImageDir = "image"

func main() {
	dist := flag.String("dist", "../../dist", "the release directory, holding driftd-linux-amd64 and driftd-linux-arm64")
	chartDir := flag.String("chart", "../helm/driftd", "the Helm chart to package")
	certs := flag.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle the image ships")
	version := flag.String("version", "", "the release's version, without the v (the VERSION file)")
	revision := flag.String("revision", "unknown", "the source revision")
	created := flag.Int64("created", 0, "every file's and the image's time, in Unix seconds (SOURCE_DATE_EPOCH)")
	flag.Parse()
	if err := run(*dist, *chartDir, *certs, *version, *revision, time.Unix(*created, 0).UTC()); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(dist, chartDir, certs, version, revision string, created time.Time) error {
	if version == "" || strings.HasPrefix(version, "v") {
		return fmt.Errorf("-version %q: want the VERSION file's, e.g. 0.2.0", version)
	}
	tag := "v" + version
	idx, err := ociimage.Index(ociimage.Options{CACerts: certs, Version: tag, Revision: revision, Created: created},
		filepath.Join(dist, "driftd-linux-amd64"), filepath.Join(dist, "driftd-linux-arm64"))
	if err != nil {
		return err
	}
	if err := ociimage.WriteLayout(filepath.Join(dist, ImageDir), idx, tag); err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: index %s tagged %s\n", filepath.Join(dist, ImageDir), d, tag)
	pkg, err := packageChart(chartDir, dist, version, created)
	if err != nil {
		return err
	}
	fmt.Println("wrote", pkg)
	sums, err := writeChecksums(dist)
	if err != nil {
		return err
	}
	fmt.Println("wrote", sums)
	return nil
}

// packageChart is `helm package --version V --app-version V` through the
// helm library, with every file's time set to created: helm stamps the
// times it loaded from disk, which a fresh clone sets to the checkout's.
func packageChart(dir, dist, version string, created time.Time) (string, error) {
	c, err := loader.LoadDir(dir)
	if err != nil {
		return "", err
	}
	c.Metadata.Version, c.Metadata.AppVersion = version, version
	stamp(c, created)
	return chartutil.Save(c, dist)
}

func stamp(c *chart.Chart, t time.Time) {
	c.ModTime, c.SchemaModTime = t, t
	for _, fs := range [][]*common.File{c.Raw, c.Templates, c.Files} {
		for _, f := range fs {
			f.ModTime = t
		}
	}
	for _, dep := range c.Dependencies() {
		stamp(dep, t)
	}
}

// writeChecksums writes dist/sha256sums.txt in sha256sum's format over
// every regular file directly in dist, sorted by name.
func writeChecksums(dist string) (string, error) {
	entries, err := os.ReadDir(dist)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	names := []string{}
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != "sha256sums.txt" {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, n := range names {
		sum, err := fileSHA256(filepath.Join(dist, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	out := filepath.Join(dist, "sha256sums.txt")
	return out, os.WriteFile(out, []byte(b.String()), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
