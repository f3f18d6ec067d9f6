// Package ociimage builds driftd's container image without a container
// engine: one layer holding the static binary, the CA certificates, a
// passwd entry for the non-root user and the state directory, on no base
// image (so no shell), configured as the Dockerfile's runtime stage is.
// Write puts it in a tar that is both an OCI image layout (skopeo's
// oci-archive:) and a `docker save` archive (crane push, docker load).
package ociimage

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The layout of the image: the same paths, user and port as the
// Dockerfile's runtime stage.
const (
	BinaryPath  = "/usr/local/bin/driftd"
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
	StateDir    = "/var/lib/driftd"
	UID         = 65532
	Port        = "9820/tcp"
	ConfigFile  = "/etc/driftd/driftd.yml"
	Source      = "https://github.com/driftd/driftd"
	License     = "Apache-2.0"
)

// Options says what goes into the image.
type Options struct {
	Binary   string    // a static driftd binary
	CACerts  string    // a PEM bundle, e.g. Debian's /etc/ssl/certs/ca-certificates.crt
	Version  string    // org.opencontainers.image.version
	Revision string    // org.opencontainers.image.revision
	Created  time.Time // the image's and every file's time: the commit's, for reproducible images
}

// Build assembles the image.
func Build(o Options) (v1.Image, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	arch, err := staticArch(o.Binary)
	if err != nil {
		return nil, err
	}
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w (Debian: apt-get install ca-certificates)", err)
	}
	fs, err := layerTar(o.Created, bin, certs)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(fs)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	labels := Labels(o.Version, o.Revision, o.Created)
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: arch,
		OS:           "linux",
		Created:      v1.Time{Time: o.Created},
		Config: v1.Config{
			User:         fmt.Sprintf("%d:%d", UID, UID),
			Entrypoint:   []string{BinaryPath},
			Cmd:          []string{"run", "--config.file", ConfigFile},
			ExposedPorts: map[string]struct{}{Port: {}},
			Env:          []string{"PATH=/usr/local/bin", "SSL_CERT_FILE=" + CACertsPath},
			WorkingDir:   "/",
			Labels:       labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "make image (deploy/validate/ociimage)"},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

// Labels are the OCI annotations the image carries, as config labels and
// as manifest annotations.
func Labels(version, revision string, created time.Time) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "driftd",
		"org.opencontainers.image.description": "Probes MCP servers for drift and exports Prometheus metrics",
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.url":         Source,
		"org.opencontainers.image.version":     version,
		"org.opencontainers.image.revision":    revision,
		"org.opencontainers.image.created":     created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses":    License,
	}
}

// staticArch returns the GOARCH of a statically linked Linux ELF binary,
// and refuses a dynamically linked one: the image has no C library.
func staticArch(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%s is dynamically linked: build it with CGO_ENABLED=0 (make build)", path)
		}
	}
	if f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		return "", fmt.Errorf("%s: not a Linux binary (%v)", path, f.OSABI)
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_386:
		return "386", nil
	case elf.EM_ARM:
		return "arm", nil
	case elf.EM_PPC64:
		return "ppc64le", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	}
	return "", fmt.Errorf("%s: machine %v has no GOARCH here", path, f.Machine)
}

// layerTar is the image's one filesystem layer, every entry stamped with
// the same time and owner so that the same inputs give the same digest.
func layerTar(mtime time.Time, bin, certs []byte) ([]byte, error) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	entry := func(name string, mode int64, uid int, body []byte, dir bool) error {
		h := &tar.Header{Name: name, Mode: mode, Uid: uid, Gid: uid, ModTime: mtime, Format: tar.FormatPAX}
		if dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", UID, UID)
	group := fmt.Sprintf("root:x:0:\nnobody:x:65534:\nnonroot:x:%d:\n", UID)
	for _, e := range []struct {
		name string
		mode int64
		uid  int
		body []byte
		dir  bool
	}{
		{"etc/", 0o755, 0, nil, true},
		{"etc/passwd", 0o644, 0, []byte(passwd), false},
		{"etc/group", 0o644, 0, []byte(group), false},
		{"etc/ssl/", 0o755, 0, nil, true},
		{"etc/ssl/certs/", 0o755, 0, nil, true},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, 0, certs, false},
		{"home/", 0o755, 0, nil, true},
		{"home/nonroot/", 0o700, UID, nil, true},
		{"tmp/", 0o1777, 0, nil, true},
		{"usr/", 0o755, 0, nil, true},
		{"usr/local/", 0o755, 0, nil, true},
		{"usr/local/bin/", 0o755, 0, nil, true},
		{"usr/local/bin/driftd", 0o755, 0, bin, false},
		{"var/", 0o755, 0, nil, true},
		{"var/lib/", 0o755, 0, nil, true},
		{"var/lib/driftd/", 0o755, UID, nil, true},
	} {
		if err := entry(e.name, e.mode, e.uid, e.body, e.dir); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
